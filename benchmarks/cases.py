"""The benchmark cases: what each one computes, its inputs, work and reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .libs import Lib
from .timing import Impl

OPS = ("add", "mul", "exp", "sum", "softmax", "matmul", "scalar_add", "to_device")
SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
QUICK_SIZES = (10**3, 10**5, 10**6, 10**7)
MATMUL_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
QUICK_MATMUL_SIZES = (64, 256, 512, 1024)
MATMUL_MAX_N = 16384  # --sizes applies to matmul too; a 1e6 x 1e6 matrix is not meant
SOFTMAX_COLS = 1000  # softmax runs over rows of this length (shorter if the size is smaller)
F32 = 4  # bytes per float32
# Below these, none of the libraries splits work across threads (torch's and ember's
# grain is 32768 elements; OpenBLAS runs a 64^3 sgemm on one thread).
SINGLE_THREAD_ELEMENTS = 16384
SINGLE_THREAD_MATMUL_N = 64


@dataclass(frozen=True)
class Spec:
    """A case before its inputs exist: cheap to list, so the plan is known up front."""

    op: str  # the --ops name
    name: str  # what the table shows: "add", "add out=", "matmul f16"
    size: int  # elements, or n for an n x n matmul
    dtype: str = "float32"

    @property
    def label(self) -> str:
        if self.op == "softmax":
            rows, cols = softmax_shape(self.size)
            return f"{rows}x{cols}"
        return size_label(self.size)


@dataclass
class Case:
    spec: Spec
    device: str
    shape: tuple
    work: float  # bytes read + written, or flops, per call (0: per-call overhead only)
    unit: str  # "GB/s", "GFLOP/s" or "" (then only the time matters)
    reference: np.ndarray  # float64 result from numpy, for the sanity check
    rtol: float  # allowed max|got - ref| / max|ref|
    impls: list[Impl] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # library -> why it has no figures
    note: str = ""

    @property
    def pause(self) -> bool:
        """Whether turns need idle pauses: CPU work big enough to wake thread pools."""
        if self.device != "cpu":
            return False
        if self.spec.op == "matmul":
            return self.spec.size > SINGLE_THREAD_MATMUL_N
        return self.spec.size >= SINGLE_THREAD_ELEMENTS


def size_label(n: int) -> str:
    """1000000 -> "1e6"; other numbers as they are."""
    exp = len(str(n)) - 1
    return f"1e{exp}" if n >= 1000 and n == 10**exp else str(n)


def softmax_shape(n: int) -> tuple[int, int]:
    cols = min(n, SOFTMAX_COLS)
    return max(1, n // cols), cols


def plan(kind: str, ops: list[str], sizes: list[int], mm_sizes: list[int]) -> list[Spec]:
    """Every case to run on one device kind, in table order."""
    specs: list[Spec] = []
    for op in ops:
        if op == "matmul":
            dtypes = ("float32",) if kind == "cpu" else ("float32", "float16")
            for dt in dtypes:
                name = "matmul" if dt == "float32" else "matmul f16"
                specs += [Spec(op, name, n, dt) for n in mm_sizes]
        elif op == "scalar_add":
            specs.append(Spec(op, "scalar_add", 1))
        else:
            specs += [Spec(op, name, n) for name in _variants(op, kind) for n in sizes]
    return specs


def _variants(op: str, kind: str) -> tuple[str, ...]:
    if op == "add":
        return ("add", "add out=")
    if op == "to_device":
        # ember's to_device onto the same device returns the tensor itself, so on the
        # CPU the copy measured is clone(); GPUs get both directions of the real move.
        return ("copy cpu->cpu",) if kind == "cpu" else ("to_device h2d", "to_device d2h")
    return (op,)


def _uniform(rng: np.random.Generator, shape, low: float = -1.0) -> np.ndarray:
    # rng.random is the fastest generator for 1e7 elements; the range only keeps
    # exp and sums well conditioned.
    return (rng.random(shape, dtype=np.float32) * (1.0 - low) + low).astype(np.float32)


@dataclass(frozen=True)
class Recipe:
    """A case whose statement is the same text for every library."""

    stmt: str
    inputs: Callable[[np.random.Generator, int], dict[str, np.ndarray]]
    reference: Callable[[dict], np.ndarray]
    work: Callable[[int], float]
    unit: str
    rtol: float
    result: str | None = None  # out= variants: the name written into


def _pair(rng, n):
    return {"a": _uniform(rng, n), "b": _uniform(rng, n)}


def _pair_out(rng, n):
    return dict(_pair(rng, n), c=np.zeros(n, np.float32))


def _one(rng, n):
    return {"a": _uniform(rng, n)}


def _positive(rng, n):
    return {"a": _uniform(rng, n, low=0.0)}  # a sum of positives has a meaningful rel. error


def _rows(rng, n):
    return {"a": _uniform(rng, softmax_shape(n))}


def _square(rng, n):
    return {"a": _uniform(rng, (n, n)), "b": _uniform(rng, (n, n))}


def _f64(d, k):
    return d[k].astype(np.float64)


def _ref_add(d):
    return _f64(d, "a") + _f64(d, "b")


def _ref_mul(d):
    return _f64(d, "a") * _f64(d, "b")


def _ref_exp(d):
    return np.exp(_f64(d, "a"))


def _ref_sum(d):
    return np.asarray(_f64(d, "a").sum())


def _ref_softmax(d):
    x = _f64(d, "a")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _ref_matmul(d):
    return _f64(d, "a") @ _f64(d, "b")


def _bytes(arrays: int) -> Callable[[int], float]:
    """Work of a memory-bound op: `arrays` float32 arrays of n elements read or written."""
    return lambda n: float(arrays * n * F32)


def _flops(n: int) -> float:
    return 2.0 * n**3


GBS = "GB/s"
RECIPES = {
    "add": Recipe("a + b", _pair, _ref_add, _bytes(3), GBS, 1e-6),
    "add out=": Recipe("add(a, b, out=c)", _pair_out, _ref_add, _bytes(3), GBS, 1e-6, "c"),
    "mul": Recipe("a * b", _pair, _ref_mul, _bytes(3), GBS, 1e-6),
    "exp": Recipe("exp(a)", _one, _ref_exp, _bytes(2), GBS, 1e-5),
    "sum": Recipe("a.sum()", _positive, _ref_sum, _bytes(1), GBS, 1e-5),
    "softmax": Recipe("softmax(a, -1)", _rows, _ref_softmax, _bytes(2), GBS, 1e-5),
    "scalar_add": Recipe("a + b", _pair, _ref_add, _bytes(0), "", 1e-6),
    "matmul": Recipe("a @ b", _square, _ref_matmul, _flops, "GFLOP/s", 1e-4),
}


def build(spec: Spec, libs: list[Lib], rng: np.random.Generator) -> Case:
    """Make the inputs once, place them on each library's device, and bind statements."""
    if spec.name.startswith(("copy", "to_device")):
        return _build_copy(spec, libs, rng)
    recipe = RECIPES["matmul" if spec.op == "matmul" else spec.name]
    arrays = recipe.inputs(rng, spec.size)
    rtol = recipe.rtol
    if spec.dtype == "float16":
        arrays = {k: v.astype(np.float16) for k, v in arrays.items()}
        rtol = 1e-2  # f16 output rounding alone is ~5e-4 of each entry
    case = Case(
        spec,
        libs[0].device,
        arrays["a"].shape,
        recipe.work(spec.size),
        recipe.unit,
        recipe.reference(arrays),
        rtol,
    )
    for lib in libs:
        _bind(
            case,
            lib,
            recipe.stmt,
            lambda lib=lib: {k: lib.put(v) for k, v in arrays.items()},
            result=recipe.result,
        )
    return case


def _build_copy(spec: Spec, libs: list[Lib], rng: np.random.Generator) -> Case:
    x = _uniform(rng, spec.size)
    on_cpu = spec.name.startswith("copy")
    # A copy within memory reads and writes each byte; a move counts the bytes moved once.
    work = (2 if on_cpu else 1) * spec.size * F32
    case = Case(spec, libs[0].device, x.shape, work, "GB/s", x.astype(np.float64), 0.0)
    if on_cpu:
        case.note = (
            "to_device(cpu) of a CPU tensor returns it, so this times clone() (numpy: copy())"
        )
    for lib in libs:
        if on_cpu:
            _bind(case, lib, lib.copy_stmt(), lambda lib=lib: {"a": lib.put(x)})
        elif spec.name.endswith("h2d"):
            _bind(case, lib, lib.move_stmt("dev"), lambda lib=lib: {"a": lib.put_host(x)})
        else:
            _bind(case, lib, lib.move_stmt("host"), lambda lib=lib: {"a": lib.put(x)})
    return case


def _bind(case: Case, lib: Lib, stmt: str, place: Callable[[], dict], result=None) -> None:
    """Add lib's Impl to the case, or record why it could not place the inputs."""
    try:
        env = dict(lib.ns, **place())
    except Exception as exc:
        case.errors[lib.name] = f"inputs: {type(exc).__name__}: {exc}"
        return
    case.impls.append(Impl(lib.name, stmt, env, lib.sync, result))
