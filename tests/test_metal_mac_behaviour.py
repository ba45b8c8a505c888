"""What a real Mac may do that a plain emulator run does not, played by the emulator's
switches, each in a fresh interpreter (metal/emulator/README.md):

- EMBER_METAL_EMULATOR_FAIL_I64=1: the Metal compiler rejects 64-bit integer code. Only
  the int64 ops go (UnsupportedDTypeError naming op and dtype); the rest keep working.
- EMBER_METAL_EMULATOR_MAX_THREADS=N: pipelines allow only N threads per threadgroup (a
  kernel that needs many registers). Every op still gives numpy's answer, or, where a
  kernel cannot run that narrow, a DeviceError that says so.
- EMBER_METAL_EMULATOR_OUT_OF_ORDER=1: an independent later command buffer completes
  first and completion handlers run late. A buffer freed while earlier work still reads
  it must not be handed out again."""

from __future__ import annotations

import sys

import ember
import helpers
import pytest

pytestmark = [
    pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here"),
    pytest.mark.skipif(sys.platform == "darwin", reason="emulator switches: Linux only"),
]


def run_with(code: str, **switches: str) -> None:
    env = {"EMBER_METAL_EMULATOR": "1"}
    env.update({f"EMBER_METAL_EMULATOR_{k}": v for k, v in switches.items()})
    r = helpers.run_python(code, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr


# float32 (and uint32) ops against numpy: shared by the FAIL_I64 and MAX_THREADS runs.
FLOAT_OPS = """
import numpy as np
import ember

d = ember.device("metal")
rng = np.random.default_rng(5)

def check(got, want, tol=1e-5):
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)

for shape in [(1,), (300,), (7, 129), (3, 5, 1000)]:
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    a, b = ember.tensor(x, device=d), ember.tensor(y, device=d)
    check(a + b, x + y)
    check(a.exp(), np.exp(x))
    check(ember.where(a > b, a, b), np.where(x > y, x, y))
    check(a.sum(dim=-1), x.sum(axis=-1), 1e-4)
    check(a.sum(dim=0), x.sum(axis=0), 1e-4)
    check(a.amax(dim=-1), x.max(axis=-1))
    np.testing.assert_array_equal(a.argmax(dim=-1).numpy(), x.argmax(axis=-1))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    check(ember.softmax(a, -1), e / e.sum(axis=-1, keepdims=True))
    check(a.cumsum(-1), np.cumsum(x, axis=-1), 1e-4)
    check(a.to_dtype(ember.float16).to_dtype(ember.float32), x.astype(np.float16))
    check(a.transpose(0, -1).contiguous() if len(shape) > 1 else a, x.T if len(shape) > 1 else x)
for m, k, n in [(1, 1, 1), (33, 17, 65), (64, 64, 64), (2, 100, 3)]:
    x = rng.standard_normal((2, m, k)).astype(np.float32)
    y = rng.standard_normal((2, k, n)).astype(np.float32)
    check(ember.tensor(x, device=d) @ ember.tensor(y, device=d), x @ y, 1e-4)
u = rng.integers(0, 100, size=(5, 300)).astype(np.uint32)
t = ember.tensor(u, device=d)
np.testing.assert_array_equal((t + t).numpy(), u + u)
np.testing.assert_array_equal(t.sum(dim=1).numpy(), u.astype(np.int64).sum(axis=1))
table = rng.standard_normal((10, 4)).astype(np.float32)
ids = np.array([3, 0, 9, 3], dtype=np.uint32)
check(ember.tensor(table, device=d).index_select(0, ember.tensor(ids, device=d)), table[ids])
"""


def test_int64_library_failing_takes_only_the_int64_ops():
    run_with(
        FLOAT_OPS
        + """
i = np.arange(12, dtype=np.int64).reshape(3, 4)
ti = ember.tensor(i, device=d)
np.testing.assert_array_equal(ti.numpy(), i)  # moves need no kernel
np.testing.assert_array_equal(ti.to_device("cpu").numpy(), i)
f = ember.tensor(table, device=d)
cases = [
    ("add", lambda: ti + ti),
    ("sum", lambda: ti.sum(dim=1)),
    ("matmul", lambda: ti @ ti.t()),
    ("to_dtype", lambda: ti.to_dtype(ember.float32)),
    ("copy", lambda: ti.t().contiguous()),
    ("cumsum", lambda: ti.cumsum(1)),
    # int64 indices: every dtype's sort writes them
    ("sort", lambda: f.sort()),
    # int64 indices: core's range check of them (one pass) is the first int64 op that runs
    ("index", lambda: f.index_select(0, ember.tensor(ids.astype(np.int64), device=d))),
    # t[i, j]: one pass through int64 ids
    ("index", lambda: f[ember.tensor(ids.astype(np.int64), device=d), ti[0, :1]]),
]
for op, fn in cases:
    try:
        fn().numpy()
    except ember.UnsupportedDTypeError as e:
        assert e.dtype == ember.int64 and e.op == op, (op, e.op, e.dtype)
        assert op in str(e) and "int64" in str(e) and "64-bit integer" in str(e), str(e)
    else:
        raise AssertionError(op + " on int64 did not raise")
check(ember.tensor(table, device=d) * 2, table * 2)  # still fine after the failures
print("OK")
""",
        FAIL_I64="1",
    )


@pytest.mark.parametrize("threads", ["128", "100"])
def test_a_smaller_pipeline_maximum_still_gives_numpys_answers(threads):
    run_with(FLOAT_OPS + "\nprint('OK')\n", MAX_THREADS=threads)


def test_a_pipeline_too_narrow_for_matmul_is_a_device_error():
    run_with(
        """
import numpy as np
import ember

d = ember.device("metal")
x = np.arange(12, dtype=np.float32).reshape(3, 4)
a = ember.tensor(x, device=d)
np.testing.assert_allclose(a.sum(dim=1).numpy(), x.sum(axis=1))  # reductions narrow down
np.testing.assert_allclose((a * 2).numpy(), x * 2)
try:
    (a @ a.t()).numpy()
except ember.DeviceError as e:
    assert "threads per threadgroup" in str(e) and "matmul_small_f32" in str(e), str(e)
else:
    raise AssertionError("matmul ran with groups wider than the pipeline allows")
print("OK")
""",
        MAX_THREADS="32",
    )


def test_a_freed_buffer_is_not_reused_while_earlier_work_reads_it():
    # Three matmuls reading `a` commit in one command buffer (seconds on the emulator); an
    # independent later one completes first. `a` is then freed and a tensor of its size
    # made: it must not get a's buffer while the matmuls still read it.
    run_with(
        """
import time
import numpy as np
import ember

d = ember.device("metal")
rng = np.random.default_rng(1)
x, y, z = (rng.integers(-4, 5, size=(256, 256)).astype(np.float32) for _ in range(3))
a, b = ember.tensor(x, device=d), ember.tensor(y, device=d)
cs = [a @ b for _ in range(3)]

def queue_until_commit(t, keep):
    committed = d.queue_stats()["command_buffers_committed"]
    while d.queue_stats()["command_buffers_committed"] == committed:
        keep.append(t + t)  # one dispatch: no op straddles the commit

keep1, keep2 = [], []
queue_until_commit(ember.tensor(np.ones(64, np.float32), device=d), keep1)  # commits cs
queue_until_commit(ember.tensor(np.ones(64, np.float32), device=d), keep2)  # independent
# Long enough for the later command buffer and its (late) handler; the matmuls run on.
deadline = time.monotonic() + 0.5
while d.queue_stats()["command_buffers_completed"] < 2 and time.monotonic() < deadline:
    time.sleep(0.001)
del a
hits = d.memory_stats()["cache_hits"]
fresh = ember.tensor(z, device=d)  # the size of a's buffer
if d.queue_stats()["command_buffers_completed"] == 0:  # the matmuls were still running
    assert d.memory_stats()["cache_hits"] == hits, "got a's buffer while the matmuls read it"
for c in cs:
    np.testing.assert_array_equal(c.numpy(), x @ y)
np.testing.assert_array_equal(fresh.numpy(), z)
for t in keep1 + keep2:
    np.testing.assert_array_equal(t.numpy(), np.full(64, 2, np.float32))
print("OK")
""",
        OUT_OF_ORDER="1",
    )


def test_out_of_order_completion_then_zeros_in_a_freed_buffer():
    # As above with zeros(): the host writes the reused buffer itself, at once.
    run_with(
        """
import time
import numpy as np
import ember

d = ember.device("metal")
rng = np.random.default_rng(2)
x, y = (rng.integers(-4, 5, size=(256, 256)).astype(np.float32) for _ in range(2))
a, b = ember.tensor(x, device=d), ember.tensor(y, device=d)
cs = [a @ b for _ in range(3)]
keep = []
for _ in range(2):
    t = ember.tensor(np.ones(64, np.float32), device=d)
    committed = d.queue_stats()["command_buffers_committed"]
    while d.queue_stats()["command_buffers_committed"] == committed:
        keep.append(t + t)  # one dispatch: no op straddles the commit
deadline = time.monotonic() + 0.5
while d.queue_stats()["command_buffers_completed"] < 2 and time.monotonic() < deadline:
    time.sleep(0.001)
del a
zeros = ember.zeros(256, 256, device=d)
for c in cs:
    np.testing.assert_array_equal(c.numpy(), x @ y)
np.testing.assert_array_equal(zeros.numpy(), np.zeros((256, 256), np.float32))
print("OK")
""",
        OUT_OF_ORDER="1",
    )
