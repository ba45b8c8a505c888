"""Ops from several Python threads at once on shared tensors: results stay right while
the GIL is released around kernels and storages are guarded by their locks."""

from __future__ import annotations

import os
import threading

import ember
import numpy as np
import pytest
from helpers import SANITIZER, run_python

N_THREADS = 4
# Sanitizers make the emulated Metal loops 3-20x slower: fewer rounds there, each of them
# still interleaving all four threads.
ITERATIONS = 200 if SANITIZER is None else 64
# A thread still running after this long hung. ThreadSanitizer (README, "Development") makes
# the loops 15-20x slower: the Metal ones take up to two minutes there on two cores.
JOIN_TIMEOUT = 600 if SANITIZER == "tsan" else 120


def run_threads(target, n=N_THREADS):
    errors = []
    barrier = threading.Barrier(n)

    def wrapped(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_concurrent_reads_of_shared_tensors(device):
    rng = np.random.default_rng(0)
    x = rng.integers(-4, 5, size=(128, 128)).astype(np.float32)
    y = rng.integers(-4, 5, size=(128, 128)).astype(np.float32)
    big = rng.integers(0, 100, size=(256, 256)).astype(np.float32)
    a, b = ember.tensor(x, device=device), ember.tensor(y, device=device)
    c = ember.tensor(big, device=device)
    want_mm = x @ y  # small integers: exact in float32 however the sum is ordered
    want_add = big + big
    want_sum = big.astype(np.float64).sum(axis=0)
    want_mm_t = x.T @ y.T
    failures = []

    def work(i):
        for k in range(ITERATIONS):
            step = k % 8
            if step == 0:
                if not np.array_equal((a @ b).numpy(), want_mm):
                    failures.append(("matmul", i, k))
            elif step == 4:
                if not np.array_equal((a.t() @ b.t()).numpy(), want_mm_t):
                    failures.append(("matmul_t", i, k))
            elif step % 2:
                if not np.array_equal((c + c).numpy(), want_add):
                    failures.append(("add", i, k))
            else:
                if not np.array_equal(c.sum(dim=0).numpy(), want_sum):
                    failures.append(("sum", i, k))

    run_threads(work)
    assert not failures, failures[:10]
    # the shared inputs are untouched
    np.testing.assert_array_equal(a.numpy(), x)
    np.testing.assert_array_equal(c.numpy(), big)


def test_concurrent_inplace_adds_on_one_tensor(device):
    # Each += reads and writes the whole tensor under the storage's lock: no update is lost.
    acc = ember.zeros(65536, device=device)
    one = ember.ones(65536, device=device)

    def work(i):
        for _ in range(ITERATIONS):
            acc.__iadd__(one)

    run_threads(work)
    np.testing.assert_array_equal(acc.numpy(), np.full(65536, N_THREADS * ITERATIONS, np.float32))


def test_threads_writing_separate_tensors_while_others_read(device):
    src = ember.arange(65536, dtype=ember.float32, device=device)
    outs = [ember.zeros(65536, device=device) for _ in range(N_THREADS)]

    def work(i):
        for _ in range(ITERATIONS // 4):
            ember.add(src, src, out=outs[i])
            outs[i] += float(i)

    run_threads(work)
    base = np.arange(65536, dtype=np.float32)
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.numpy(), base * 2 + i)


def test_threads_creating_tensors_and_devices(device):
    results = [None] * N_THREADS

    def work(i):
        d = ember.device(device.kind)
        total = 0.0
        for _ in range(ITERATIONS // 4):
            t = ember.full((1000,), float(i), device=d)
            total += t.sum().item()
        results[i] = (d.id, total)

    run_threads(work)
    assert len({r[0] for r in results}) == 1  # one cached device for everyone
    assert [r[1] for r in results] == [1000.0 * i * (ITERATIONS // 4) for i in range(N_THREADS)]


# The CPU pool: how many threads it takes, and a fork()ed child (multiprocessing's
# default start method on Linux) that inherits the pool without its threads.

_REPORT_THREADS = "import ember; print(ember.Device.cpu().info()['threads'])"


def _python(code, env=None, preexec_fn=None):
    proc = run_python(code, env=env, drop=("EMBER_NUM_THREADS",), preexec_fn=preexec_fn)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="affinity masks are Linux's")
def test_pool_size_follows_the_affinity_mask():
    cpu = min(os.sched_getaffinity(0))
    assert _python(_REPORT_THREADS, preexec_fn=lambda: os.sched_setaffinity(0, {cpu})) == "1"
    assert _python(_REPORT_THREADS) == str(len(os.sched_getaffinity(0)))


def test_pool_size_from_ember_num_threads():
    assert _python(_REPORT_THREADS, env={"EMBER_NUM_THREADS": "3"}) == "3"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_forked_child_runs_parallel_ops():
    code = """
import os, numpy as np, ember
x = np.random.default_rng(0).random(1 << 22, dtype=np.float32)
t = ember.tensor(x)
want = float(x.astype(np.float64).sum())
assert abs(t.sum().item() - want) < 1e-6 * abs(want)  # the pool's threads are running now
pid = os.fork()
if pid == 0:
    ok = abs(t.sum().item() - want) < 1e-6 * abs(want)
    ok = ok and np.allclose((t + t).numpy(), 2 * x) and np.allclose(t.exp().numpy(), np.exp(x))
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    assert _python(code, env={"EMBER_NUM_THREADS": "2"}) == "0"
