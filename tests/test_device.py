"""The device model: identity, caching, availability, creation sites and moves."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import textwrap

import ember
import numpy as np
import pytest

BUILT = set(ember.compiled_backends())
GPU_KINDS = ["metal", "cuda"]


# ---- the CPU device


def test_cpu_device_is_one_device():
    a = ember.Device.cpu()
    b = ember.Device.cpu()
    assert a.id == b.id == 0
    assert a.same_device(b) and b.same_device(a)
    assert a == b
    assert hash(a) == hash(b)
    assert a.kind == "cpu"
    assert a.ordinal == 0
    assert isinstance(a.location, str) and "cpu" in a.location
    assert isinstance(a.name, str)


def test_device_cpu_spec_is_the_cpu_device():
    assert ember.device("cpu") is ember.Device.cpu()
    d = ember.device("cpu")
    assert d.same_device(ember.Device.cpu())
    assert d.id == ember.Device.cpu().id
    assert ember.device("cpu:0").same_device(d)
    assert ember.device().same_device(d)  # the default spec is "cpu"


def test_device_accepts_a_device_as_is():
    d = ember.Device.cpu()
    assert ember.device(d) is d


def test_cpu_repr():
    assert repr(ember.Device.cpu()) == "Device(cpu:0, id=0)"


def test_copy_shares_the_instance():
    d = ember.Device.cpu()
    assert copy.copy(d) is d
    assert copy.deepcopy(d) is d
    box = copy.deepcopy({"dev": d})
    assert box["dev"] is d


def test_device_is_usable_as_a_dict_key():
    a, b = ember.Device.cpu(), ember.device("cpu")
    assert {a: 1}[b] == 1
    assert len({a, b}) == 1


def test_device_not_equal_to_other_objects():
    d = ember.Device.cpu()
    assert d != "cpu"
    assert d != 0


def test_created_at_names_file_line_and_function(tmp_path):
    # A fresh process whose first use of the CPU device is inside make_it().
    script = tmp_path / "site_probe.py"
    script.write_text(
        textwrap.dedent(
            """\
            import ember


            def make_it():
                return ember.Device.cpu()


            print(make_it().created_at)
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    site = out.stdout.strip()
    assert site == "site_probe.py:5 in make_it", site


def test_created_at_format(device):
    # the Python file, line and function that first asked for this device
    assert re.fullmatch(r"[^/\\]+\.py:\d+ in \S+", device.created_at), device.created_at


def test_device_fixture_properties(device):
    assert device.kind in ("cpu", "metal", "cuda")
    assert device.ordinal == 0
    assert repr(device) == f"Device({device.kind}:0, id={device.id})"
    assert ember.device(device.kind).same_device(device)
    assert ember.device(f"{device.kind}:0").same_device(device)


def test_device_methods_run(device):
    device.synchronize()
    stats = device.memory_stats()
    assert isinstance(stats, dict)
    device.empty_cache()
    t = ember.ones(10, device=device)
    device.synchronize()
    assert t.numpy().sum() == 10


# ---- availability


@pytest.mark.parametrize("kind", GPU_KINDS)
def test_availability_is_consistent(kind):
    available = getattr(ember, f"{kind}_is_available")()
    count = getattr(ember, f"{kind}_device_count")()
    assert type(available) is bool
    assert type(count) is int
    assert count >= 0
    assert available == (count > 0)
    if kind not in BUILT:
        assert available is False and count == 0


def test_compiled_backends():
    backends = ember.compiled_backends()
    assert isinstance(backends, list)
    assert "cpu" in backends
    assert set(backends) <= {"cpu", "metal", "cuda"}


@pytest.mark.parametrize("kind", GPU_KINDS)
def test_unbuilt_backend_raises_backend_unavailable(kind):
    if kind in BUILT:
        # Built: either usable or it says why not (no device, or none on this OS).
        if getattr(ember, f"{kind}_is_available")():
            assert getattr(ember.Device, kind)(0).kind == kind
        else:
            with pytest.raises((ember.BackendUnavailableError, ember.DeviceNotFoundError)):
                getattr(ember.Device, kind)(0)
        return
    for make in (lambda: getattr(ember.Device, kind)(), lambda: ember.device(kind)):
        with pytest.raises(ember.BackendUnavailableError) as info:
            make()
        e = info.value
        assert isinstance(e, RuntimeError) and isinstance(e, ember.EmberError)
        assert e.kind == kind
        assert isinstance(e.reason, str) and e.reason
        assert kind in str(e)
        assert "not built" in str(e)


@pytest.mark.parametrize("kind", GPU_KINDS)
def test_negative_ordinal(kind):
    # On a built backend a negative ordinal is "not found"; unbuilt, the backend is missing.
    expected = ember.DeviceNotFoundError if kind in BUILT else ember.BackendUnavailableError
    if kind in BUILT and not getattr(ember, f"{kind}_is_available")():
        expected = (ember.DeviceNotFoundError, ember.BackendUnavailableError)
    with pytest.raises(expected):
        ember.device(f"{kind}:-1")
    with pytest.raises(expected):
        getattr(ember.Device, kind)(-1)


@pytest.mark.parametrize("kind", GPU_KINDS)
def test_ordinal_out_of_range(kind):
    count = getattr(ember, f"{kind}_device_count")()
    if count == 0:
        with pytest.raises((ember.BackendUnavailableError, ember.DeviceNotFoundError)):
            ember.device(f"{kind}:{count}")
        return
    with pytest.raises(ember.DeviceNotFoundError) as info:
        getattr(ember.Device, kind)(count)
    e = info.value
    assert isinstance(e, IndexError)
    assert (e.kind, e.ordinal, e.count) == (kind, count, count)
    assert str(count) in str(e)


def test_cpu_ordinal_out_of_range():
    with pytest.raises(ember.DeviceNotFoundError) as info:
        ember.device("cpu:1")
    assert (info.value.kind, info.value.ordinal, info.value.count) == ("cpu", 1, 1)


@pytest.mark.parametrize(
    "spec", ["gpu", "cuda:x", "metal:", "cpu:1.5", "", ":0", "tpu:0", "cuda:0:1", "cuda: 1"]
)
def test_bad_spec_is_invalid_argument(spec):
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.device(spec)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ember.EmberError)


@pytest.mark.parametrize("spec", [3, None, 1.5, b"cpu", ["cpu"]])
def test_non_string_spec_is_invalid_type(spec):
    with pytest.raises(ember.InvalidTypeError):
        ember.device(spec)


# ---- moves


def test_to_device_same_device_keeps_values_and_device(device):
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    u = t.to_device(device)
    assert u.device.same_device(device)
    assert u.device.id == t.device.id
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    # same device: the very tensor, so it shares storage
    u += 1
    np.testing.assert_array_equal(t.numpy(), [[2.0, 3.0], [4.0, 5.0]])


def test_to_device_by_spec(device):
    t = ember.arange(6, device=device)
    u = t.to_device(device.kind)
    assert u.device.same_device(device)
    np.testing.assert_array_equal(u.numpy(), np.arange(6))


def test_to_device_roundtrip_through_cpu(device, dtype):
    from helpers import NP_DTYPE, edtype, require_dtype

    if not require_dtype(device, dtype):
        return
    values = np.arange(12).reshape(3, 4).astype(NP_DTYPE[dtype])
    cpu = ember.tensor(values, dtype=edtype(dtype))
    on = cpu.to_device(device)
    assert on.device.same_device(device)
    assert on.dtype == edtype(dtype)
    back = on.to_device("cpu")
    assert back.device.same_device(ember.Device.cpu())
    np.testing.assert_array_equal(back.numpy(), values)
    # a non-contiguous view moves as its values
    moved = cpu.t().to_device(device)
    np.testing.assert_array_equal(moved.numpy(), values.T)


def test_to_accepts_devices_and_dtypes(device):
    t = ember.tensor([1.5, 2.5], device=device)
    assert t.to(ember.float64 if device.kind != "metal" else ember.float16).device.same_device(
        device
    )
    assert t.to(device).device.same_device(device)
    assert t.to(ember.int64).dtype == ember.int64
    np.testing.assert_array_equal(t.to(ember.int64).numpy(), [1, 2])


# ---- real GPU instances (run only where the backend is available)

metal_only = pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
cuda_only = pytest.mark.skipif(not ember.cuda_is_available(), reason="no CUDA device here")


@metal_only
def test_metal_instances_are_distinct():
    a = ember.Device.metal(0)
    b = ember.Device.metal(0)
    assert a.id != b.id
    assert not a.same_device(b)
    assert a != b
    assert a.kind == "metal" and a.ordinal == 0
    assert repr(a) == f"Device(metal:0, id={a.id})"
    assert ember.device("metal:0").same_device(ember.device("metal"))
    assert not ember.device("metal:0").same_device(a)
    assert a.created_at.startswith("test_device.py:")
    assert "test_metal_instances_are_distinct" in a.created_at


@metal_only
def test_metal_instances_do_not_mix():
    a = ember.Device.metal(0)
    b = ember.Device.metal(0)
    x = ember.ones(3, device=a)
    y = ember.ones(3, device=b)
    with pytest.raises(ember.DeviceMismatchError) as info:
        x + y
    e = info.value
    msg = str(e)
    assert e.op == "add"
    assert e.lhs.same_device(a) and e.rhs.same_device(b)
    assert f"id={a.id}" in msg and f"id={b.id}" in msg
    assert "instances" in msg
    assert 'ember.device("metal:0")' in msg
    with pytest.raises(ember.MoveNotImplementedError) as minfo:
        x.to_device(b)
    assert isinstance(minfo.value, NotImplementedError)
    assert minfo.value.src.same_device(a) and minfo.value.dst.same_device(b)
    assert "cpu" in str(minfo.value).lower()
    # the documented route: through the CPU
    z = x.to_device("cpu").to_device(b) + y
    np.testing.assert_array_equal(z.numpy(), [2, 2, 2])


@cuda_only
def test_cuda_shared_and_new_stream():
    a = ember.Device.cuda(0)
    b = ember.Device.cuda(0)
    assert a.same_device(b) and a.id == b.id
    assert ember.device("cuda:0").same_device(a)
    c = ember.Device.cuda(0, new_stream=True)
    assert c.id != a.id and not c.same_device(a)
    assert c.kind == "cuda" and c.ordinal == 0
    assert c.created_at.startswith("test_device.py:")
    x = ember.arange(5, dtype=ember.float32, device=a)
    with pytest.raises(ember.DeviceMismatchError) as info:
        x + ember.ones(5, device=c)
    msg = str(info.value)
    assert f"id={a.id}" in msg and f"id={c.id}" in msg
    assert "instances" in msg
    assert 'ember.device("cuda:0")' in msg
    # CUDA -> CUDA is a device-to-device copy
    y = x.to_device(c)
    assert y.device.same_device(c)
    np.testing.assert_array_equal((y + ember.ones(5, device=c)).numpy(), np.arange(1, 6))


@pytest.mark.skipif(
    not (ember.cuda_is_available() or ember.metal_is_available()), reason="no GPU here"
)
def test_cpu_gpu_mismatch_names_both_and_the_fix():
    gpu = ember.device("cuda" if ember.cuda_is_available() else "metal")
    a = ember.ones(2, 2)
    b = ember.ones(2, 2, device=gpu)
    with pytest.raises(ember.DeviceMismatchError) as info:
        ember.matmul(a, b)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.op == "matmul"
    assert e.lhs.same_device(ember.Device.cpu()) and e.rhs.same_device(gpu)
    msg = str(e)
    assert "cpu:0" in msg and f"{gpu.kind}:0" in msg
    assert "id=0" in msg and f"id={gpu.id}" in msg
    assert "to_device" in msg
    # moving one side fixes it
    np.testing.assert_array_equal((a.to_device(gpu) @ b).numpy(), np.full((2, 2), 2.0))


@pytest.mark.skipif(
    not (ember.cuda_is_available() or ember.metal_is_available()), reason="no GPU here"
)
def test_gpu_check_order_shapes_then_devices_then_dtypes():
    gpu = ember.device("cuda" if ember.cuda_is_available() else "metal")
    cpu_f = ember.zeros(2, 3)
    with pytest.raises(ember.ShapeMismatchError):
        cpu_f + ember.zeros(4, 5, dtype=ember.int64, device=gpu)
    with pytest.raises(ember.DeviceMismatchError):
        cpu_f + ember.zeros(2, 3, dtype=ember.int64, device=gpu)
