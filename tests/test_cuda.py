"""CUDA semantics that only a CUDA device has (design §8): streams per instance, moves
between instances ordered on the GPU, staged host copies, the TF32 switch, out of
memory. The op-by-op suite runs on CUDA through the `device` fixture like on every
backend; these tests add what is specific to CUDA. Without a GPU (CI), the first test
checks what a CUDA build says on a machine that has none."""

from __future__ import annotations

import textwrap
import time

import ember
import helpers
import numpy as np
import pytest
from helpers import DTYPES, NP_DTYPE, edtype, long_identity_chain, rand_array

BUILT = "cuda" in ember.compiled_backends()
HAVE_GPU = ember.cuda_is_available()
gpu_only = pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA GPU (run on the H200)")


def test_cuda_availability_is_asked_of_the_machine():
    if not BUILT:
        assert not HAVE_GPU and ember.cuda_device_count() == 0
        return
    count = ember.cuda_device_count()
    if not HAVE_GPU:  # built, but no driver or no GPU here: says which, import still works
        assert count == 0
        with pytest.raises(ember.BackendUnavailableError) as info:
            ember.Device.cuda(0)
        msg = str(info.value)
        assert "driver" in msg or "no CUDA GPU" in msg
        assert 'ember.device("cpu")' in msg
        return
    assert count >= 1
    with pytest.raises(ember.DeviceNotFoundError) as info:
        ember.Device.cuda(count)
    assert info.value.count == count and info.value.ordinal == count


@gpu_only
def test_two_streams_are_not_ordered_but_a_move_between_them_is():
    # a's long work is one spinning thread: work that fills every SM (a chain of large
    # products) keeps a tiny kernel of another stream waiting on the H200, for torch's
    # streams too, which is scheduling, not ordering. In a fresh process: CUDA maps
    # streams onto 8 hardware queues (CUDA_DEVICE_MAX_CONNECTIONS), and after dozens of
    # streams in one process, a and b may share one.
    r = helpers.run_python(
        """
        import time
        import numpy as np, ember
        a = ember.Device.cuda(0, new_stream=True)
        b = ember.Device.cuda(0, new_stream=True)
        # Everything once before the spin: growing the GPU's pool (a new allocation) and
        # loading a kernel on its first use (CUDA loads modules lazily) each wait on the
        # host until every stream is idle.
        x = ember.ones(1000, device=a)
        three = ember.full((1000,), 3.0, device=a)
        y = ember.empty(1000, device=a)
        ember.mul(x, three, out=y)
        warm = [ember.ones(4, device=b) + 1 for _ in range(2)]
        b.synchronize()
        del warm
        a.synchronize()
        ember._core._queue_busy(a, 0.5)
        ember.mul(x, three, out=y)  # queued behind the spin; out= allocates nothing
        start = time.monotonic()
        small = ember.ones(4, device=b) + 1
        b.synchronize()  # b's work does not wait for a's
        waited = time.monotonic() - start
        assert not a.query(), f"b's synchronize waited for a's stream ({waited:.3f} s)"
        np.testing.assert_array_equal(small.numpy(), np.full(4, 2.0, np.float32))
        # The move waits for a's pending work, on the GPU: exact values, not a stale buffer.
        z = y.to_device(b)
        assert z.device.same_device(b)
        np.testing.assert_array_equal(z.numpy(), np.full(1000, 3.0, np.float32))
        assert a.query()  # b's copy could only run after a's work
        print("ok")
        """
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@gpu_only
def test_a_move_then_freeing_the_source_keeps_the_copy(rng):
    a = ember.Device.cuda(0, new_stream=True)
    b = ember.Device.cuda(0, new_stream=True)
    x = rand_array(rng, (2048, 2048), "float32")
    y = long_identity_chain(a, x, steps=20)
    z = y.to_device(b)
    del y  # freed on a's stream, which waits for b's copy first
    w = ember.zeros(2048, 2048, device=a) + 7  # may reuse the freed memory
    np.testing.assert_array_equal(z.numpy(), x)
    assert float(w.sum().item()) == 7.0 * 2048 * 2048


@gpu_only
@pytest.mark.parametrize("name", DTYPES)
def test_large_host_copies_are_exact_both_ways(name, rng):
    d = ember.device("cuda")
    n = 3 * (32 << 20) // np.dtype(NP_DTYPE[name]).itemsize + 12345  # > 3 staging chunks
    x = rand_array(rng, (n,), name)
    t = ember.tensor(x, dtype=edtype(name), device=d)
    np.testing.assert_array_equal(t.numpy(), x)
    np.testing.assert_array_equal(t.to_device("cpu").numpy(), x)
    back = ember.tensor(x, dtype=edtype(name)).to_device(d)  # CPU storage -> GPU
    np.testing.assert_array_equal((back == t).numpy().astype(bool), np.ones(n, bool))


@gpu_only
def test_tf32_only_when_allowed(rng):
    d = ember.device("cuda")
    x = rand_array(rng, (1024, 1024), "float32")
    y = rand_array(rng, (1024, 1024), "float32")
    exact = x.astype(np.float64) @ y.astype(np.float64)
    a, b = ember.tensor(x, device=d), ember.tensor(y, device=d)
    assert ember.get_float32_matmul_precision() == "highest"
    full = (a @ b).numpy()
    np.testing.assert_allclose(full, exact, rtol=1e-4, atol=1e-3)
    try:
        ember.set_float32_matmul_precision("high")
        tf32 = (a @ b).numpy()
    finally:
        ember.set_float32_matmul_precision("highest")
    # TF32 keeps 10 significand bits: visibly coarser than f32, still close
    assert np.abs(tf32 - exact).max() > 10 * np.abs(full - exact).max()
    np.testing.assert_allclose(tf32, exact, rtol=5e-2, atol=0.5)


@gpu_only
def test_out_of_memory_is_typed_and_the_device_stays_usable():
    d = ember.Device.cuda(0, new_stream=True)
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.zeros(1 << 40, dtype=ember.float32, device=d)  # 4 TiB
    assert info.value.device.same_device(d)
    assert "empty_cache" in str(info.value)
    np.testing.assert_array_equal((ember.ones(3, device=d) * 2).numpy(), [2, 2, 2])


@gpu_only
def test_memory_returns_to_the_pool_and_empty_cache_trims_it():
    # In a fresh process: the pool gives back only whole chunks, and in a long test
    # process other tests' live tensors may share a chunk with the freed block.
    r = helpers.run_python(
        """
        import ember
        d = ember.Device.cuda(0, new_stream=True)
        t = ember.zeros(64 << 20, dtype=ember.uint8, device=d)
        d.synchronize()
        in_use = d.memory_stats()["bytes_in_use"]
        assert in_use >= 64 << 20, in_use
        del t
        d.synchronize()
        stats = d.memory_stats()
        assert stats["bytes_in_use"] <= in_use - (64 << 20), stats
        assert stats["bytes_cached"] >= 64 << 20, stats  # kept for reuse
        d.empty_cache()
        assert d.memory_stats()["bytes_cached"] < 64 << 20, d.memory_stats()
        print("ok")
        """
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@gpu_only
def test_small_blocks_are_kept_for_reuse_on_their_stream():
    d = ember.Device.cuda(0, new_stream=True)
    x = ember.zeros(1000, device=d)
    for _ in range(500):  # each result may reuse the block freed one step before
        x = x + 1
    np.testing.assert_array_equal(x.numpy(), np.full(1000, 500, np.float32))
    keep = [ember.full((1024,), float(i), device=d) for i in range(100)]  # 4 KiB each
    d.synchronize()
    before = d.memory_stats()
    del keep
    after = d.memory_stats()  # kept by the instance: cached, not in use
    assert after["bytes_in_use"] <= before["bytes_in_use"] - 100 * 4096
    assert after["bytes_cached"] >= before["bytes_cached"] + 100 * 4096


@gpu_only
def test_a_small_block_freed_after_a_move_waits_for_the_copy(rng):
    a = ember.Device.cuda(0, new_stream=True)
    b = ember.Device.cuda(0, new_stream=True)
    busy = long_identity_chain(b, rand_array(rng, (4096, 4096), "float32"))  # b: ~0.1 s
    y = ember.tensor(np.arange(256, dtype=np.float32), device=a)
    z = y.to_device(b)  # queued on b behind the products
    del y  # back to a's cache: a's later work waits for b's copy on the GPU
    w = ember.full((256,), 7.0, device=a)  # may reuse y's block
    np.testing.assert_array_equal(z.numpy(), np.arange(256, dtype=np.float32))
    np.testing.assert_array_equal(w.numpy(), np.full(256, 7, np.float32))
    del busy


@gpu_only
def test_device_report_names_the_gpu():
    d = ember.device("cuda")
    info = d.info()
    assert d.name and info["gpu"] == d.name
    assert d.location.startswith(f"cuda:0 (GPU '{d.name}', PCI ")
    assert info["compute_capability"].count(".") == 1 and info["stream"] == "shared"
    assert ember.Device.cuda(0, new_stream=True).info()["stream"] == "own"


def test_matmul_precision_switch_takes_pytorchs_values():
    assert ember.get_float32_matmul_precision() == "highest"
    for value in ("high", "medium", "highest"):
        ember.set_float32_matmul_precision(value)
        assert ember.get_float32_matmul_precision() == value
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.set_float32_matmul_precision("fast")
    assert "'highest', 'high' or 'medium'" in str(info.value)
    with pytest.raises(ember.InvalidTypeError):
        ember.set_float32_matmul_precision(1)
    assert ember.get_float32_matmul_precision() == "highest"


@gpu_only
def test_a_device_fault_surfaces_at_the_next_wait_as_a_device_error():
    # A kernel that traps, queued by a test hook: the launch succeeds, the fault comes out
    # of the next wait, and every later call says the context is lost, without crashing.
    r = helpers.run_python(
        """
        import ember
        d = ember.device("cuda")
        x = ember.ones(4, device=d)
        ember._core._queue_device_fault(d)
        print("queued")
        for what, call in [("sync", d.synchronize), ("later", lambda: (x + 1).numpy())]:
            try:
                call()
                print(what, "no error")
            except ember.DeviceError as e:
                print(what, type(e).__name__, e.device is not None, str(e).replace("\\n", " "))
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "queued", r.stdout
    sync, later = lines[1], lines[2]
    assert sync.startswith("sync DeviceError True cuda:0"), sync
    assert "waiting for queued work failed" in sync and "context is lost" in sync, sync
    assert "Restart the process" in sync, sync
    assert later.startswith("later DeviceError True cuda:0") and "context is lost" in later


def test_the_test_hooks_refuse_a_backend_without_them():
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember._core._queue_device_fault(ember.device("cpu"))
    assert "_queue_device_fault" in str(info.value) and "cpu" in str(info.value)
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember._core._queue_busy(ember.device("cpu"), 0.1)
    assert "_queue_busy" in str(info.value) and "cpu" in str(info.value)


CUDA_WAITS = {"synchronize": "d.synchronize()", "numpy": "y.numpy()"}


@gpu_only
@pytest.mark.parametrize("wait", sorted(CUDA_WAITS))
def test_ctrl_c_reaches_a_long_cuda_wait(wait):
    # ~4 s of float32 products queued, then a wait: SIGINT raises KeyboardInterrupt in the
    # wait at once (the queued products still run: a CUDA queue cannot be cancelled).
    code = textwrap.dedent(
        """
        import ember
        d = ember.device("cuda")
        x = ember.randn(8192, 8192, device=d)
        for _ in range(200):
            y = x @ x
        print("running", flush=True)
        try:
            WAIT
            print("finished before the interrupt", flush=True)
        except KeyboardInterrupt:
            print("interrupted", d.query(), flush=True)
        """
    ).replace("WAIT", CUDA_WAITS[wait])
    with helpers.interrupted_when_running(code) as (proc, sent):
        line = proc.stdout.readline().strip()
        took = time.monotonic() - sent
        _, err = proc.communicate(timeout=60)
        exited = time.monotonic() - sent
    assert line == "interrupted False", (line, err[-2000:])  # the queue is still running
    assert took < 0.5, f"KeyboardInterrupt {took:.2f} s after SIGINT"
    assert proc.returncode == 0, err[-2000:]
    print(f"exited {exited:.1f} s after SIGINT")  # the queued products finish first
