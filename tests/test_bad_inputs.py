"""Bad inputs raise a Python exception, never crash the interpreter.

The cases run in a child interpreter (one for all of them), each inside try/except,
printing one line per case; a crash (a signal: segfault, abort) is seen as the child's
return code, and the cases after the crashing one are run again in a new child. Each
case is then its own test, which checks the class of what was raised.
"""

from __future__ import annotations

import builtins

import ember
import pytest
from conftest import DEVICE_SPECS
from helpers import CALL_CHILD, run_isolated

BUILT = set(ember.compiled_backends())


def _ordinal_error(kind: str) -> list[str]:
    """What a negative ordinal raises: DeviceNotFoundError on a usable backend,
    BackendUnavailableError on one not built (or built, but with no device here)."""
    if kind not in BUILT:
        return ["BackendUnavailableError"]
    if getattr(ember, f"{kind}_is_available")():
        return ["DeviceNotFoundError"]
    return ["DeviceNotFoundError", "BackendUnavailableError"]


# (label, statement run with `dev`, `t` (a 2x3 float32 tensor on dev), `ember`, `np`
# in scope, the names of the acceptable exception classes)
CASES = [
    # shapes that do not broadcast / do not fit
    ("add_no_broadcast", "t + ember.zeros(4, 5, device=dev)", ["ShapeMismatchError"]),
    ("mul_no_broadcast", "ember.mul(t, ember.zeros(3, 2, device=dev))", ["ShapeMismatchError"]),
    ("eq_no_broadcast", "t == ember.zeros(4, device=dev)", ["ShapeMismatchError"]),
    (
        "where_no_broadcast",
        "ember.where(ember.ones(4, dtype=ember.uint8, device=dev), t, t)",
        ["ShapeMismatchError"],
    ),
    ("inplace_would_grow", "u = ember.zeros(3, device=dev); u += t", ["ShapeMismatchError"]),
    (
        "out_wrong_shape",
        "ember.add(t, t, out=ember.zeros(3, 2, device=dev))",
        ["ShapeMismatchError"],
    ),
    ("matmul_inner_dims", "t @ ember.zeros(2, 3, device=dev)", ["ShapeMismatchError"]),
    (
        "matmul_batch_dims",
        "ember.zeros(2, 2, 3, device=dev) @ ember.zeros(3, 3, 4, device=dev)",
        ["ShapeMismatchError"],
    ),
    (
        "matmul_0d",
        "ember.matmul(ember.ones((), device=dev), ember.ones((), device=dev))",
        ["ShapeMismatchError", "InvalidArgumentError"],
    ),
    ("broadcast_to_bad", "t.broadcast_to((4, 3, 2))", ["ShapeMismatchError"]),
    ("broadcast_to_fewer_dims", "t.broadcast_to((3,))", ["ShapeMismatchError"]),
    ("expand_bad", "t.expand(2, 5)", ["ShapeMismatchError"]),
    ("reshape_wrong_size", "t.reshape(4, 2)", ["ShapeMismatchError"]),
    ("reshape_bad_infer", "t.reshape(4, -1)", ["ShapeMismatchError"]),
    ("reshape_two_infer", "t.reshape(-1, -1)", ["InvalidArgumentError"]),
    ("reshape_negative", "t.reshape(-2, -3)", ["InvalidArgumentError"]),
    ("view_not_viewable", "t.t().view(6)", ["InvalidArgumentError"]),
    ("view_wrong_size", "t.view(7)", ["ShapeMismatchError"]),
    ("cat_shapes", "ember.cat([t, ember.zeros(2, 2, device=dev)], dim=0)", ["ShapeMismatchError"]),
    ("cat_ndim", "ember.cat([t, ember.zeros(3, device=dev)])", ["ShapeMismatchError"]),
    ("stack_shapes", "ember.stack([t, t.t()])", ["ShapeMismatchError"]),
    (
        "index_select_2d_ids",
        "t.index_select(0, ember.zeros(1, 1, dtype=ember.int64, device=dev))",
        ["ShapeMismatchError"],
    ),
    (
        "gather_ndim",
        "t.gather(1, ember.zeros(2, dtype=ember.int64, device=dev))",
        ["ShapeMismatchError"],
    ),
    # dims out of range
    ("sum_dim_5", "t.sum(dim=5)", ["IndexOutOfRangeError"]),
    ("sum_dim_neg3", "t.sum(dim=-3)", ["IndexOutOfRangeError"]),
    ("amax_dim_tuple_bad", "t.amax(dim=(0, 2))", ["IndexOutOfRangeError"]),
    ("max_dim_tuple", "t.max(dim=(0, 1))", ["InvalidTypeError"]),
    ("sum_dim_repeated", "t.sum(dim=(0, 0))", ["InvalidArgumentError"]),
    ("argmax_dim_2", "t.argmax(dim=2)", ["IndexOutOfRangeError"]),
    ("softmax_dim_2", "t.softmax(2)", ["IndexOutOfRangeError"]),
    ("transpose_dim", "t.transpose(0, 5)", ["IndexOutOfRangeError"]),
    ("permute_dim", "t.permute(0, 2)", ["IndexOutOfRangeError"]),
    ("permute_count", "t.permute(0)", ["InvalidArgumentError"]),
    ("permute_repeat", "t.permute(1, 1)", ["InvalidArgumentError"]),
    ("unsqueeze_dim", "t.unsqueeze(4)", ["IndexOutOfRangeError"]),
    ("squeeze_dim", "t.squeeze(-3)", ["IndexOutOfRangeError"]),
    ("flatten_order", "ember.zeros(2, 3, 4, device=dev).flatten(2, 1)", ["InvalidArgumentError"]),
    ("cat_dim", "ember.cat([t, t], dim=2)", ["IndexOutOfRangeError"]),
    ("narrow_dim", "t.narrow(2, 0, 1)", ["IndexOutOfRangeError"]),
    ("narrow_range", "t.narrow(1, 2, 5)", ["IndexOutOfRangeError"]),
    ("narrow_negative_length", "t.narrow(1, 0, -1)", ["IndexOutOfRangeError"]),
    (
        "index_select_dim",
        "t.index_select(3, ember.tensor([0], device=dev))",
        ["IndexOutOfRangeError"],
    ),
    # indices out of range
    ("getitem_int", "t[2]", ["IndexOutOfRangeError"]),
    ("getitem_negative", "t[-3]", ["IndexOutOfRangeError"]),
    ("getitem_second_dim", "t[0, 3]", ["IndexOutOfRangeError"]),
    ("getitem_too_many", "t[0, 0, 0]", ["IndexOutOfRangeError"]),
    ("getitem_two_ellipsis", "t[..., ...]", ["InvalidIndexError"]),
    ("getitem_step_0", "t[::0]", ["InvalidArgumentError"]),
    ("getitem_string", "t['a']", ["InvalidIndexError"]),
    ("getitem_float", "t[1.5]", ["InvalidIndexError"]),
    ("getitem_huge", "t[2**70]", ["IndexOutOfRangeError"]),
    (
        "index_select_high",
        "t.index_select(1, ember.tensor([0, 3], device=dev))",
        ["IndexOutOfRangeError"],
    ),
    (
        "index_select_huge_u32",
        "t.index_select(0, ember.tensor([4000000000], dtype=ember.uint32, device=dev))",
        ["IndexOutOfRangeError"],
    ),
    ("gather_high", "t.gather(1, ember.tensor([[0], [7]], device=dev))", ["IndexOutOfRangeError"]),
    # wrong dtypes
    (
        "index_select_float_ids",
        "t.index_select(0, ember.tensor([0.0], device=dev))",
        ["UnsupportedDTypeError"],
    ),
    ("gather_float_ids", "t.gather(0, ember.zeros(1, 3, device=dev))", ["UnsupportedDTypeError"]),
    (
        "matmul_int_float",
        "t @ ember.zeros(3, 2, dtype=ember.int64, device=dev)",
        ["DTypeMismatchError"],
    ),
    (
        "iadd_float_into_int",
        "u = ember.zeros(2, 3, dtype=ember.int64, device=dev); u += t",
        ["DTypeMismatchError"],
    ),
    (
        "out_wrong_dtype",
        "ember.add(t, t, out=ember.zeros(2, 3, dtype=ember.uint8, device=dev))",
        ["DTypeMismatchError"],
    ),
    ("exp_int", "ember.arange(3, device=dev).exp()", ["UnsupportedDTypeError"]),
    (
        "sigmoid_uint8",
        "ember.zeros(3, dtype=ember.uint8, device=dev).sigmoid()",
        ["UnsupportedDTypeError"],
    ),
    ("mean_int", "ember.arange(3, device=dev).mean()", ["UnsupportedDTypeError"]),
    ("softmax_int", "ember.arange(3, device=dev).softmax(0)", ["UnsupportedDTypeError"]),
    ("rand_int", "ember.rand(3, dtype=ember.int64, device=dev)", ["UnsupportedDTypeError"]),
    ("dtype_int16", "ember.zeros(2, dtype='int16', device=dev)", ["InvalidTypeError"]),
    ("dtype_garbage", "t.to_dtype('complex64')", ["InvalidTypeError"]),
    ("dtype_none", "t.to_dtype(None)", ["InvalidTypeError"]),
    # bad data
    ("ragged", "ember.tensor([[1, 2], [3]], device=dev)", ["InvalidArgumentError"]),
    ("ragged_deep", "ember.tensor([[1, 2], [3, [4]]], device=dev)", ["InvalidArgumentError"]),
    ("string", "ember.tensor('abc', device=dev)", ["InvalidArgumentError"]),
    ("string_in_list", "ember.tensor([1, 'a'], device=dev)", ["InvalidArgumentError"]),
    ("none", "ember.tensor(None, device=dev)", ["InvalidArgumentError"]),
    ("none_in_list", "ember.tensor([1.0, None], device=dev)", ["InvalidArgumentError"]),
    ("object", "ember.tensor(object(), device=dev)", ["InvalidArgumentError"]),
    ("dict", "ember.tensor({'a': 1}, device=dev)", ["InvalidArgumentError"]),
    (
        "object_array",
        "ember.tensor(np.array([1, 'x'], dtype=object), device=dev)",
        ["InvalidArgumentError"],
    ),
    ("int_too_big", "ember.tensor([2**70], device=dev)", ["InvalidArgumentError"]),
    (
        "nested_very_deep",
        "x = 1.0\nfor _ in range(100000):\n    x = [x]\nember.tensor(x, device=dev)",
        ["InvalidArgumentError", "RecursionError"],
    ),
    (
        "scalar_out_of_range",
        "ember.zeros(3, dtype=ember.uint8, device=dev) + 300",
        ["InvalidArgumentError"],
    ),
    (
        "scalar_negative_unsigned",
        "ember.zeros(3, dtype=ember.uint32, device=dev) * -1",
        ["InvalidArgumentError"],
    ),
    ("add_string", "t + 'a'", ["TypeError"]),
    ("add_none", "ember.add(t, None)", ["InvalidTypeError"]),
    # sizes
    ("zeros_2_62", "ember.zeros(2**62, device=dev)", ["InvalidArgumentError"]),
    ("zeros_2_64", "ember.zeros(2**64, device=dev)", ["InvalidArgumentError"]),
    ("zeros_negative", "ember.zeros(-1, device=dev)", ["InvalidArgumentError"]),
    ("zeros_product_overflow", "ember.ones(2**40, 2**40, device=dev)", ["InvalidArgumentError"]),
    ("zeros_float_size", "ember.zeros(2.5, device=dev)", ["InvalidTypeError"]),
    ("zeros_string_size", "ember.zeros('3', device=dev)", ["InvalidTypeError"]),
    (
        "zeros_absurd_representable",
        "ember.zeros(2**45, dtype=ember.float32, device=dev)",
        ["OutOfMemoryError"],
    ),
    ("full_absurd", "ember.full((2**46,), 1.0, device=dev)", ["OutOfMemoryError"]),
    ("rand_negative", "ember.rand(3, -2, device=dev)", ["InvalidArgumentError"]),
    ("eye_negative", "ember.eye(-1, device=dev)", ["InvalidArgumentError"]),
    ("arange_step_0", "ember.arange(0, 10, 0, device=dev)", ["InvalidArgumentError"]),
    ("arange_inf", "ember.arange(float('inf'), device=dev)", ["InvalidArgumentError"]),
    ("arange_nan", "ember.arange(0.0, float('nan'), device=dev)", ["InvalidArgumentError"]),
    (
        "arange_huge",
        "ember.arange(0, 2**60, device=dev)",
        ["InvalidArgumentError", "OutOfMemoryError"],
    ),
    ("expand_huge", "t.expand(2**62, 2, 3)", ["InvalidArgumentError"]),
    # host access
    ("item_many", "t.item()", ["InvalidArgumentError"]),
    ("item_empty", "ember.zeros(0, device=dev).item()", ["InvalidArgumentError"]),
    ("bool_many", "bool(t)", ["InvalidArgumentError"]),
    # other values
    ("cat_empty", "ember.cat([])", ["InvalidArgumentError"]),
    ("stack_empty", "ember.stack([])", ["InvalidArgumentError"]),
    ("cat_not_tensors", "ember.cat([1, 2])", ["InvalidTypeError"]),
    ("clamp_min_gt_max", "t.clamp(min=2.0, max=1.0)", ["InvalidArgumentError"]),
    ("max_empty", "ember.zeros(0, 3, device=dev).max(dim=0)", ["InvalidArgumentError"]),
    ("argmax_empty", "ember.zeros(0, device=dev).argmax()", ["InvalidArgumentError"]),
    ("manual_seed_str", "dev.manual_seed('x')", ["InvalidTypeError"]),
    # devices
    ("device_gpu", "ember.device('gpu')", ["InvalidArgumentError"]),
    ("device_cuda_x", "ember.device('cuda:x')", ["InvalidArgumentError"]),
    ("device_metal_neg", "ember.device('metal:-1')", _ordinal_error("metal")),
    ("device_cuda_neg", "ember.Device.cuda(-1)", _ordinal_error("cuda")),
    ("device_metal_huge", "ember.Device.metal(2**70)", ["InvalidTypeError"]),
    ("device_int", "ember.device(3)", ["InvalidTypeError"]),
    ("device_empty", "ember.device('')", ["InvalidArgumentError"]),
    ("to_device_bad", "t.to_device('gpu')", ["InvalidArgumentError"]),
    ("tensor_device_bad", "ember.tensor([1.0], device='cuda:zz')", ["InvalidArgumentError"]),
]


@pytest.fixture(scope="module", params=DEVICE_SPECS, ids=DEVICE_SPECS)
def outcomes(request):
    return run_isolated(CALL_CHILD, request.param, [(c[0], c[1]) for c in CASES], timeout=120)


def test_case_labels_are_unique():
    labels = [c[0] for c in CASES]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(outcomes, case):
    label, code, expected = case
    results, _ = outcomes
    assert label in results, f"{label} did not run"
    name, _, message = results[label]
    assert not name.startswith("CRASH"), f"{code!r} crashed the interpreter: {name}\n{message}"
    raised = getattr(ember, name, None) or getattr(builtins, name, None)
    classes = tuple(getattr(ember, n, None) or getattr(builtins, n) for n in expected)
    ok = isinstance(raised, type) and issubclass(raised, classes)
    assert ok, f"{code!r} raised {name} ({message}), expected one of {expected}"


def test_child_exits_normally_after_all_cases(outcomes):
    # The first child ran every case in one process: it must end normally.
    results, first_rc = outcomes
    assert first_rc == 0, {k: v for k, v in results.items() if v[0].startswith("CRASH")}
    assert set(results) == {c[0] for c in CASES}
