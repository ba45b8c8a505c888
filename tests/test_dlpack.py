"""DLPack both ways: CPU and CUDA tensors export zero-copy keeping their dtype (bfloat16
included) and their storage alive; Metal tensors refuse with DLPackError (a BufferError);
import takes objects with __dlpack__ and raw capsules, every dtype ember has, CPU and CUDA
memory, and shares the producer's memory (strided views, the producer kept alive,
read-only copied). On CUDA the stream protocol orders each side's work before the other
reads (design §10)."""

from __future__ import annotations

import ctypes
import gc

import ember
import numpy as np
import pytest
from helpers import DTYPES, NP_DTYPE, long_identity_chain
from numpy.lib.stride_tricks import as_strided

NUMPY_DTYPES = [d for d in DTYPES if d != "bfloat16"]


def test_dlpack_device_is_cpu():
    assert ember.zeros(2).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_reads_ember_without_copy(dtype):
    t = ember.arange(6).to_dtype(dtype).reshape(2, 3)
    a = np.from_dlpack(t)
    assert a.dtype == NP_DTYPE[dtype] and a.shape == (2, 3)
    np.testing.assert_array_equal(a, t.numpy())
    t[0, 0] = 1  # the same memory (0 before, in every dtype)
    assert a[0, 0] == 1


def test_export_of_views_keeps_strides_and_offset():
    t = ember.arange(24).to_dtype("float32").reshape(4, 6)
    for view, ref in [(t.T, np.arange(24.0).reshape(4, 6).T), (t[1:, ::2], None)]:
        expected = view.numpy() if ref is None else ref
        np.testing.assert_array_equal(np.from_dlpack(view), expected)


def test_export_keeps_the_storage_alive():
    a = np.from_dlpack(ember.arange(1000).to_dtype("float64") + 1)
    gc.collect()
    ember.zeros(1000, dtype="float64") + 7  # reuse of freed memory would show here
    np.testing.assert_array_equal(a, np.arange(1000.0) + 1)


def test_copy_true_exports_a_copy():
    t = ember.zeros(3)
    a = np.from_dlpack(t, copy=True)
    t[0] = 1.0
    assert a[0] == 0.0


def test_versioned_and_legacy_capsules():
    t = ember.arange(3)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(t.__dlpack__())


@pytest.mark.parametrize("dtype", DTYPES)
def test_raw_capsule_round_trip_keeps_every_dtype(dtype):
    t = ember.arange(5).to_dtype(dtype)
    for capsule in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        back = ember.from_dlpack(capsule)
        assert back.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_a_capsule_is_consumed_once():
    capsule = ember.zeros(2).__dlpack__()
    ember.from_dlpack(capsule)
    with pytest.raises(ember.DLPackError):
        ember.from_dlpack(capsule)


@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "float64", "int64", "int32", "uint32", "uint8"]
)
def test_ember_reads_numpy(dtype):
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    for src in (a, a.T, a[::-1, 1::2]):
        t = ember.from_dlpack(src)
        assert t.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(t.numpy(), src)


def test_ember_reads_numpy_bool_and_int32_and_refuses_int16():
    b = ember.from_dlpack(np.array([True, False, True])[::2])  # kDLBool, 8 bits
    assert b.dtype == ember.bool and b.tolist() == [True, True]
    i = ember.from_dlpack(np.array([-5, 7], dtype=np.int32))  # kDLInt, 32 bits
    assert i.dtype == ember.int32 and i.tolist() == [-5, 7]
    m = np.from_dlpack(ember.tensor([True, False]))
    assert m.dtype == np.bool_ and m.tolist() == [True, False]
    assert np.from_dlpack(ember.tensor(np.int32([3]))).dtype == np.int32
    with pytest.raises(ember.DLPackError) as info:
        ember.from_dlpack(np.zeros(2, np.int16))
    assert isinstance(info.value, BufferError) and "no ember dtype" in str(info.value)


def test_from_dlpack_dtype_and_device(device):
    t = ember.from_dlpack(np.arange(3.0), dtype="float32", device=device)
    assert t.dtype == ember.float32 and t.device.same_device(device)


def test_device_private_memory_refuses_and_names_the_route(device):
    t = ember.zeros(2, device=device)
    if device.kind == "cpu":
        assert np.from_dlpack(t).shape == (2,)
        return
    assert t.__dlpack_device__() == ({"cuda": 2, "metal": 8}[device.kind], device.ordinal)
    if device.kind == "cuda":  # shared in place: see the CUDA tests below
        return
    with pytest.raises(ember.DLPackError) as info:
        t.__dlpack__()
    assert isinstance(info.value, BufferError) and 't.to_device("cpu")' in str(info.value)
    assert "private to the device" in str(info.value)


class ForeignArray:
    def __init__(self, where):
        self.where = where

    def __dlpack_device__(self):
        return self.where

    def __dlpack__(self, **kwargs):
        raise AssertionError("must not be asked for data")


def test_import_refuses_memory_it_cannot_reach():
    with pytest.raises(ember.DLPackError) as info:
        ember.from_dlpack(ForeignArray((8, 0)))  # Metal memory
    assert "(8, 0)" in str(info.value) and "only CPU and CUDA memory" in str(info.value)
    if not ember.cuda_is_available():  # CUDA memory, and no CUDA here: says why
        with pytest.raises(ember.BackendUnavailableError):
            ember.from_dlpack(ForeignArray((2, 0)))


def test_import_refuses_objects_without_dlpack():
    with pytest.raises(ember.InvalidTypeError):
        ember.from_dlpack([1, 2])


def test_export_refuses_streams_and_other_devices():
    t = ember.zeros(2)
    with pytest.raises(ember.DLPackError):
        t.__dlpack__(stream=1)
    with pytest.raises(ember.DLPackError):
        t.__dlpack__(dl_device=(2, 0))
    assert t.__dlpack__(dl_device=(1, 0)) is not None


@pytest.mark.parametrize(
    "kwargs,arg",
    [({"dl_device": "cpu"}, "dl_device"), ({"dl_device": (1,)}, "dl_device"),
     ({"max_version": 1}, "max_version"), ({"max_version": (1, "0")}, "max_version"),
     ({"copy": 1}, "copy"), ({"copy": "yes"}, "copy")],
)  # fmt: skip
def test_export_arguments_of_the_wrong_type_are_named(kwargs, arg):
    with pytest.raises(ember.InvalidTypeError, match=f"__dlpack__.*{arg}"):
        ember.zeros(2).__dlpack__(**kwargs)


def test_reversed_and_broadcast_views_are_exported_as_copies():
    # No consumer may write one element through many, and most refuse negative strides.
    e = ember.ones(1).expand(3)
    a = np.from_dlpack(e)
    a[0] = 5.0
    assert a.tolist() == [5.0, 1.0, 1.0] and e.tolist() == [1.0, 1.0, 1.0]
    r = ember.arange(4.0)[::-1]
    np.testing.assert_array_equal(np.from_dlpack(r), [3.0, 2.0, 1.0, 0.0])
    with pytest.raises(ember.DLPackError, match="zero or negative stride"):
        r.__dlpack__(copy=False)
    t = ember.arange(4.0)  # an ordinary view is still shared
    view = np.from_dlpack(t[1:])
    t[1] = 9.0
    assert view[0] == 9.0


def test_torch_takes_a_reversed_view():
    torch = pytest.importorskip("torch")
    r = ember.arange(4.0).reshape(2, 2)[::-1, ::-1]
    assert torch.from_dlpack(r).tolist() == [[3.0, 2.0], [1.0, 0.0]]


def test_torch_both_ways():
    torch = pytest.importorskip("torch")  # the numpy tests above cover the rest
    t = ember.arange(4).to_dtype("bfloat16")
    x = torch.from_dlpack(t)
    assert x.dtype == torch.bfloat16 and x.tolist() == [0.0, 1.0, 2.0, 3.0]
    back = ember.from_dlpack(torch.arange(4, dtype=torch.bfloat16))
    assert back.dtype == ember.bfloat16 and back.tolist() == [0.0, 1.0, 2.0, 3.0]


# ---- zero-copy import


def test_import_shares_memory_with_numpy_both_ways():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_dlpack(arr)
    arr[0, 1] = 100.0
    assert t[0, 1].item() == 100.0
    t[1, 2] = -5.0
    assert arr[1, 2] == -5.0
    t += 1  # an op writing in place, through the kernels
    np.testing.assert_array_equal(arr, [[1, 101, 3], [4, 5, -4]])


def test_a_legacy_capsule_shares_memory_too():
    arr = np.zeros(4, dtype=np.int64)
    t = ember.from_dlpack(arr.__dlpack__())
    arr[3] = 9
    assert t.tolist() == [0, 0, 0, 9]


@pytest.mark.parametrize(
    "view",
    [
        lambda b: b[::2, ::-3],  # stepped and reversed
        lambda b: b.T,
        lambda b: b[1:3, 2:],  # an offset into the base
        lambda b: as_strided(b[0], (3, 6), (0, 8)),  # a zero stride (writeable, unlike
        # np.broadcast_to's read-only arrays, which are copied)
    ],
)
def test_a_strided_producer_becomes_a_strided_view(view):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    arr = view(base)
    t = ember.from_dlpack(arr)
    np.testing.assert_array_equal(t.numpy(), arr)
    base[...] = -base  # every element of the base changes: the view sees it
    np.testing.assert_array_equal(t.numpy(), arr)
    assert t.numpy()[-1, -1] == arr[-1, -1] != 0


def test_a_broadcast_import_refuses_writes():
    t = ember.from_dlpack(as_strided(np.zeros(3, dtype=np.float32), (2, 3), (0, 4)))
    with pytest.raises(ember.InvalidArgumentError):
        t += 1


def test_a_read_only_array_is_copied_and_never_written():
    arr = np.arange(4, dtype=np.float32)
    arr.flags.writeable = False
    t = ember.from_dlpack(arr)
    t[0] = 7.0
    assert arr[0] == 0.0 and t[0].item() == 7.0


def test_the_producer_lives_until_the_last_view_dies():
    import weakref

    arr = np.arange(1000, dtype=np.float64)
    alive = weakref.ref(arr)
    t = ember.from_dlpack(arr)
    view = t[500:]
    del arr, t
    gc.collect()
    assert alive() is not None  # the ember view keeps the numpy array
    ember.zeros(1000, dtype="float64") + 7  # reuse of freed memory would show here
    assert view[0].item() == 500.0
    del view
    gc.collect()
    assert alive() is None  # and lets it go with the last view


# A producer of raw capsules written with ctypes, whose deleter counts its calls.
class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_CAPSULE_NAME = b"dltensor"  # PyCapsule keeps the pointer: it must outlive the capsule
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def test_a_raw_capsules_deleter_runs_once_when_the_last_view_dies():
    arr = np.arange(8, dtype=np.float32)
    shape = (ctypes.c_int64 * 1)(8)
    calls = []
    deleter = _DELETER(lambda ptr: calls.append(ptr))
    managed = _DLManagedTensor(_DLTensor(arr.ctypes.data, 1, 0, 1, 2, 32, 1, shape, None, 0))
    managed.deleter = deleter
    t = ember.from_dlpack(_new_capsule(ctypes.addressof(managed), _CAPSULE_NAME, None))
    half = t[4:]
    arr[5] = -1.0
    assert half[1].item() == -1.0  # the producer's memory, not a copy
    del t
    gc.collect()
    assert calls == []  # a view is still alive
    del half
    gc.collect()
    assert calls == [ctypes.addressof(managed)]


# ---- CUDA: zero-copy both ways, the stream protocol

cuda_only = pytest.mark.skipif(not ember.cuda_is_available(), reason="needs a CUDA GPU")


@cuda_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_tensors_go_to_torch_and_back_in_place(dtype):
    torch = pytest.importorskip("torch")
    if dtype == "uint32":  # torch's uint32 has almost no CUDA kernels: the dtype only
        x = torch.from_dlpack(ember.arange(3, device="cuda").to_dtype(dtype))
        assert x.dtype == torch.uint32 and x.is_cuda
        assert ember.from_dlpack(x).tolist() == [0, 1, 2]
        return
    d = ember.Device.cuda(0, new_stream=True)
    t = ember.arange(12, device=d).to_dtype(dtype).reshape(3, 4)
    x = torch.from_dlpack(t.T)  # a strided view, shared
    assert x.device == torch.device("cuda", 0) and str(x.dtype) == f"torch.{dtype}"
    assert x.shape == (4, 3) and x.stride() == (1, 4)
    assert x.cpu().float().tolist() == t.T.to_dtype("float64").tolist()
    big, seven = (True, True) if dtype == "bool" else (100, 7)  # a bool holds True
    x[0, 1] = big  # torch writes ember's memory; torch's stream is not ember's: sync
    torch.cuda.synchronize()
    assert t[1, 0].item() == big
    back = ember.from_dlpack(x, device=d)  # torch memory, on ember's stream d
    assert back.device.same_device(d) and back.dtype == getattr(ember, dtype)
    back[3, 2] = seven  # ember writes torch's memory
    d.synchronize()
    assert x[3, 2].item() == seven and t[2, 3].item() == seven


@cuda_only
def test_torch_reads_after_ember_s_queued_work():
    torch = pytest.importorskip("torch")
    d = ember.Device.cuda(0, new_stream=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 4096)).astype(np.float32)
    y = long_identity_chain(d, x)  # still running on d's stream
    # torch passes its current stream: it waits on the GPU for d's products
    got = torch.from_dlpack(y).cpu().numpy()
    np.testing.assert_array_equal(got, x)


@cuda_only
def test_ember_reads_after_torch_s_queued_work():
    torch = pytest.importorskip("torch")
    d = ember.Device.cuda(0, new_stream=True)
    x = torch.randn(4096, 4096, device="cuda")
    eye = torch.eye(4096, device="cuda")
    y = x
    for _ in range(40):  # queued on torch's stream
        y = y @ eye
    t = ember.from_dlpack(y, device=d)  # d's stream waits for torch's, on the GPU
    np.testing.assert_array_equal(t.numpy(), x.cpu().numpy())


@cuda_only
def test_cuda_export_checks_the_stream_and_the_device():
    d = ember.device("cuda")
    t = ember.zeros(2, device=d)
    assert t.__dlpack__(stream=-1) is not None  # the consumer orders itself
    assert t.__dlpack__(stream=2, dl_device=(2, 0)) is not None
    with pytest.raises(ember.DLPackError) as info:
        t.__dlpack__(stream=0)
    assert "stream=0 is ambiguous" in str(info.value)
    with pytest.raises(ember.DLPackError) as info:
        t.__dlpack__(dl_device=(1, 0))
    assert "(2, 0)" in str(info.value) and "to_device" in str(info.value)
    # ember to ember: the same memory on another instance, ordered by events
    other = ember.Device.cuda(0, new_stream=True)
    shared = ember.from_dlpack(t, device=other)
    assert shared.device.same_device(other)
    shared += 3
    other.synchronize()
    assert t.tolist() == [3.0, 3.0]
    on_cpu = ember.from_dlpack(t, device="cpu")  # the move is explicit: device= asked for it
    assert on_cpu.device.kind == "cpu" and on_cpu.tolist() == [3.0, 3.0]
