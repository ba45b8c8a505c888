"""Shared pieces of the test suite: dtypes, numpy references, input builders, checks.

Every comparison goes through numpy: inputs are built with numpy (already rounded to
the dtype under test), turned into ember tensors, and the result is compared with the
same computation done by numpy on the same values.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import ember
import numpy as np
import pytest

# The sanitizer preloaded into this run, if any: "asan" (CI's ASan + UBSan suite) or
# "tsan" (the README's ThreadSanitizer run). Emulated kernels run 3-20x slower under one,
# so the long loops of the threading and memory tests do less work there.
_PRELOAD = os.environ.get("LD_PRELOAD", "")
SANITIZER = next((s for s in ("tsan", "asan") if f"lib{s}" in _PRELOAD), None)

DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint32", "uint8", "bool"]
FLOAT_DTYPES = ["float32", "float16", "bfloat16", "float64"]
INT_DTYPES = ["int64", "int32", "uint32", "uint8"]  # bool is a category of its own
HALF_DTYPES = ["float16", "bfloat16"]

# The numpy dtype that t.numpy() gives for each ember dtype (numpy has no bfloat16).
NP_DTYPE = {
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": np.float32,
    "float64": np.float64,
    "int64": np.int64,
    "int32": np.int32,
    "uint32": np.uint32,
    "uint8": np.uint8,
    "bool": np.bool_,
}

# dtypes a backend lacks, by device kind (docs: Metal has no float64).
UNSUPPORTED = {"metal": {"float64"}}

# (rtol, atol) for results that numpy does not compute exactly (transcendentals,
# reductions, matmul). Half types: the reference is computed in float32 from the same
# rounded inputs, then compared loosely (bfloat16 has about 3 significant digits).
TOLERANCE = {
    "float32": (2e-5, 1e-6),
    "float64": (1e-10, 1e-12),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}


def edtype(name: str) -> ember.DType:
    """The ember dtype of a name."""
    return getattr(ember, name)


def is_float(name: str) -> bool:
    return name in FLOAT_DTYPES


def compute_dtype(name: str):
    """The numpy dtype a reference is computed in: half types go through float32."""
    return np.float32 if name in HALF_DTYPES else NP_DTYPE[name]


def round_bf16(x) -> np.ndarray:
    """Rounds float32 values to the nearest bfloat16 (ties to even), as float32."""
    x = np.array(x, dtype=np.float32, copy=True, order="C")
    bits = x.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out).astype(np.float32)


def rounded(x, name: str) -> np.ndarray:
    """x stored in dtype `name`, as the numpy array that t.numpy() would give."""
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf, as a cast does
        if name == "bfloat16":
            return round_bf16(x.astype(np.float32))
        return x.astype(NP_DTYPE[name])


def supported(device, name: str) -> bool:
    return name not in UNSUPPORTED.get(device.kind, set())


def require_dtype(device, name: str) -> bool:
    """True when `device` has dtype `name`. When it lacks it, asserts that making a
    tensor of that dtype there raises UnsupportedDTypeError, and returns False."""
    if supported(device, name):
        return True
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        ember.zeros(2, 3, dtype=edtype(name), device=device)
    assert info.value.dtype == edtype(name)
    with pytest.raises(ember.UnsupportedDTypeError):
        ember.tensor(np.zeros(3, dtype=NP_DTYPE[name]), dtype=edtype(name), device=device)
    return False


# ---- inputs

INT_RANGE = {"int64": (-50, 50), "int32": (-50, 50), "uint32": (0, 100), "uint8": (0, 100)}


def rand_array(rng, shape, name: str, kind: str = "normal") -> np.ndarray:
    """Random values representable in `name`, as the numpy array t.numpy() gives.

    kind: "normal" (floats N(0,1); ints in a small signed/unsigned range), "positive"
    (floats in [0.1, 4), ints in [1, 20)), "unit" (floats in [-1, 1)), "small" (ints
    in [0, 4), floats the same values), "uniform" (floats in [0, 2)).
    """
    shape = tuple(shape)
    if name == "bool":  # every kind: a mix of True and False
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if kind == "small":
        return rounded(rng.integers(0, 4, size=shape), name)
    if not is_float(name):
        lo, hi = (1, 20) if kind == "positive" else INT_RANGE[name]
        return rng.integers(lo, hi, size=shape).astype(NP_DTYPE[name])
    if kind == "normal":
        x = rng.standard_normal(shape)
    elif kind == "positive":
        x = rng.uniform(0.1, 4.0, shape)
    elif kind == "unit":
        x = rng.uniform(-1.0, 1.0, shape)
    elif kind == "uniform":
        x = rng.uniform(0.0, 2.0, shape)
    else:
        raise ValueError(kind)
    return rounded(x, name)


def to_ember(arr, name: str, device) -> ember.Tensor:
    return ember.tensor(np.asarray(arr), dtype=edtype(name), device=device)


LAYOUTS = ["contiguous", "transposed", "stepped", "reversed", "expanded", "narrowed"]


def make_view(rng, shape, name: str, device, layout: str, kind: str = "normal"):
    """A tensor of `shape` with the given memory layout, and its values as numpy.

    contiguous: a fresh tensor; transposed: a permuted view of a tensor with the dims
    reversed; stepped: every other element of a larger tensor (t[::2, ::2, ...]);
    reversed: a negative-step slice; expanded: a broadcast view whose leading non-1 dim
    is stored once; narrowed: narrow() of a larger tensor in dim 0.
    """
    shape = tuple(shape)
    nd = len(shape)
    if layout == "transposed" and nd >= 2:
        base = rand_array(rng, shape[::-1], name, kind)
        t = to_ember(base, name, device).permute(*range(nd - 1, -1, -1))
        return t, np.array(base.transpose(), order="C")
    if layout == "stepped" and nd >= 1:
        base = rand_array(rng, tuple(2 * s for s in shape), name, kind)
        idx = tuple(slice(None, None, 2) for _ in shape)
        return to_ember(base, name, device)[idx], np.array(base[idx], order="C")
    if layout == "reversed" and nd >= 1:
        base = rand_array(rng, tuple(2 * s for s in shape), name, kind)
        idx = tuple(slice(None, None, -2) for _ in shape)
        return to_ember(base, name, device)[idx], np.array(base[idx], order="C")
    if layout == "expanded" and nd >= 1:
        small = list(shape)
        for i, s in enumerate(small):
            if s > 1:
                small[i] = 1
                break
        base = rand_array(rng, small, name, kind)
        t = to_ember(base, name, device).broadcast_to(shape)
        return t, np.array(np.broadcast_to(base, shape), order="C")
    if layout == "narrowed" and nd >= 1:
        base = rand_array(rng, (shape[0] + 3,) + shape[1:], name, kind)
        t = to_ember(base, name, device).narrow(0, 2, shape[0])
        return t, np.array(base[2 : 2 + shape[0]], order="C")
    base = rand_array(rng, shape, name, kind)
    return to_ember(base, name, device), base


# ---- checks


@contextlib.contextmanager
def raises_op(cls, op: str, *facts: str):
    """pytest.raises for an ember error of class `cls` from op `op` (its `op` attribute,
    where it has one, and its message name it) whose message holds each of `facts`."""
    with pytest.raises(cls) as info:
        yield info
    msg = str(info.value)
    assert op in msg, msg
    if getattr(info.value, "op", None) is not None:
        assert info.value.op == op, (info.value.op, op)
    for fact in facts:
        assert fact in msg, (fact, msg)


def check_meta(t, shape, name: str, device=None):
    assert isinstance(t, ember.Tensor), type(t)
    assert t.shape == tuple(shape), (t.shape, tuple(shape))
    assert t.dtype == edtype(name), (t.dtype, name)
    if device is not None:
        assert t.device.same_device(device), (t.device, device)


def check_exact(t, expected, name: str, device=None):
    """t has `expected`'s shape, dtype `name` and exactly its values (NaNs where it has
    NaNs). `expected` holds the values as stored in `name` (see rounded())."""
    expected = np.asarray(expected)
    check_meta(t, expected.shape, name, device)
    got = t.numpy()
    assert isinstance(got, np.ndarray)
    assert got.dtype == NP_DTYPE[name], (got.dtype, name)
    np.testing.assert_array_equal(got, rounded(expected, name))


def check_close(t, expected, name: str, rtol=None, atol=None, device=None):
    """t has `expected`'s shape and dtype `name`, and values within tolerance of the
    reference `expected` (computed in float32 or better)."""
    expected = np.asarray(expected)
    check_meta(t, expected.shape, name, device)
    got = t.numpy()
    assert got.dtype == NP_DTYPE[name], (got.dtype, name)
    r, a = TOLERANCE[name]
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    np.testing.assert_allclose(
        got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True
    )


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf_ref(x):
    return _erf(np.asarray(x, dtype=np.float64))


def gelu_ref(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def sigmoid_ref(x):
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def long_identity_chain(d: ember.Device, x: np.ndarray, steps: int = 40) -> ember.Tensor:
    """x after `steps` products with the identity, queued on d: long GPU work (about 0.1 s
    for 4096 x 4096 on the H200) whose result is exact, so that a reader not ordered after
    it would see a stale buffer."""
    y = ember.tensor(x, device=d)
    eye = ember.tensor(np.eye(x.shape[1], dtype=np.float32), device=d)
    for _ in range(steps):
        y = y @ eye
    return y


@contextlib.contextmanager
def interrupted_when_running(code: str, env=None):
    """Runs `code` in a fresh interpreter (this environment plus `env`); once it prints
    "running", waits 0.5 s and sends SIGINT. Yields (the process, the monotonic time of
    the signal); a child still running on the way out is killed."""
    # Python's own SIGINT handler, unblocked, whatever the suite inherited from what
    # started it (a shell's background job ignores SIGINT, and so would this child)
    preamble = (
        "import signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", preamble + code],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "running"
        time.sleep(0.5)  # inside the loop or the wait
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        yield proc, sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# For a child that imports helpers: env={"PYTHONPATH": PATH_WITH_HELPERS}.
PATH_WITH_HELPERS = os.pathsep.join(
    p for p in (os.path.dirname(os.path.abspath(__file__)), os.environ.get("PYTHONPATH")) if p
)


def run_python(code: str, env=None, drop=(), preexec_fn=None) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter: this environment less `drop`, plus `env`."""
    full_env = {k: v for k, v in os.environ.items() if k not in drop}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        preexec_fn=preexec_fn,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_isolated(child: str, spec: str, cases: list, timeout: int = 300):
    """Runs `cases` (each a list or tuple starting with its label) through `child`, a
    script that reads them as JSON on stdin, takes the device spec as argv[1] and prints
    "START\tlabel" before and "DONE\tlabel\tclass\tflag\tmessage" after each case, then
    "ALL-DONE". A case that kills its interpreter is recorded as "CRASH rc=N" and the
    cases after it run in a new one.

    Returns ({label: (class name, flag, message)}, the first child's return code)."""
    results: dict = {}
    first_rc = None
    todo = list(cases)
    while todo:
        proc = subprocess.run(
            [sys.executable, "-c", child, spec],
            input=json.dumps(todo),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        first_rc = proc.returncode if first_rc is None else first_rc
        started = None
        for line in proc.stdout.splitlines():
            parts = line.split("\t")
            if parts[0] == "START":
                started = parts[1]
            elif parts[0] == "DONE":
                results[parts[1]] = (parts[2], parts[3] == "True", parts[4])
                started = None
        if proc.returncode == 0 and "ALL-DONE" in proc.stdout:
            break
        if started is None:  # died outside any case: every case not run is a failure
            died = (f"child died (rc={proc.returncode})", False, proc.stderr[-2000:])
            for case in todo:
                results.setdefault(case[0], died)
            break
        results[started] = (f"CRASH rc={proc.returncode}", False, proc.stderr[-2000:])
        labels = [case[0] for case in todo]
        todo = todo[labels.index(started) + 1 :]
    return results, first_rc


# The child of run_isolated for (label, code) cases: each code runs with `ember`, `np`,
# the device `dev` (argv[1]) and a 2x3 float tensor `t` on it; DONE gives the class of
# what it raised ("None" if nothing) and whether that is an EmberError.
CALL_CHILD = r"""
import json, sys
import numpy as np
import ember

spec = sys.argv[1]
dev = ember.device(spec)
for label, code in json.loads(sys.stdin.read()):
    print("START\t" + label, flush=True)
    scope = {"ember": ember, "np": np, "dev": dev,
             "t": ember.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], device=dev)}
    try:
        exec(code, scope)
    except BaseException as e:  # noqa: B036
        print("DONE\t%s\t%s\t%s\t%s" % (label, type(e).__name__,
              isinstance(e, ember.EmberError), str(e).replace("\n", " ")[:200]), flush=True)
    else:
        print("DONE\t%s\tNone\tFalse\t" % label, flush=True)
print("ALL-DONE", flush=True)
"""


def pytest_at_cpu_level(capability: str, files: list[str], select: str) -> None:
    """Runs the tests of `files` that `select` (-k) picks in a child interpreter whose CPU
    kernels are capped at `capability` (EMBER_CPU_CAPABILITY: "avx2" or "default"), so a
    lower level's kernels meet the same checks on a CPU that has more. Asserts they ran
    and passed."""
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         *[os.path.join(here, f) for f in files], "-k", select],
        env={**os.environ, "EMBER_CPU_CAPABILITY": capability},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "deselected" in proc.stdout
