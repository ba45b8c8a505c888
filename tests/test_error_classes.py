"""Wrong argument *types* raise InvalidTypeError (an EmberError and a TypeError, as numpy
and PyTorch raise TypeError); keys that cannot index raise IndexError-class ember errors;
and pybind11's own argument errors arrive as ember errors too."""

from __future__ import annotations

import ember
import numpy as np
import pytest

t = ember.zeros(2, 3)

WRONG_TYPES = {
    "zeros_str": lambda: ember.zeros("3"),
    "zeros_float": lambda: ember.zeros(2.5),
    "ones_list_of_str": lambda: ember.ones([2, "a"]),
    "sum_float_dim": lambda: t.sum(dim=2.0),
    "mean_str_dim": lambda: t.mean(dim="a"),
    "dtype_foo": lambda: ember.zeros(2, dtype="foo"),
    "dtype_int": lambda: t.to_dtype(3),
    "device_int": lambda: ember.device(3),
    "zeros_device_int": lambda: ember.zeros(2, device=3),
    "cat_with_int": lambda: ember.cat([t, 5]),
    "cat_not_a_list": lambda: ember.cat(t),
    "manual_seed_str": lambda: ember.manual_seed("x"),
    "slice_float_stop": lambda: t[1:2.5],
    "add_none": lambda: ember.add(t, None),
    "add_two_numbers": lambda: ember.add(1, 2),
    "eq_two_numbers": lambda: ember.eq(1, 2),
    "out_not_tensor": lambda: ember.add(t, t, out=3),
    "full_str_value": lambda: ember.full(3, "x"),
    "arange_str": lambda: ember.arange("a"),
    "len_0d": lambda: len(ember.zeros(())),
    "iter_0d": lambda: iter(ember.zeros(())),
    "to_three_args": lambda: t.to("cpu", "float32", "x"),
    # pybind11's own conversions
    "exp_of_int": lambda: ember.exp(3),
    "transpose_str": lambda: t.transpose("a", 0),
    "narrow_float": lambda: t.narrow(0, 0.5, 1),
    "softmax_str": lambda: t.softmax("x"),
    "metal_str": lambda: ember.Device.metal("x"),
    "argmax_str": lambda: t.argmax(dim="x"),
    "matmul_list": lambda: ember.matmul(t, [1, 2]),
    "unknown_keyword": lambda: t.sum(axis_typo=1),
    "same_device_int": lambda: ember.device("cpu").same_device(3),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_wrong_types_raise_invalid_type_error(case):
    with pytest.raises(ember.InvalidTypeError) as info:
        WRONG_TYPES[case]()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ember.EmberError)
    assert info.value.op, "the error names the call"


def test_pybind11_argument_error_keeps_its_message_and_cause():
    with pytest.raises(ember.InvalidTypeError) as info:
        ember.exp("x")
    assert "exp(" in str(info.value) and "incompatible function arguments" in str(info.value)
    assert info.value.op == "exp"
    assert isinstance(info.value.__cause__, TypeError)


def test_wrapped_functions_keep_name_doc_and_work():
    assert ember.zeros.__name__ == "zeros" and "dtype" in ember.zeros.__doc__
    assert ember.Tensor.sum.__name__ == "sum"
    assert (t + 1).sum().item() == 6.0
    assert ember.Device.cpu().kind == "cpu"


@pytest.mark.parametrize("key", ["a", 1.5, b"x", object(), (0, "a")])
def test_keys_that_cannot_index_raise_index_errors(key):
    with pytest.raises(ember.InvalidIndexError) as info:
        t[key]
    assert isinstance(info.value, IndexError)


@pytest.mark.parametrize("key", [2**63, -(2**63) - 1, 2**70, (0, 2**64)])
def test_int_keys_beyond_int64_are_out_of_range(key):
    with pytest.raises(ember.IndexOutOfRangeError):
        t[key]


def test_two_ellipses_is_an_index_error():
    with pytest.raises(ember.InvalidIndexError):
        t[..., ...]


def test_values_stay_value_errors():
    for bad in (lambda: t[::0], lambda: ember.zeros(-1), lambda: int(ember.tensor(float("nan")))):
        with pytest.raises(ember.InvalidArgumentError):
            bad()
    assert np.asarray(t).shape == (2, 3)  # the copy path works
    with pytest.raises(ember.InvalidArgumentError):
        t.__array__(copy=False)


def test_operators_with_foreign_types_stay_python_type_errors():
    # Python's operator protocol: both sides returned NotImplemented
    with pytest.raises(TypeError):
        t + "a"


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", ">=", "@"])
@pytest.mark.parametrize("bad", ["'a'", "None", "[1]", "(1, 2)", "{}", "1j", "b'x'"])
def test_operators_with_an_operand_no_tensor_takes(op, bad):
    ti = ember.arange(3)  # noqa: F841 (used by eval)
    with pytest.raises(ember.InvalidTypeError) as info:
        eval(f"ti {op} {bad}")
    assert isinstance(info.value, TypeError) and "unsupported operand" in str(info.value)
    if op == "%" and bad in ("'a'", "b'x'"):
        return  # str % t is string formatting: Python's, not ember's
    with pytest.raises(ember.InvalidTypeError):
        eval(f"{bad} {op} ti")
    with pytest.raises(ember.InvalidTypeError):
        u = ember.arange(3)
        exec(f"u {op}= {bad}") if op not in ("<", ">=") else eval(f"u {op} {bad}")


def test_equality_with_other_objects_is_identity():
    ti = ember.arange(3)
    assert (ti == "a") is False and (ti != None) is True  # noqa: E711


class _Reflecting:
    def __radd__(self, other):
        return "reflected"


def test_unknown_types_still_get_their_reflected_operator():
    assert ember.arange(3) + _Reflecting() == "reflected"
