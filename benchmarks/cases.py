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

# CUDA: the project's targets, one size each (--sizes replaces them; --quick keeps them)
CUDA_ELEMENTS = 2**28  # add, mul, exp, sum: 1 GiB of float32 per array
CUDA_ROW_COLS = 8192  # sum dim=-1 and softmax run over rows of this length ...
CUDA_ROWS_ELEMENTS = 8192 * 8192  # ... in an 8192 x 8192 matrix
CUDA_MATMUL_SIZES = (4096, 8192)  # bfloat16 and float16
CUDA_F32_MATMUL_SIZES = (4096,)  # float32 with TF32 off, then on
CUDA_MOVE_ELEMENTS = 2**26  # host <-> device moves: 256 MiB of float32
CUDA_LAUNCHES = 10_000  # one-element adds queued per sample, then one wait
# float32 matmul precision: the names ember.set_float32_matmul_precision and
# torch.set_float32_matmul_precision take
TF32_OFF, TF32_ON = "highest", "high"
SHORT_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


@dataclass(frozen=True)
class Spec:
    """A case before its inputs exist: cheap to list, so the plan is known up front."""

    op: str  # the --ops name
    name: str  # what the table shows: "add", "add out=", "matmul f16"
    size: int  # elements, or n for an n x n matmul
    dtype: str = "float32"
    cols: int = 0  # row-wise cases (softmax, sum dim=-1): the row length; 0 otherwise
    precision: str = ""  # float32 matmul precision set around each run ("" leaves it)
    inner: int = 0  # calls per sample as prescribed (0: calibrated to last >= 2 ms)
    unit: str = ""  # replaces the recipe's unit ("TFLOP/s" for CUDA matmul)
    tracking: bool = False  # ember.set_tracking(True) around ember's runs

    @property
    def label(self) -> str:
        if self.cols:
            rows, cols = rows_shape(self.size, self.cols)
            return f"{rows}x{cols}"
        return size_label(self.size)

    @property
    def shape(self) -> tuple[int, ...]:
        if self.op == "matmul":
            return (self.size, self.size)
        if self.cols:
            return rows_shape(self.size, self.cols)
        return (self.size,)


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
    inner: int = 0  # calls per sample when the case prescribes it (spec.inner)

    @property
    def pause(self) -> bool:
        """Whether turns need idle pauses: CPU work big enough to wake thread pools."""
        if self.device != "cpu":
            return False
        if self.spec.op == "matmul":
            return self.spec.size > SINGLE_THREAD_MATMUL_N
        return self.spec.size >= SINGLE_THREAD_ELEMENTS


def size_label(n: int) -> str:
    """1000000 -> "1e6", 268435456 -> "2^28"; other numbers as they are."""
    exp = len(str(n)) - 1
    if n >= 1000 and n == 10**exp:
        return f"1e{exp}"
    if n >= 2**20 and n & (n - 1) == 0:  # below that, n = 64 ... 16384 reads better
        return f"2^{n.bit_length() - 1}"
    return str(n)


def rows_shape(n: int, cols: int) -> tuple[int, int]:
    """n elements as rows of `cols` (fewer when n is smaller)."""
    cols = min(n, cols)
    return max(1, n // cols), cols


def softmax_shape(n: int) -> tuple[int, int]:
    return rows_shape(n, SOFTMAX_COLS)


def plan(
    kind: str,
    ops=OPS,
    sizes: list[int] | None = None,
    mm_sizes: list[int] | None = None,
    quick: bool = False,
) -> list[Spec]:
    """Every case to run on one device kind, in table order.

    `sizes` (elements) and `mm_sizes` (matmul n) replace the kind's defaults when given
    (--sizes); CUDA has one set of cases whether quick or not.
    """
    ops = [op for op in OPS if op in ops]
    if kind == "cuda":
        return cuda_plan(ops, sizes, mm_sizes)
    if sizes is None:
        sizes = list(QUICK_SIZES if quick else SIZES)
    if mm_sizes is None:
        mm_sizes = list(QUICK_MATMUL_SIZES if quick else MATMUL_SIZES)
    specs: list[Spec] = []
    for op in ops:
        if op == "matmul":
            dtypes = ("float32",) if kind == "cpu" else ("float32", "float16")
            for dt in dtypes:
                name = "matmul" if dt == "float32" else "matmul f16"
                specs += [Spec(op, name, n, dt) for n in mm_sizes]
        elif op == "scalar_add":  # tracking off (the default), then on
            specs.append(Spec(op, "scalar_add", 1))
            specs.append(Spec(op, "scalar_add tracked", 1, tracking=True))
        else:
            cols = SOFTMAX_COLS if op == "softmax" else 0
            specs += [Spec(op, name, n, cols=cols) for name in _variants(op, kind) for n in sizes]
    return specs


def _variants(op: str, kind: str) -> tuple[str, ...]:
    if op == "add":
        return ("add", "add out=")
    if op == "to_device":
        # ember's to_device onto the same device returns the tensor itself, so on the
        # CPU the copy measured is clone(); GPUs get both directions of the real move.
        return ("copy cpu->cpu",) if kind == "cpu" else ("to_device h2d", "to_device d2h")
    return (op,)


CUDA_MOVES = ("to_device h2d", "to_device d2h", "to_device h2d pageable", "to_device d2h pageable")


def cuda_plan(ops, sizes: list[int] | None = None, mm_sizes: list[int] | None = None) -> list[Spec]:
    """The CUDA targets: big memory-bound ops, large matmuls, launch cost, pinned moves.

    With `sizes`, every element count takes them (also the moves, and sum dim=-1 and
    softmax as rows of 8192); with `mm_sizes`, both matmul groups take them.
    """
    given = sizes is not None
    elements = list(sizes) if given else [CUDA_ELEMENTS]
    rows = list(sizes) if given else [CUDA_ROWS_ELEMENTS]
    moves = list(sizes) if given else [CUDA_MOVE_ELEMENTS]
    half_mm = list(CUDA_MATMUL_SIZES if mm_sizes is None else mm_sizes)
    f32_mm = list(CUDA_F32_MATMUL_SIZES if mm_sizes is None else mm_sizes)
    specs: list[Spec] = []
    for op in [op for op in OPS if op in ops]:
        if op in ("add", "mul", "exp"):
            specs += [Spec(op, name, n) for name in (op, f"{op} out=") for n in elements]
        elif op == "sum":
            specs += [Spec(op, "sum", n) for n in elements]
            specs += [Spec(op, "sum dim=-1", n, cols=CUDA_ROW_COLS) for n in rows]
        elif op == "softmax":
            specs += [Spec(op, "softmax", n, cols=CUDA_ROW_COLS) for n in rows]
        elif op == "matmul":
            tflops = "TFLOP/s"
            for dt in ("bfloat16", "float16"):
                name = f"matmul {SHORT_DTYPE[dt]}"
                specs += [Spec(op, name, n, dt, unit=tflops) for n in half_mm]
            for name, mode in (("matmul f32", TF32_OFF), ("matmul tf32", TF32_ON)):
                specs += [Spec(op, name, n, precision=mode, unit=tflops) for n in f32_mm]
        elif op == "scalar_add":
            for name in ("scalar_add", "scalar_add out="):
                specs.append(Spec(op, name, 1, inner=CUDA_LAUNCHES))
            specs.append(Spec(op, "scalar_add tracked", 1, inner=CUDA_LAUNCHES, tracking=True))
        elif op == "to_device":  # pinned host memory both sides, then ordinary memory
            specs += [Spec(op, name, n) for name in CUDA_MOVES for n in moves]
    return specs


def _uniform(rng: np.random.Generator, shape, low: float = -1.0) -> np.ndarray:
    # rng.random is the fastest generator for 1e7 elements; the range only keeps
    # exp and sums well conditioned.
    return (rng.random(shape, dtype=np.float32) * (1.0 - low) + low).astype(np.float32)


@dataclass(frozen=True)
class Recipe:
    """A case's statement (the same text for every library unless a dict by library)."""

    stmt: str | dict[str, str]
    inputs: Callable[[np.random.Generator, tuple], dict[str, np.ndarray]]
    reference: Callable[[dict], np.ndarray]
    work: Callable[[tuple], float]  # from the input shape
    unit: str
    rtol: float
    result: str | None = None  # out= variants: the name written into

    def stmt_for(self, lib: str) -> str:
        return self.stmt if isinstance(self.stmt, str) else self.stmt[lib]


def _pair(rng, shape):
    return {"a": _uniform(rng, shape), "b": _uniform(rng, shape)}


def _pair_out(rng, shape):
    return dict(_pair(rng, shape), c=np.zeros(shape, np.float32))


def _one(rng, shape):
    return {"a": _uniform(rng, shape)}


def _one_out(rng, shape):
    return dict(_one(rng, shape), c=np.zeros(shape, np.float32))


def _positive(rng, shape):
    return {"a": _uniform(rng, shape, low=0.0)}  # a sum of positives has a meaningful rel. error


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


def _ref_sum_rows(d):
    return _f64(d, "a").sum(axis=-1)


def _ref_softmax(d):
    x = _f64(d, "a")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _ref_matmul(d):
    return _f64(d, "a") @ _f64(d, "b")


def _bytes(arrays: int) -> Callable[[tuple], float]:
    """Work of a memory-bound op: `arrays` float32 arrays of the input's size read or written."""
    return lambda shape: float(arrays * int(np.prod(shape)) * F32)


def _rows_bytes(shape: tuple) -> float:
    """A reduction over the last dim reads the matrix and writes one value per row."""
    return float((int(np.prod(shape)) + shape[0]) * F32)


def _flops(shape: tuple) -> float:
    return 2.0 * shape[0] ** 3


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), still as float32.

    numpy has no bfloat16; this is what a float32 -> bfloat16 conversion on the device
    gives for finite values, so the reference is computed from the very inputs used.
    """
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


GBS = "GB/s"
RECIPES = {
    "add": Recipe("a + b", _pair, _ref_add, _bytes(3), GBS, 1e-6),
    "add out=": Recipe("add(a, b, out=c)", _pair_out, _ref_add, _bytes(3), GBS, 1e-6, "c"),
    "mul": Recipe("a * b", _pair, _ref_mul, _bytes(3), GBS, 1e-6),
    "mul out=": Recipe("mul(a, b, out=c)", _pair_out, _ref_mul, _bytes(3), GBS, 1e-6, "c"),
    "exp": Recipe("exp(a)", _one, _ref_exp, _bytes(2), GBS, 1e-5),
    "exp out=": Recipe("exp(a, out=c)", _one_out, _ref_exp, _bytes(2), GBS, 1e-5, "c"),
    "sum": Recipe("a.sum()", _positive, _ref_sum, _bytes(1), GBS, 1e-5),
    "sum dim=-1": Recipe(
        {"ember": "a.sum(dim=-1)", "torch": "a.sum(-1)", "numpy": "a.sum(axis=-1)"},
        _positive,
        _ref_sum_rows,
        _rows_bytes,
        GBS,
        1e-5,
    ),
    "softmax": Recipe("softmax(a, -1)", _one, _ref_softmax, _bytes(2), GBS, 1e-5),
    "scalar_add": Recipe("a + b", _pair, _ref_add, _bytes(0), "", 1e-6),
    "scalar_add out=": Recipe("add(a, b, out=c)", _pair_out, _ref_add, _bytes(0), "", 1e-6, "c"),
    "scalar_add tracked": Recipe("a + b", _pair, _ref_add, _bytes(0), "", 1e-6),
    "matmul": Recipe("a @ b", _pair, _ref_matmul, _flops, "GFLOP/s", 1e-4),
}
# allowed max|err| / max|ref| by input dtype (float32: the recipe's), and for TF32
RTOL = {"float16": 1e-2, "bfloat16": 2e-2}  # f16 output rounding alone is ~5e-4 of each entry
TF32_RTOL = 2e-3  # 10-bit mantissa inputs: ~3e-4 measured for n = 1024 uniform [-1, 1)
_PINNED = (
    "CUDA: both {} pinned host memory (pin_memory()): torch with non_blocking=True, then "
    "the end event's wait; ember's {}, done on return"
)
_PAGEABLE = (
    "CUDA: both {} ordinary (pageable) host memory: torch's {}; ember's {}, through its own "
    "pinned staging buffers"
)
NOTES = {  # shown under the table for CUDA runs
    "matmul f32": "float32 with TF32 off: set_float32_matmul_precision('highest') around each "
    "library's runs, restored after; the check (1e-4 of max|ref|) fails if TF32 was used",
    "matmul tf32": "float32 with TF32 on: set_float32_matmul_precision('high') around each "
    "library's runs, restored after",
    "matmul bf16": "float32 inputs converted to bfloat16 on the device; checked in float32",
    "scalar_add": f"CUDA: {CUDA_LAUNCHES} queued calls, then one wait; time per call",
    "scalar_add out=": f"CUDA: {CUDA_LAUNCHES} queued calls, then one wait; time per call",
    "scalar_add tracked": "as scalar_add, with ember.set_tracking(True) around ember's runs: "
    "each result records its creation site (the scalar_add row is ember with tracking off)",
    "to_device h2d": _PINNED.format("from", "to_device(dev)"),
    "to_device d2h": _PINNED.format("into", "copy_()"),
    "to_device h2d pageable": _PAGEABLE.format("from", "to(dev)", "to_device(dev)"),
    "to_device d2h pageable": _PAGEABLE.format("into", "to('cpu')", "to_device(cpu)"),
}


def build(spec: Spec, libs: list[Lib], rng: np.random.Generator) -> Case:
    """Make the inputs once, place them on each library's device, and bind statements."""
    if spec.name.startswith(("copy", "to_device")):
        return _build_copy(spec, libs, rng)
    recipe = RECIPES["matmul" if spec.op == "matmul" else spec.name]
    arrays = recipe.inputs(rng, spec.shape)
    rtol = RTOL.get(spec.dtype, TF32_RTOL if spec.precision == TF32_ON else recipe.rtol)
    ref_inputs = arrays
    if spec.dtype == "float16":
        arrays = {k: v.astype(np.float16) for k, v in arrays.items()}
        ref_inputs = arrays
    elif spec.dtype == "bfloat16":  # numpy has none: float32 in, converted on the device
        ref_inputs = {k: bf16_round(v) for k, v in arrays.items()}
    device = libs[0].device
    case = Case(
        spec,
        device,
        arrays["a"].shape,
        recipe.work(spec.shape),
        spec.unit or recipe.unit,
        recipe.reference(ref_inputs),
        rtol,
        inner=spec.inner,
    )
    del ref_inputs
    if device.startswith("cuda"):
        case.note = NOTES.get(spec.name, "")
    convert = spec.dtype if spec.dtype == "bfloat16" else None
    for lib in libs:
        _bind(
            case,
            lib,
            recipe.stmt_for(lib.name),
            lambda lib=lib: {k: lib.put(v, convert) for k, v in arrays.items()},
            result=recipe.result,
            precision=spec.precision,
            tracking=spec.tracking,
        )
    return case


def _build_copy(spec: Spec, libs: list[Lib], rng: np.random.Generator) -> Case:
    x = _uniform(rng, spec.size)
    on_cpu = spec.name.startswith("copy")
    # A copy within memory reads and writes each byte; a move counts the bytes moved once.
    work = (2 if on_cpu else 1) * spec.size * F32
    case = Case(spec, libs[0].device, x.shape, work, "GB/s", x.astype(np.float64), 0.0)
    if case.device.startswith("cuda"):
        case.note = NOTES.get(spec.name, "")
    if on_cpu:
        case.note = (
            "to_device(cpu) of a CPU tensor returns it, so this times clone() (numpy: copy())"
        )
    for lib in libs:
        if on_cpu:
            _bind(case, lib, lib.copy_stmt(), lambda lib=lib: {"a": lib.put(x)})
            continue
        try:  # the library says how it moves (torch on CUDA: from / into pinned memory)
            to_dev = spec.name.startswith("to_device h2d")
            pinned = case.device.startswith("cuda") and not spec.name.endswith("pageable")
            stmt, inputs, result = lib.move(to_dev, x, pinned)
        except Exception as exc:
            case.errors[lib.name] = f"inputs: {type(exc).__name__}: {exc}"
            continue
        _bind(case, lib, stmt, lambda inputs=inputs: inputs, result=result)
    return case


def _bind(
    case: Case,
    lib: Lib,
    stmt: str,
    place: Callable[[], dict],
    result=None,
    precision="",
    tracking=False,
) -> None:
    """Add lib's Impl to the case, or record why it could not place the inputs."""
    try:
        env = dict(lib.ns, **place())
    except Exception as exc:
        case.errors[lib.name] = f"inputs: {type(exc).__name__}: {exc}"
        return
    mode = (lambda: lib.precision(precision)) if precision else None
    if tracking:
        mode = lib.tracking
    case.impls.append(Impl(lib.name, stmt, env, lib.sync, result, lib.timer(), mode))
