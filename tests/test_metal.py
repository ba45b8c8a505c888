"""The Metal device model (§2-§3 of the design) on a real backend instance.

On Linux these run against the emulator (EMBER_METAL_EMULATOR=1, as the README's test
command sets); on a Mac, against the GPU. Op parity for every op and dtype is covered by
the rest of the suite, which parametrises over the metal device too.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import ember
import helpers
import numpy as np
import pytest

BUILT = "metal" in ember.compiled_backends()
metal_only = pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
on_linux = pytest.mark.skipif(sys.platform == "darwin", reason="the emulator is Linux-only")


def run_python(code: str, emulator: str | None) -> subprocess.CompletedProcess:
    env = None if emulator is None else {"EMBER_METAL_EMULATOR": emulator}
    return helpers.run_python(code, env=env, drop=("EMBER_METAL_EMULATOR",))


# ---- availability asks the machine


@on_linux
@pytest.mark.skipif(not BUILT, reason="Metal backend not built")
def test_without_emulator_metal_is_unavailable_and_says_why():
    r = run_python(
        """
        import ember
        print(ember.metal_is_available(), ember.metal_device_count())
        try:
            ember.Device.metal()
        except ember.BackendUnavailableError as e:
            print(type(e).__name__, e.kind, "|", e.reason, "|", e)
        """,
        emulator=None,
    )
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first == "False 0"
    assert second.startswith("BackendUnavailableError metal |")
    assert "macOS" in second and "EMBER_METAL_EMULATOR" in second


@on_linux
@pytest.mark.skipif(not BUILT, reason="Metal backend not built")
def test_emulator_device_count_and_ordinals():
    r = run_python(
        """
        import ember
        print(ember.metal_is_available(), ember.metal_device_count())
        d1 = ember.Device.metal(1)
        print(d1.kind, d1.ordinal)
        for bad in (2, -1):
            try:
                ember.Device.metal(bad)
            except ember.DeviceNotFoundError as e:
                print(isinstance(e, IndexError), e.kind, e.ordinal, e.count, "|", e)
        """,
        emulator="2",
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "True 2"
    assert lines[1] == "metal 1"
    assert lines[2].startswith("True metal 2 2 |")
    assert "valid ordinals are 0..1" in lines[2]
    assert lines[3].startswith("True metal -1 2 |")


# ---- identity


@metal_only
def test_shared_device_is_cached_and_new_instances_are_not():
    shared = ember.device("metal:0")
    assert ember.device("metal") is shared or ember.device("metal").same_device(shared)
    a, b = ember.Device.metal(0), ember.Device.metal()
    assert len({shared.id, a.id, b.id}) == 3
    assert a.location == shared.location  # the same GPU ...
    assert not a.same_device(shared)  # ... but another queue


@metal_only
def test_location_names_the_gpu():
    d = ember.device("metal")
    assert d.location.startswith("metal:0 (")
    assert "registryID 0x" in d.location
    if sys.platform != "darwin":
        assert "emulated" in d.location


def test_mismatch_message_tells_the_two_instances_apart():
    if not ember.metal_is_available():
        pytest.skip("no Metal device here")

    def load():
        return ember.Device.metal(0)

    def make_batch():
        return ember.Device.metal(0)

    a, b = load(), make_batch()
    with pytest.raises(ember.DeviceMismatchError) as info:
        ember.zeros(2, device=a) * ember.zeros(2, device=b)
    msg = str(info.value)
    assert info.value.op == "mul"
    assert f"metal:0 (Device id={a.id}, created at test_metal.py:" in msg
    assert f"metal:0 (Device id={b.id}, created at test_metal.py:" in msg
    assert " in load)" in msg and " in make_batch)" in msg
    assert "two Device instances of the same GPU" in msg
    assert 'ember.device("metal:0")' in msg
    lines = msg.splitlines()
    assert len(set(lines)) == len(lines)  # never two identical sides


@metal_only
def test_move_between_instances_gives_the_route_through_cpu():
    a, b = ember.Device.metal(0), ember.Device.metal(0)
    x = ember.arange(4, dtype=ember.float32, device=a)
    with pytest.raises(ember.MoveNotImplementedError) as info:
        x.to_device(b)
    e = info.value
    assert isinstance(e, NotImplementedError)
    assert e.src.same_device(a) and e.dst.same_device(b)
    msg = str(e)
    assert f"id={a.id}" in msg and f"id={b.id}" in msg
    assert 'to_device(ember.device("cpu"))' in msg
    assert "not implemented yet" not in msg
    np.testing.assert_array_equal(x.to_device("cpu").to_device(b).numpy(), [0, 1, 2, 3])


@metal_only
def test_same_instance_to_device_is_identity():
    d = ember.device("metal")
    x = ember.ones(3, device=d)
    assert x.to_device(d) is x


# ---- dtypes


@metal_only
def test_float64_is_unsupported_with_the_facts():
    d = ember.device("metal")
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        ember.zeros(3, dtype=ember.float64, device=d)
    e = info.value
    assert isinstance(e, TypeError)
    assert e.dtype == ember.float64 and e.device.same_device(d)
    assert "float64" in str(e) and "metal:0" in str(e)
    cpu64 = ember.ones(3, dtype=ember.float64)
    with pytest.raises(ember.UnsupportedDTypeError):
        cpu64.to_device(d)
    with pytest.raises(ember.UnsupportedDTypeError):
        ember.ones(3, device=d).to_dtype(ember.float64)
    # the route: convert on the CPU first
    y = cpu64.to_dtype(ember.float32).to_device(d)
    np.testing.assert_array_equal(y.numpy(), [1, 1, 1])


# ---- asynchronous queue, batching and the buffer pool


@metal_only
def test_long_chains_span_many_command_buffers():
    d = ember.Device.metal(0)
    x = ember.zeros(1000, device=d)
    for _ in range(200):  # several command buffers' worth of dispatches, no explicit wait
        x = x + 1.0
    np.testing.assert_array_equal(x.numpy(), np.full(1000, 200.0, np.float32))


@metal_only
def test_buffers_are_reused_only_after_their_work_completed():
    d = ember.Device.metal(0)
    d.empty_cache()
    ref = np.arange(4096, dtype=np.float32)
    for i in range(50):
        a = ember.tensor(ref, device=d)  # written by the host into a pooled buffer
        b = a * 2.0 + float(i)  # queued, not yet run
        del a  # a's buffer goes back to the pool while b's kernels may be pending
        c = ember.tensor(np.zeros(4096, np.float32), device=d)  # must not get a's buffer
        np.testing.assert_array_equal(b.numpy(), ref * 2 + i)
        np.testing.assert_array_equal(c.numpy(), 0)
    stats = d.memory_stats()
    assert stats["cache_hits"] > 0
    assert stats["bytes_in_use"] >= 0 and stats["bytes_cached"] >= 0


@metal_only
def test_one_device_from_many_threads():
    d = ember.device("metal")
    errors = []

    def work(k):
        try:
            x = ember.full((64, 64), float(k), device=d)
            for _ in range(20):
                x = (x @ ember.eye(64, device=d)) + 1.0
            np.testing.assert_array_equal(x.numpy(), np.full((64, 64), k + 20.0, np.float32))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@metal_only
def test_memory_stats_and_empty_cache():
    d = ember.Device.metal(0)
    x = ember.ones(1 << 16, device=d)
    del x
    d.synchronize()
    assert d.memory_stats()["bytes_cached"] > 0
    d.empty_cache()
    assert d.memory_stats()["bytes_cached"] == 0


@metal_only
def test_device_report_lists_metal():
    r = subprocess.run([sys.executable, "-m", "ember"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "metal:0" in r.stdout
