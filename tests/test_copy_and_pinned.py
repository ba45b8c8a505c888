"""Tensor.copy_ (PyTorch's in-place copy from any device) and pinned host memory
(Tensor.pin_memory / is_pinned): what a PyTorch user writes for fast host <-> GPU moves."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import check_exact, edtype, rand_array, require_dtype

HAVE_CUDA = ember.cuda_is_available()
cuda_only = pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA GPU (run on the H200)")


def test_copy_into_a_tensor_of_the_same_device(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (3, 4), dtype)
    dst = ember.zeros(3, 4, dtype=edtype(dtype), device=device)
    got = dst.copy_(ember.tensor(x, device=device))
    assert got is dst
    check_exact(dst, x, dtype)


def test_copy_broadcasts_and_casts(device):
    dst = ember.zeros(2, 3, device=device)
    dst.copy_(ember.tensor([1, 2, 3], dtype=ember.int64, device=device))
    np.testing.assert_array_equal(dst.numpy(), np.array([[1, 2, 3], [1, 2, 3]], np.float32))
    assert dst.dtype == ember.float32


def test_copy_between_the_host_and_a_device_both_ways(device, rng):
    x = rand_array(rng, (5, 7), "float32")
    on_dev = ember.zeros(5, 7, device=device)
    on_dev.copy_(ember.tensor(x))  # host -> device
    np.testing.assert_array_equal(on_dev.numpy(), x)
    host = ember.empty(5, 7)
    host.copy_(ember.tensor(x, device=device) * 2)  # device -> host, straight into host
    np.testing.assert_array_equal(host.numpy(), x * 2)
    view = ember.zeros(5, 14)[:, ::2]  # a strided host view: through a move, then a copy
    view.copy_(ember.tensor(x, device=device))
    np.testing.assert_array_equal(view.numpy(), x)
    cast = ember.zeros(5, 7, dtype=ember.float64)  # another dtype: moved, then cast
    cast.copy_(ember.tensor(x, device=device))
    np.testing.assert_array_equal(cast.numpy(), x.astype(np.float64))


def test_copy_refuses_what_cannot_be_broadcast_or_written(device):
    dst = ember.zeros(2, 3, device=device)
    with pytest.raises(ember.ShapeMismatchError):
        dst.copy_(ember.ones(4, device=device))
    with pytest.raises(ember.ShapeMismatchError):
        ember.zeros(2, 3).copy_(ember.ones(4, device=device))
    overlapping = ember.zeros(3, device=device).expand(2, 3)
    with pytest.raises(ember.InvalidArgumentError) as info:
        overlapping.copy_(ember.ones(2, 3, device=device))
    assert "copy_" in str(info.value)


def test_host_tensors_are_not_pinned_by_default():
    assert not ember.ones(3).is_pinned()
    assert not ember.tensor(np.ones(3, np.float32)).is_pinned()


def test_pinning_without_a_gpu_backend_says_why():
    if HAVE_CUDA:
        pytest.skip("a usable CUDA GPU is here: pinning works (see the CUDA tests below)")
    with pytest.raises(ember.BackendUnavailableError) as info:
        ember.ones(3).pin_memory()
    msg = str(info.value)
    assert "pin_memory" in msg and "page-locked" in msg
    assert info.value.reason


def test_only_host_tensors_can_be_pinned(device):
    if device.kind == "cpu":
        return
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.ones(3, device=device).pin_memory()
    assert "pin_memory" in str(info.value) and "host" in str(info.value)
    assert not ember.ones(3, device=device).is_pinned()  # device memory, as torch says


@cuda_only
def test_cuda_pinned_memory_keeps_values_and_views_and_moves_both_ways(dtype, rng):
    d = ember.device("cuda")
    x = rand_array(rng, (64, 33), dtype)
    src = ember.tensor(x, dtype=edtype(dtype))
    pinned = src.pin_memory()
    assert pinned.is_pinned() and not src.is_pinned()
    assert pinned.device.same_device(ember.device("cpu")) and pinned.dtype == src.dtype
    check_exact(pinned, x, dtype)
    assert pinned[1:, 3].is_pinned()  # a view of pinned memory is pinned
    check_exact(pinned.to_device(d), x, dtype)  # H2D straight from pinned memory
    back = ember.empty(64, 33, dtype=edtype(dtype)).pin_memory()
    assert back.copy_(pinned.to_device(d)) is back  # D2H straight into pinned memory
    check_exact(back, x, dtype)


@cuda_only
def test_cuda_large_pinned_moves_are_exact_and_ordered_after_queued_work(rng):
    d = ember.Device.cuda(0, new_stream=True)
    x = rand_array(rng, (4096, 4096), "float32")  # 64 MiB: past the direct-copy size
    pinned = ember.tensor(x).pin_memory()
    on_gpu = pinned.to_device(d)
    y = on_gpu * 2  # queued; the copy below must wait for it
    host = ember.empty(4096, 4096).pin_memory()
    host.copy_(y)
    np.testing.assert_array_equal(host.numpy(), x * 2)
    del pinned  # freed at once: the H2D copy was complete when to_device returned
    np.testing.assert_array_equal(on_gpu.numpy(), x)


# Permuted views made contiguous (a transpose of the last two dims, with and without batch
# dims before them; sizes off the 32-element tiles a GPU moves them in), each element size.
TRANSPOSES = [((100, 70), (1, 0)), ((3, 45, 33), (0, 2, 1)), ((5, 64, 64), (2, 1, 0)),
              ((2, 3, 40, 50), (0, 1, 3, 2)), ((9, 300), (1, 0))]


@pytest.mark.parametrize("shape,perm", TRANSPOSES)
@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16", "bool"])
def test_transposed_views_made_contiguous(device, shape, perm, name, rng):
    if not require_dtype(device, name):
        return
    x = rand_array(rng, shape, name)
    t = ember.tensor(x, device=device) if name != "bfloat16" else ember.tensor(
        x.astype(np.float32), device=device).to_dtype(ember.bfloat16)
    u = t.permute(*perm).contiguous()
    assert u.is_contiguous()
    check_exact(u, np.transpose(x, perm), name, device)
    # and copied into a slice of a wider tensor (a strided destination)
    w = ember.zeros((*u.shape[:-1], u.shape[-1] + 3), dtype=edtype(name), device=device)
    w[..., 1:-2] = t.permute(*perm)
    want = np.zeros((*u.shape[:-1], u.shape[-1] + 3), dtype=np.transpose(x, perm).dtype)
    want[..., 1:-2] = np.transpose(x, perm)
    check_exact(w, want, name, device)


@pytest.mark.parametrize("name", ["float32", "int32", "int64", "float16", "uint8"])
def test_transposes_of_sliced_views_in_whole_and_partial_blocks(device, name, rng):
    """A transpose copied in blocks (16 x 16 on the CPU) from views whose rows are longer
    than the block walk (a slice: the source's stride is not its row length), with both
    dims whole multiples of the block and with ragged edges, batched and not."""
    if not require_dtype(device, name):
        return
    x = rand_array(rng, (3, 70, 90), name)
    t = ember.tensor(x, device=device)
    for sl in (np.s_[1, 3:51, 5:69], np.s_[:, 2:66, 7:39], np.s_[0, 4:67, 1:80], np.s_[2, 0:16, 0:16]):
        check_exact(t[sl].transpose(-1, -2).contiguous(), np.swapaxes(x[sl], -1, -2), name, device)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_copies_a_transpose_in_tiles():
    """A transposed copy runs one threadgroup per 32 x 32 tile (reads and writes both in
    runs), not one lane per element."""
    d = ember.device("metal")
    t = ember.ones((3, 100, 70), device=d)
    before = d.queue_stats()
    t.transpose(1, 2).contiguous()
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 1
    assert after["threadgroups"] - before["threadgroups"] == 3 * 4 * 3
