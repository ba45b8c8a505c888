"""A write into a view in which several elements share one memory location (expand,
broadcast_to) raises InvalidArgumentError naming the op and the fix, as PyTorch refuses
it, and leaves the tensor unchanged. Reading such views stays allowed."""

from __future__ import annotations

import ember
import numpy as np
import pytest

WRITES = {
    "iadd": lambda e: e.__iadd__(1),
    "imul_tensor": lambda e: e.__imul__(ember.ones(3, 5, dtype=e.dtype, device=e.device)),
    "setitem_all": lambda e: e.__setitem__(Ellipsis, 0),
    "setitem_column": lambda e: e.__setitem__((slice(None), 1), 7),
    "add_out": lambda e: ember.add(ember.ones(3, 5, dtype=e.dtype, device=e.device), 1, out=e),
    "neg_out": lambda e: ember.neg(ember.ones(3, 5, dtype=e.dtype, device=e.device), out=e),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_write_into_expanded_view_raises(device, write):
    x = ember.arange(5, device=device).to_dtype("float32")
    e = x.expand(3, 5)
    with pytest.raises(ember.InvalidArgumentError) as info:
        WRITES[write](e)
    message = str(info.value)
    assert "share one memory location" in message and ".contiguous()" in message
    assert info.value.op in ("add", "mul", "neg", "setitem")
    np.testing.assert_array_equal(x.numpy(), np.arange(5, dtype=np.float32))


def test_unsqueezed_broadcast_and_column_views_refused(device):
    x = ember.zeros(3, device=device)
    for view in (x.unsqueeze(1).broadcast_to((3, 4)), x[None].expand(2, 3)):
        with pytest.raises(ember.InvalidArgumentError):
            view[...] = 1.0
    np.testing.assert_array_equal(x.numpy(), np.zeros(3, np.float32))


def test_writable_views_still_write(device):
    x = ember.zeros(4, 6, device=device)
    x.T[...] = 1.0  # permuted
    x[::2, ::3] += 1.0  # stepped
    x[1].unsqueeze(0)[...] = 5.0  # size-1 dims have any stride
    ref = np.ones((4, 6), np.float32)
    ref[::2, ::3] += 1
    ref[1] = 5
    np.testing.assert_array_equal(x.numpy(), ref)


def test_expanded_views_still_read(device):
    e = ember.arange(5, device=device).expand(3, 5)
    np.testing.assert_array_equal((e + 1).numpy(), np.broadcast_to(np.arange(5) + 1, (3, 5)))
    np.testing.assert_array_equal(e.contiguous().numpy(), np.broadcast_to(np.arange(5), (3, 5)))
    c = e.clone()
    c += 1  # a copy owns its memory
    np.testing.assert_array_equal(c.numpy(), np.broadcast_to(np.arange(5) + 1, (3, 5)))


def test_empty_expanded_view_is_writable(device):
    e = ember.zeros(1, 0, device=device).expand(3, 0)
    e[...] = 1.0  # no element, so none shares memory
    assert e.shape == (3, 0)
