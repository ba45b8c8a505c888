"""Every error class: its place in the hierarchy, its attributes, and what its message
says when a real op raises it."""

from __future__ import annotations

import pickle

import ember
import pytest

# class name -> (built-in base, documented attributes)
ERRORS = {
    "DeviceMismatchError": (ValueError, ("op", "lhs", "rhs")),
    "MoveNotImplementedError": (NotImplementedError, ("src", "dst")),
    "DeviceNotFoundError": (IndexError, ("kind", "ordinal", "count")),
    "BackendUnavailableError": (RuntimeError, ("kind", "reason")),
    "ShapeMismatchError": (ValueError, ("op", "lhs", "rhs")),
    "DTypeMismatchError": (TypeError, ("op", "lhs", "rhs")),
    "UnsupportedDTypeError": (TypeError, ("dtype", "device", "op")),
    "OutOfMemoryError": (MemoryError, ("device", "bytes")),
    "DeviceError": (RuntimeError, ("device",)),
    "InvalidArgumentError": (ValueError, ("op",)),
    "IndexOutOfRangeError": (IndexError, ("op",)),
}

BUILT = set(ember.compiled_backends())


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_hierarchy(name):
    cls = getattr(ember, name)
    base, _ = ERRORS[name]
    assert issubclass(cls, ember.EmberError)
    assert issubclass(cls, base)
    assert issubclass(ember.EmberError, Exception)
    # the same class object from ember.errors and from the top level
    assert getattr(ember.errors, name) is cls
    assert ember.errors.EmberError is ember.EmberError


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_constructed_attributes_default_to_none(name):
    cls = getattr(ember, name)
    _, attrs = ERRORS[name]
    e = cls("something went wrong")
    assert str(e) == "something went wrong"
    for attr in attrs:
        assert getattr(e, attr) is None, attr


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_constructed_attributes_are_kept(name):
    cls = getattr(ember, name)
    base, attrs = ERRORS[name]
    cpu = ember.Device.cpu()
    values = {
        "op": "add",
        "lhs": cpu,
        "rhs": cpu,
        "src": cpu,
        "dst": cpu,
        "kind": "metal",
        "ordinal": 3,
        "count": 1,
        "reason": "not built in",
        "dtype": ember.float64,
        "device": cpu,
        "bytes": 1 << 40,
    }
    kwargs = {a: values[a] for a in attrs}
    e = cls("message", **kwargs)
    for attr, value in kwargs.items():
        assert getattr(e, attr) is value
    with pytest.raises(base):
        raise e
    with pytest.raises(ember.EmberError):
        raise e


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_pickle(name):
    cls = getattr(ember, name)
    e = cls("boom", op="add") if "op" in ERRORS[name][1] else cls("boom")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cls
    assert str(back) == "boom"
    if "op" in ERRORS[name][1]:
        assert back.op == "add"


# ---- raised by real ops


def test_shape_mismatch_from_add():
    with pytest.raises(ember.ShapeMismatchError) as info:
        ember.zeros(2, 3) + ember.zeros(4, 5)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.op == "add"
    assert e.lhs == (2, 3) and e.rhs == (4, 5)
    msg = str(e)
    assert "add" in msg and "(2, 3)" in msg and "(4, 5)" in msg


def test_shape_mismatch_from_matmul():
    with pytest.raises(ember.ShapeMismatchError) as info:
        ember.matmul(ember.zeros(2, 3), ember.zeros(4, 5))
    e = info.value
    assert e.op == "matmul"
    assert e.lhs == (2, 3) and e.rhs == (4, 5)
    assert "matmul" in str(e)


def test_dtype_mismatch_names_both_and_the_fix():
    a = ember.zeros(2, 3, dtype=ember.float32)
    b = ember.zeros(3, 2, dtype=ember.int64)
    with pytest.raises(ember.DTypeMismatchError) as info:
        a @ b  # matmul does not promote (PyTorch neither)
    e = info.value
    assert isinstance(e, TypeError)
    assert e.op == "matmul"
    assert e.lhs == ember.float32 and e.rhs == ember.int64
    msg = str(e)
    assert "matmul" in msg and "float32" in msg and "int64" in msg
    assert "to_dtype" in msg


def test_a_float_result_into_an_integer_tensor_names_both_and_the_fix():
    a = ember.zeros(2, 3, dtype=ember.int64)
    with pytest.raises(ember.DTypeMismatchError) as info:
        a *= ember.ones(2, 3)  # int64 * float32 is float32, which int64 cannot hold
    e = info.value
    assert e.op == "mul" and e.lhs == ember.float32 and e.rhs == ember.int64
    msg = str(e)
    assert "the result is float32" in msg and "dtype int64" in msg
    assert "never goes into an integer tensor" in msg


def test_unsupported_dtype_for_float_only_op():
    t = ember.arange(4)
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        t.exp()
    e = info.value
    assert isinstance(e, TypeError)
    assert e.op == "exp"
    assert e.dtype == ember.int64
    assert e.device.same_device(ember.Device.cpu())
    msg = str(e)
    assert "exp" in msg and "int64" in msg
    assert "cpu:0" in msg and "id=0" in msg  # the device, with its instance id
    assert "to_dtype" in msg  # the fix


def test_invalid_argument_from_ragged_list():
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.tensor([[1, 2], [3]])
    assert isinstance(info.value, ValueError)
    assert str(info.value)


def test_invalid_argument_from_bad_spec():
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.device("gpu")
    msg = str(info.value)
    assert "gpu" in msg
    assert "cpu" in msg and "cuda" in msg and "metal" in msg  # what would have worked


def test_invalid_argument_from_negative_size():
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.zeros(2, -1)
    assert info.value.op == "zeros"
    assert "-1" in str(info.value)


def test_index_out_of_range_for_dim():
    t = ember.zeros(2, 3)
    with pytest.raises(ember.IndexOutOfRangeError) as info:
        t.sum(dim=5)
    e = info.value
    assert isinstance(e, IndexError)
    assert e.op == "sum"
    msg = str(e)
    assert "5" in msg and "sum" in msg
    assert "[-2, 1]" in msg  # the valid range


def test_index_out_of_range_for_index():
    t = ember.zeros(3)
    with pytest.raises(ember.IndexOutOfRangeError) as info:
        t.index_select(0, ember.tensor([0, 3]))
    e = info.value
    assert e.op == "index_select"
    assert "3" in str(e)


def test_out_of_memory_for_absurd_representable_size():
    # 2**45 float32 = 128 TiB: representable, but no machine has it.
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.zeros(2**45, dtype=ember.float32)
    e = info.value
    assert isinstance(e, MemoryError)
    assert e.bytes == 2**47
    assert e.device.same_device(ember.Device.cpu())
    assert str(2**47) in str(e)
    assert "empty_cache" in str(e)


def test_out_of_memory_bytes_counts_bytes_not_elements():
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.zeros(2**47, dtype=ember.float32)
    assert info.value.bytes == 2**49


def test_out_of_memory_on_device(device):
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.zeros(2**45, dtype=ember.float32, device=device)
    assert info.value.device.same_device(device)
    # the device still works afterwards
    assert ember.ones(4, device=device).sum().item() == 4.0


def test_device_not_found():
    with pytest.raises(ember.DeviceNotFoundError) as info:
        ember.device("cpu:2")
    e = info.value
    assert isinstance(e, IndexError)
    assert (e.kind, e.ordinal, e.count) == ("cpu", 2, 1)
    assert "2" in str(e)


@pytest.mark.parametrize("kind", ["metal", "cuda"])
def test_backend_unavailable_or_device_not_found(kind):
    if kind not in BUILT:
        with pytest.raises(ember.BackendUnavailableError) as info:
            getattr(ember.Device, kind)(0)
        assert info.value.kind == kind
        assert "not built" in str(info.value)
        assert 'ember.device("cpu")' in str(info.value)  # the fix
    else:
        count = getattr(ember, f"{kind}_device_count")()
        with pytest.raises((ember.DeviceNotFoundError, ember.BackendUnavailableError)) as info:
            getattr(ember.Device, kind)(count + 5)
        if isinstance(info.value, ember.DeviceNotFoundError):
            assert info.value.count == count


def test_device_mismatch_constructed():
    cpu = ember.Device.cpu()
    e = ember.DeviceMismatchError("device mismatch in add", op="add", lhs=cpu, rhs=cpu)
    assert isinstance(e, ValueError)
    assert e.lhs is cpu and e.rhs is cpu and e.op == "add"


def test_move_not_implemented_constructed():
    cpu = ember.Device.cpu()
    e = ember.MoveNotImplementedError("no route", src=cpu, dst=cpu)
    assert isinstance(e, NotImplementedError)
    assert e.src is cpu and e.dst is cpu


def test_device_error_constructed():
    cpu = ember.Device.cpu()
    e = ember.DeviceError("the device failed", device=cpu)
    assert isinstance(e, RuntimeError)
    assert e.device is cpu


# ---- check order: shapes, then devices, then dtypes


def test_shapes_are_checked_before_dtypes():
    a = ember.zeros(2, 3, dtype=ember.float32)
    b = ember.zeros(4, 5, dtype=ember.int64)
    for op in (ember.add, ember.sub, ember.mul, ember.div, ember.maximum, ember.eq, ember.lt):
        with pytest.raises(ember.ShapeMismatchError):
            op(a, b)
    with pytest.raises(ember.ShapeMismatchError):
        ember.matmul(a, ember.zeros(4, 5, dtype=ember.int64))
    with pytest.raises(ember.ShapeMismatchError):
        ember.cat([a, ember.zeros(4, 5, dtype=ember.int64)], dim=0)


def test_dtype_checked_when_shapes_agree():
    a = ember.zeros(2, 3, dtype=ember.float32)
    with pytest.raises(ember.DTypeMismatchError):
        ember.matmul(a, ember.zeros(3, 2, dtype=ember.int64))


def test_out_argument_errors():
    a = ember.ones(2, 3)
    with pytest.raises(ember.ShapeMismatchError):
        ember.add(a, a, out=ember.zeros(3, 2))
    with pytest.raises(ember.DTypeMismatchError):
        ember.add(a, a, out=ember.zeros(2, 3, dtype=ember.int64))


def test_ember_errors_are_catchable_by_base():
    with pytest.raises(ember.EmberError):
        ember.zeros(2) + ember.zeros(3)
    with pytest.raises(ValueError):
        ember.zeros(2) + ember.zeros(3)


def test_batched_matmul_mismatch_reports_operand_shapes():
    with pytest.raises(ember.ShapeMismatchError) as info:
        ember.zeros(2, 2, 3) @ ember.zeros(3, 3, 4)
    e = info.value
    assert e.op == "matmul"
    assert e.lhs == (2, 2, 3) and e.rhs == (3, 3, 4)
    assert "(2, 2, 3)" in str(e) and "(3, 3, 4)" in str(e)


def test_getitem_error_names_the_users_dim():
    t = ember.zeros(2, 3)
    with pytest.raises(ember.IndexOutOfRangeError) as info:
        t[0, 3]
    msg = str(info.value)
    assert "dim 1" in msg and "size 3" in msg


def test_int_too_big_for_int64_says_so():
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.tensor([2**70])
    msg = str(info.value)
    assert any(
        w in msg for w in ("64 bit", "64-bit", "out of range", "too large", "overflow", "fit")
    ), msg
