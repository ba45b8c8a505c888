"""Ordering on asynchronous devices (design §5): a host read waits for the last write of
its storage and for nothing else, a freed buffer is reused only once the work that used
it is done, and moves between host and device copy every dtype exactly.

Runs on every available GPU kind (CI: emulated Metal, EMBER_METAL_EMULATOR=1). Each test
takes new instances, so that no other test's work sits on their queues."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from conftest import DEVICE_SPECS
from helpers import DTYPES, NP_DTYPE, edtype, is_float, rounded, supported

GPU_KINDS = [spec for spec in DEVICE_SPECS if spec != "cpu"]
# Long on the emulator (seconds), so a read that skipped its wait would see no result.
N = 256


def new_instance(kind: str) -> ember.Device:
    """A Device of its own queue: Metal always makes one, CUDA on request."""
    if kind == "cuda":
        return ember.Device.cuda(0, new_stream=True)
    return getattr(ember.Device, kind)(0)


def small_ints(rng, shape) -> np.ndarray:
    # products and sums of these are exact in float32 whatever the summation order
    return rng.integers(-4, 5, size=shape).astype(np.float32)


@pytest.fixture(params=GPU_KINDS)
def kind(request):
    return request.param


def test_to_host_right_after_a_long_kernel(kind, rng):
    d, busy = new_instance(kind), new_instance(kind)
    x, y = small_ints(rng, (N, N)), small_ints(rng, (N, N))
    other = ember.tensor(y, device=busy)
    pending = [other @ other for _ in range(3)]  # the other queue stays busy meanwhile
    c = ember.tensor(x, device=d) @ ember.tensor(y, device=d)
    np.testing.assert_array_equal(c.numpy(), x @ y)
    for p in pending:
        np.testing.assert_array_equal(p.numpy(), y @ y)


def test_to_host_of_an_open_write_commits_it(kind, rng):
    d = new_instance(kind)
    x = small_ints(rng, (N, N))
    a = ember.tensor(x, device=d)
    c = a @ a
    before = d.queue_stats()
    np.testing.assert_array_equal(c.numpy(), x @ x)
    if "dispatches_open" in before:  # a queue that batches work into command buffers
        assert before["dispatches_open"] > 0
        after = d.queue_stats()
        assert after["dispatches_open"] == 0
        assert after["command_buffers_committed"] == before["command_buffers_committed"] + 1


def queue_until_commit(d, t, keep):
    """Queues `t + 1` until the queue commits the work encoded so far."""
    committed = d.queue_stats()["command_buffers_committed"]
    while d.queue_stats()["command_buffers_committed"] == committed:
        keep.append(t + 1)


def test_to_host_waits_for_its_last_write_only(kind, rng):
    d = new_instance(kind)
    if "dispatches_open" not in d.queue_stats():
        pytest.skip(f"{kind} queues submit each launch at once: nothing is left open")
    x, y = small_ints(rng, (N, N)), small_ints(rng, (64,))
    a = ember.tensor(x, device=d) @ ember.tensor(x, device=d)
    t, keep = ember.tensor(y, device=d), []
    queue_until_commit(d, t, keep)  # a's command buffer is committed now
    later = [t * 3 for _ in range(3)]  # later work, still open: a does not depend on it
    before = d.queue_stats()
    assert before["dispatches_open"] > 0
    np.testing.assert_array_equal(a.numpy(), x @ x)
    after = d.queue_stats()
    # the read neither committed nor waited for the later work
    assert after["dispatches_open"] == before["dispatches_open"]
    assert after["command_buffers_committed"] == before["command_buffers_committed"]
    assert after["host_waits"] == before["host_waits"] + 1
    for u in keep:
        np.testing.assert_array_equal(u.numpy(), y + 1)
    for u in later:
        np.testing.assert_array_equal(u.numpy(), y * 3)


def host_written_pool(d: ember.Device) -> bool:
    """Whether d's pool hands buffers to the host (Metal: shared memory written by memcpy),
    so that reuse must wait for the GPU and hits are counted. CUDA's pool is
    stream-ordered: a freed block is reused at once by later work of the same stream, which
    runs after the reads; the values below check that either way."""
    return "cache_hits" in d.memory_stats()


def test_freed_buffer_waits_for_the_work_that_reads_it(kind, rng):
    d = new_instance(kind)
    x, y, z = (small_ints(rng, (N, N)) for _ in range(3))
    a, b = ember.tensor(x, device=d), ember.tensor(y, device=d)
    c = a @ b  # queued: reads a later
    del a  # a's buffer goes back to the pool while the matmul still has to read it
    counted = host_written_pool(d)
    hits = d.memory_stats().get("cache_hits")
    fresh = ember.tensor(z, device=d)  # same size: must not get a's buffer yet
    if counted:
        assert d.memory_stats()["cache_hits"] == hits
    np.testing.assert_array_equal(c.numpy(), x @ y)
    np.testing.assert_array_equal(fresh.numpy(), z)
    # once that work is done, the buffer is reused
    again = ember.tensor(z, device=d)
    if counted:
        assert d.memory_stats()["cache_hits"] == hits + 1
    np.testing.assert_array_equal(again.numpy(), z)


def test_freed_buffer_waits_for_the_work_that_writes_it(kind, rng):
    d = new_instance(kind)
    x = small_ints(rng, (N, N))
    a = ember.tensor(x, device=d)
    c = a @ a
    del c  # freed before the matmul that writes it has run
    hits = d.memory_stats().get("cache_hits")
    fresh = ember.tensor(x, device=d)  # the matmul would overwrite it
    if host_written_pool(d):
        assert d.memory_stats()["cache_hits"] == hits
    d.synchronize()
    np.testing.assert_array_equal(fresh.numpy(), x)


def exact_values(rng, name: str, n: int) -> np.ndarray:
    """Values of dtype `name` across its whole range, as t.numpy() gives them."""
    if name == "bool":
        return rng.integers(0, 2, size=n).astype(np.bool_)
    if not is_float(name):
        info = np.iinfo(NP_DTYPE[name])
        return rng.integers(info.min, info.max, size=n, endpoint=True).astype(NP_DTYPE[name])
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, size=n)
    x[:4] = [0.0, -0.0, np.inf, -np.inf]
    return rounded(x, name)


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("name", DTYPES)
def test_moves_between_host_and_device_are_exact(kind, name, rng):
    d = new_instance(kind)
    values = exact_values(rng, name, 3 * 1000).reshape(3, 1000)
    host = ember.tensor(values, dtype=edtype(name))
    if not supported(d, name):
        with pytest.raises(ember.UnsupportedDTypeError):
            host.to_device(d)
        return
    on = host.to_device(d)  # host -> device
    back = on.to_device("cpu")  # device -> host, of a storage the host wrote
    np.testing.assert_array_equal(bits(back.numpy()), bits(values))
    moved_t = on.t().contiguous().to_device("cpu")  # of a storage a kernel wrote
    np.testing.assert_array_equal(bits(moved_t.numpy()), bits(np.ascontiguousarray(values.T)))
    view = host.t().to_device(d)  # a host view: made contiguous on the host first
    np.testing.assert_array_equal(bits(view.numpy()), bits(np.ascontiguousarray(values.T)))
