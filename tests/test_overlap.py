"""Writes whose source overlaps the destination give the values the source had before
any write (numpy's and PyTorch's rule), on every device: setitem, in-place operators and
out= of unary and binary ops."""

from __future__ import annotations

import ember
import numpy as np
import pytest


def square(device):
    return ember.arange(9, device=device).to_dtype("float32").reshape(3, 3)


def row(device, n=6):
    return ember.arange(n, device=device).to_dtype("float32")


SETITEM_CASES = {
    "transpose": (lambda x: x, lambda x: x.T, square),
    "reverse": (lambda x: x, lambda x: x[::-1], row),
    "shift_right": (lambda x: x[1:], lambda x: x[:-1], row),
    "shift_left": (lambda x: x[:-1], lambda x: x[1:], row),
    "stepped_onto_dense": (lambda x: x[:3], lambda x: x[::2], row),
    "row_broadcast_over_all": (lambda x: x, lambda x: x[1], square),
    "column_into_row": (lambda x: x[0], lambda x: x[:, 2], square),
}


@pytest.mark.parametrize("case", sorted(SETITEM_CASES))
def test_setitem_reads_the_source_first(device, case):
    dst_of, src_of, make = SETITEM_CASES[case]
    x = make(device)
    ref = x.numpy()
    dst_ref = dst_of(ref)
    dst_ref[...] = src_of(ref).copy()  # numpy itself reads first; copy() makes it explicit
    dst_of(x)[...] = src_of(x)
    np.testing.assert_array_equal(x.numpy(), ref)


def test_same_view_write_needs_no_copy_and_works(device):
    x = row(device)
    x[...] = x
    x[1:4] = x[1:4]
    np.testing.assert_array_equal(x.numpy(), np.arange(6, dtype=np.float32))


def test_inplace_operator_with_overlapping_operand(device):
    x = row(device)
    x += x[::-1]
    np.testing.assert_array_equal(x.numpy(), np.full(6, 5.0, np.float32))
    s = square(device)
    s -= s.T
    ref = np.arange(9, dtype=np.float32).reshape(3, 3)
    np.testing.assert_array_equal(s.numpy(), ref - ref.T)


def test_binary_out_overlapping_inputs(device):
    x = row(device)
    ember.add(x[:-1], x[1:], out=x[1:])
    ref = np.arange(6, dtype=np.float32)
    ref[1:] = ref[:-1] + ref[1:]
    np.testing.assert_array_equal(x.numpy(), ref)


def test_unary_out_overlapping_input(device):
    x = row(device)
    ember.neg(x[::-1], out=x)
    np.testing.assert_array_equal(x.numpy(), -np.arange(6, dtype=np.float32)[::-1])
