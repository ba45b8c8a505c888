"""Division with PyTorch's semantics, on every device: `/` (div, true_divide) is true
division (integers give float32); `//` (floor_divide, div rounding_mode="floor") rounds
toward -inf; div rounding_mode="trunc" (trunc_divide) toward zero; `%` (remainder) has
the sign of the divisor. Values against numpy (float corner cases as np.floor_divide and
np.remainder give them) and PyTorch where it is installed. Integer division by zero
raises DivisionByZeroError on the CPU; GPUs give 0 (the documented value)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    NP_DTYPE,
    check_exact,
    compute_dtype,
    edtype,
    is_float,
    make_view,
    rand_array,
    require_dtype,
    rounded,
    to_ember,
)

ROUNDING = ["floor_divide", "remainder", "trunc_divide"]


def np_trunc_divide(a, b):
    """Division rounded toward zero, numpy has no ufunc for it; b has no zeros."""
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.trunc(a / b)
    if a.dtype.kind == "u":
        return a // b
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def np_op(op, a, b):
    with np.errstate(all="ignore"):
        if op == "floor_divide":
            return np.floor_divide(a, b)
        if op == "remainder":
            return np.remainder(a, b)
    return np_trunc_divide(a, b)


def reference(op, name, na, nb):
    """numpy's result for ember dtype `name`, computed in its compute dtype."""
    ct = compute_dtype(name)
    return rounded(np_op(op, na.astype(ct), nb.astype(ct)), name)


def check_signed_exact(t, expected, name):
    """check_exact, and zeros must have the expected sign (-0.0 is not 0.0 here)."""
    check_exact(t, expected, name)
    want = rounded(expected, name)
    zero = want == 0  # a NaN's sign bit means nothing
    np.testing.assert_array_equal(np.signbit(t.numpy())[zero], np.signbit(want)[zero])


def call(op, a, b, **kw):
    """Each op through its ember function; trunc_divide also through div's mode."""
    return getattr(ember, op)(a, b, **kw)


# ---- result dtypes


def bool_refused(device, dtype, op) -> bool:
    """Two bool tensors: PyTorch's true division gives float32, the rest raise."""
    if dtype != "bool" or op in ("div", "true_divide"):
        return False
    a = ember.ones(3, dtype=ember.bool, device=device)
    with pytest.raises(ember.UnsupportedDTypeError, match=r"\.to\(ember\.int64\)") as info:
        call(op, a, a)
    assert info.value.dtype == ember.bool and info.value.op in str(info.value)
    return True


@pytest.mark.parametrize("op", ["div", "true_divide", *ROUNDING])
def test_result_dtypes(device, dtype, op):
    if not require_dtype(device, dtype) or bool_refused(device, dtype, op):
        return
    a = ember.ones(3, dtype=edtype(dtype), device=device)
    want = "float32" if op in ("div", "true_divide") and not is_float(dtype) else dtype
    assert call(op, a, a).dtype == edtype(want)
    assert call(op, a, 2).dtype == edtype(want)  # an int scalar takes the tensor's dtype
    assert call(op, 3, a).dtype == edtype(want)
    if not is_float(dtype):  # a float scalar lifts integers to float32
        assert call(op, a, 2.0).dtype == ember.float32
        assert call(op, 2.0, a).dtype == ember.float32


def test_true_division_promotes_like_pytorch(device):
    i = ember.tensor([1, 2], device=device)
    u = ember.tensor(np.array([1, 2], dtype=np.uint8), device=device)
    h = ember.ones(2, dtype=ember.float16, device=device)
    assert (i / i).dtype == ember.float32 and (u / u).dtype == ember.float32
    assert (u / i).dtype == ember.float32
    assert (h / i).dtype == ember.float16  # the float side wins, as for other ops
    assert (h / 2).dtype == ember.float16 and (i / h).dtype == ember.float16
    assert (i // h).dtype == ember.float16 and (i % i).dtype == ember.int64


# ---- negative operands: floor vs trunc


def test_floor_and_trunc_differ_on_negative_operands(device):
    a = ember.tensor([7, -7, 7, -7, 6, -6, 0, 1], device=device)
    b = ember.tensor([2, 2, -2, -2, 3, -4, -3, -5], device=device)
    check_exact(a // b, np.array([3, -4, -4, 3, 2, 1, 0, -1]), "int64")
    check_exact(
        ember.div(a, b, rounding_mode="floor"), np.array([3, -4, -4, 3, 2, 1, 0, -1]), "int64"
    )
    check_exact(
        ember.div(a, b, rounding_mode="trunc"), np.array([3, -3, -3, 3, 2, 1, 0, 0]), "int64"
    )
    check_exact(ember.trunc_divide(a, b), np.array([3, -3, -3, 3, 2, 1, 0, 0]), "int64")
    check_exact(a % b, np.array([1, 1, -1, -1, 0, -2, 0, -4]), "int64")
    # the identity that defines them: a == (a // b) * b + a % b
    np.testing.assert_array_equal(((a // b) * b + a % b).numpy(), a.numpy())
    f = a.to_dtype(ember.float32)
    g = b.to_dtype(ember.float32)
    check_exact(f / g, a.numpy() / b.numpy(), "float32")
    check_exact(f // g, np.array([3, -4, -4, 3, 2, 1, -0.0, -1]), "float32")
    check_exact(
        f.div(g, rounding_mode="trunc"), np.array([3, -3, -3, 3, 2, 1, -0.0, -0.0]), "float32"
    )
    check_exact(f % g, np.array([1, 1, -1, -1, 0, -2, -0.0, -4]), "float32")


def test_method_function_and_operator_forms_agree(device):
    a = ember.tensor([[5, -5, 9], [-9, 4, -1]], device=device)
    b = ember.tensor([3, -3, 4], device=device)
    for by_op, fn, method in [
        (a / b, ember.div, "div"),
        (a / b, ember.true_divide, "true_divide"),
        (a // b, ember.floor_divide, "floor_divide"),
        (a % b, ember.remainder, "remainder"),
    ]:
        np.testing.assert_array_equal(fn(a, b).numpy(), by_op.numpy())
        np.testing.assert_array_equal(getattr(a, method)(b).numpy(), by_op.numpy())
    np.testing.assert_array_equal(
        a.div(b, rounding_mode="floor").numpy(), ember.floor_divide(a, b).numpy()
    )
    np.testing.assert_array_equal(
        a.div(b, rounding_mode="trunc").numpy(), ember.trunc_divide(a, b).numpy()
    )
    np.testing.assert_array_equal(a.div(b, rounding_mode=None).numpy(), (a / b).numpy())


# ---- values against numpy, with broadcasting and views


@pytest.mark.parametrize("op", ROUNDING)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "reversed"])
def test_against_numpy_with_broadcasting(device, dtype, op, layout, rng):
    if not require_dtype(device, dtype) or bool_refused(device, dtype, op):
        return
    a, na = make_view(rng, (5, 6), dtype, device, layout)
    nb = rand_array(rng, (6,), dtype, "positive")
    if dtype in ("int64", *FLOAT_DTYPES):  # negative divisors too
        nb = rounded(nb * np.where(np.arange(6) % 2 == 0, 1, -1), dtype)
    b = to_ember(np.repeat(nb, 2), dtype, device)[::2]  # a stepped view
    check_exact(call(op, a, b), reference(op, dtype, na, nb), dtype)
    # a column against a row: both operands broadcast
    got = call(op, a[:, :1].t(), b.unsqueeze(1))
    check_exact(got, reference(op, dtype, na[:, :1].T, nb[:, None]), dtype)


@pytest.mark.parametrize("op", ROUNDING)
def test_large_tensors_take_the_parallel_paths(device, dtype, op, rng):
    if not require_dtype(device, dtype) or bool_refused(device, dtype, op):
        return
    na = rand_array(rng, (300, 257), dtype)
    nb = rand_array(rng, (300, 257), dtype, "positive")
    a, b = to_ember(na, dtype, device), to_ember(nb, dtype, device)
    check_exact(call(op, a, b), reference(op, dtype, na, nb), dtype)
    check_exact(call(op, a.t(), b.t()), reference(op, dtype, na.T, nb.T), dtype)


# ---- float corner cases: inf, nan, -0.0, zero divisors (numpy's values)

SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0]


@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
def test_float_corner_cases_match_numpy(device, op):
    x, y = np.meshgrid(np.array(SPECIAL), np.array(SPECIAL), indexing="ij")
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        a, b = to_ember(x, name, device), to_ember(y, name, device)
        with np.errstate(all="ignore"):
            want = getattr(np, op)(x.astype(compute_dtype(name)), y.astype(compute_dtype(name)))
        check_signed_exact(call(op, a, b), want, name)


def test_float_corner_cases_spelled_out(device):
    inf, nan = np.inf, np.nan
    a = ember.tensor([1.0, -1.0, 0.0, inf, 5.0, -5.0, 1.0, -1.0, 0.0, 0.0], device=device)
    b = ember.tensor([0.0, 0.0, 0.0, 2.0, inf, inf, -inf, -inf, -3.0, 3.0], device=device)
    check_signed_exact(a // b, np.array([inf, -inf, nan, nan, 0, -1, -1, 0, -0.0, 0]), "float32")
    check_signed_exact(a % b, np.array([nan, nan, nan, nan, 5, inf, -inf, -1, -0.0, 0]), "float32")
    check_signed_exact(
        ember.div(a, b, rounding_mode="trunc"),
        np.array([inf, -inf, nan, inf, 0, -0.0, -0.0, 0, -0.0, 0]),
        "float32",
    )


def test_float_floor_divide_is_exact_where_floor_of_the_quotient_rounds(device):
    # 1 / 0.1 rounds to 10.0, but 0.1f is above 1/10: 1 // 0.1 is 9 (numpy and Python)
    x, y = np.float32([1.0, -1.0]), np.float32([0.1, 0.1])
    a, b = ember.tensor(x, device=device), ember.tensor(y, device=device)
    check_exact(a // b, np.floor_divide(x, y), "float32")
    assert (a // b).tolist() == [9.0, -10.0]
    check_exact(a % b, np.remainder(x, y), "float32")


# ---- integer division by zero: an error on the CPU, 0 on GPUs


A = np.array([5, -3, 0, 7])
Z = np.array([1, 0, 2, 0])  # zeros where A has nonzero values and where it has 0
BIG = np.arange(100_000)
# label: (op, dividend, divisor, the call on ember operands); operands are numpy arrays
# (made tensors on the device) or Python ints
ZERO_CASES = {
    "floordiv": ("floor_divide", A, Z, lambda x, y: x // y),
    "mod": ("remainder", A, Z, lambda x, y: x % y),
    "floor_divide": ("floor_divide", A, Z, ember.floor_divide),
    "remainder": ("remainder", A, Z, ember.remainder),
    "trunc": ("trunc_divide", A, Z, lambda x, y: ember.div(x, y, rounding_mode="trunc")),
    "floor_mode": ("floor_divide", A, Z, lambda x, y: x.div(y, rounding_mode="floor")),
    "scalar_right": ("floor_divide", A, 0, lambda x, y: x // y),
    "scalar_left": ("remainder", 7, Z, lambda x, y: x % y),
    "uint8": ("floor_divide", np.array([3, 4], dtype=np.uint8), 0, lambda x, y: x // y),
    "broadcast_row": ("remainder", BIG.reshape(1000, 100), BIG[:100], lambda x, y: x % y),
    "strided": ("trunc_divide", BIG.reshape(100, 1000).T, BIG[:100], ember.trunc_divide),
}


def operand(x, device):
    if isinstance(x, int):
        return x
    if x.base is not None and not x.flags.c_contiguous:  # a transposed view stays one
        return ember.tensor(np.ascontiguousarray(x.T), device=device).t()
    return ember.tensor(x, device=device)


@pytest.mark.parametrize("case", sorted(ZERO_CASES))
def test_integer_division_by_zero(device, case):
    """CPU: DivisionByZeroError. GPUs cannot raise without waiting for the result: there
    x // 0, x % 0 and trunc x / 0 give 0 (the documented value), the rest is exact."""
    op, x, y, fn = ZERO_CASES[case]
    a, b = operand(x, device), operand(y, device)
    if device.kind == "cpu":
        with pytest.raises(ember.DivisionByZeroError) as info:
            fn(a, b)
        e = info.value
        assert isinstance(e, ZeroDivisionError) and isinstance(e, ember.EmberError)
        assert e.op == op and str(e).startswith(op + ": integer division by zero")
        assert e.dtype == (ember.uint8 if case == "uint8" else ember.int64)
        assert "to_dtype(ember.float32)" in str(e)  # the fix
        return
    nx, ny = np.asarray(x), np.asarray(y)
    nx, ny = np.broadcast_arrays(nx.astype(ny.dtype if case == "scalar_left" else nx.dtype), ny)
    want = np.where(ny == 0, 0, np_op(op, nx, np.where(ny == 0, 1, ny).astype(nx.dtype)))
    check_exact(fn(a, b), want.astype(nx.dtype), "uint8" if case == "uint8" else "int64")


def test_integer_division_by_zero_in_every_int_dtype(device):
    a_np = [5, 3, 0, 7]
    z_np = [2, 0, 0, 0]
    for name in INT_DTYPES:
        a = ember.tensor(np.array(a_np, dtype=NP_DTYPE[name]), device=device)
        z = ember.tensor(np.array(z_np, dtype=NP_DTYPE[name]), device=device)
        for fn, want in [
            (lambda x, y: x // y, [2, 0, 0, 0]),
            (lambda x, y: x % y, [1, 0, 0, 0]),
            (lambda x, y: ember.div(x, y, rounding_mode="trunc"), [2, 0, 0, 0]),
            (lambda x, y: x // 0, [0, 0, 0, 0]),
        ]:
            if device.kind == "cpu":
                with pytest.raises(ember.DivisionByZeroError):
                    fn(a, z)
            else:
                check_exact(fn(a, z), np.array(want), name)


def test_cpu_division_by_zero_message_names_the_op():
    a = ember.tensor([1, 2])
    with pytest.raises(
        ZeroDivisionError, match=r"^floor_divide: integer division by zero \(dtype int64\)"
    ):
        a // 0
    with pytest.raises(ZeroDivisionError, match=r"^remainder: "):
        a % ember.zeros(2, dtype=ember.int64)
    with pytest.raises(ZeroDivisionError, match=r"^trunc_divide: "):
        a.div(0, rounding_mode="trunc")
    # float division by zero is IEEE, never an error
    check_exact(a.to_dtype(ember.float32) // 0, np.array([np.inf, np.inf]), "float32")
    check_exact(a / 0, np.array([np.inf, np.inf]), "float32")


# ---- rounding_mode


@pytest.mark.parametrize("mode", ["round", "Floor", "", "true"])
def test_bad_rounding_mode_names_the_allowed_values(device, mode):
    a = ember.ones(2, device=device)
    for call_it in (
        lambda: ember.div(a, a, rounding_mode=mode),
        lambda: a.div(2, rounding_mode=mode),
    ):
        with pytest.raises(ember.InvalidArgumentError) as info:
            call_it()
        assert isinstance(info.value, ValueError) and info.value.op == "div"
        msg = str(info.value)
        assert "'floor'" in msg and "'trunc'" in msg and "None" in msg and repr(mode) in msg


def test_rounding_mode_of_the_wrong_type(device):
    a = ember.ones(2, device=device)
    with pytest.raises(ember.InvalidTypeError) as info:
        ember.div(a, a, rounding_mode=1)
    assert info.value.op == "div" and "'floor'" in str(info.value)


# ---- in place and out=


def test_int_true_division_in_place_raises(device):
    a = ember.tensor([4, 6], device=device)
    for other in (ember.tensor([2, 3], device=device), 2, ember.ones(2, device=device)):
        with pytest.raises(ember.DTypeMismatchError) as info:
            a /= other
        assert info.value.op == "div" and info.value.lhs == ember.float32
        assert info.value.rhs == ember.int64 and "rounding_mode" in str(info.value)
    with pytest.raises(ember.DTypeMismatchError):
        a //= 2.5  # a float scalar makes a float result too
    with pytest.raises(ember.DTypeMismatchError):
        ember.div(a, a, out=ember.zeros(2, dtype=ember.int64, device=device))
    check_exact(a, np.array([4, 6]), "int64")


def test_floor_and_remainder_in_place(device):
    a = ember.tensor([7, -7, 9], device=device)
    alias = a
    a //= 2
    assert a is alias
    check_exact(a, np.array([3, -4, 4]), "int64")
    a %= ember.tensor([-2, 3, 5], device=device)
    check_exact(alias, np.array([-1, 2, 4]), "int64")
    f = ember.tensor([7.5, -7.5], device=device)
    f //= 2
    check_exact(f, np.array([3.0, -4.0]), "float32")
    f %= -3.0
    check_exact(f, np.array([0.0, -1.0]), "float32")
    h = ember.tensor([5.0, -5.0], dtype=ember.float16, device=device)
    h /= ember.tensor([2, 2], device=device)  # float16 / int64 is float16
    check_exact(h, np.array([2.5, -2.5]), "float16")


def test_out_argument(device):
    a = ember.tensor([[7, -7], [5, -5]], device=device)
    b = ember.tensor([2, -3], device=device)
    out = ember.zeros(2, 2, dtype=ember.int64, device=device)
    assert ember.floor_divide(a, b, out=out) is out
    check_exact(out, np.floor_divide(a.numpy(), b.numpy()), "int64")
    ember.remainder(a, b, out=out)
    check_exact(out, np.remainder(a.numpy(), b.numpy()), "int64")
    ember.div(a, b, rounding_mode="trunc", out=out)
    check_exact(out, np.array([[3, 2], [2, 1]]), "int64")
    f = ember.zeros(2, 2, device=device)
    ember.div(a, b, out=f)
    check_exact(f, a.numpy().astype(np.float32) / b.numpy().astype(np.float32), "float32")
    ember.floor_divide(a, b, out=f)  # an integer result may go into a float tensor
    check_exact(f, np.floor_divide(a.numpy(), b.numpy()), "float32")
    ember.true_divide(a, b, out=f.t())
    check_exact(f.t(), a.numpy().astype(np.float32) / b.numpy().astype(np.float32), "float32")


# ---- Python scalars on either side


@pytest.mark.parametrize("name", ["int64", "uint8", "float32", "float16"])
def test_scalars_on_either_side(device, name):
    x = np.array([1, 2, 3, 7], dtype=NP_DTYPE[name])
    t = ember.tensor(x, device=device)
    ct = compute_dtype(name)
    flt = "float32" if name in INT_DTYPES else name
    check_exact(t // 2, np.floor_divide(x, ct(2)), name)
    check_exact(7 % t, np.remainder(ct(7), x), name)
    check_exact(9 // t, np.floor_divide(ct(9), x), name)
    check_exact(t % 3, np.remainder(x, ct(3)), name)
    check_exact(1 / t, rounded(np.float32(1) / x.astype(np.float32), flt), flt)
    check_exact(t / 4, rounded(x.astype(np.float32) / np.float32(4), flt), flt)
    check_exact(t // 1.5, rounded(np.floor_divide(x.astype(np.float32), np.float32(1.5)), flt), flt)
    check_exact(5.5 % t, rounded(np.remainder(np.float32(5.5), x.astype(np.float32)), flt), flt)


# ---- PyTorch, where it is installed


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.integers(-50, 50, size=200)
    y = rng.integers(-9, 10, size=200)
    y[y == 0] = 3
    a, b = ember.tensor(x), ember.tensor(y)
    ta, tb = torch.tensor(x), torch.tensor(y)
    pairs = [
        (a / b, ta / tb),
        (a // b, ta // tb),
        (a % b, ta % tb),
        (ember.div(a, b, rounding_mode="trunc"), torch.div(ta, tb, rounding_mode="trunc")),
        (7 // b, 7 // tb),
        (a % 4, ta % 4),
    ]
    fx = rng.standard_normal(200).astype(np.float32) * 10
    fy = rng.standard_normal(200).astype(np.float32)
    fa, fb = ember.tensor(fx), ember.tensor(fy)
    tfa, tfb = torch.tensor(fx), torch.tensor(fy)
    pairs += [
        (fa // fb, tfa // tfb),
        (fa % fb, torch.remainder(tfa, tfb)),
        (ember.div(fa, fb, rounding_mode="trunc"), torch.div(tfa, tfb, rounding_mode="trunc")),
    ]
    for got, want in pairs:
        assert str(got.dtype) == str(want.dtype).replace("torch.", "")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
