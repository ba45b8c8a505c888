"""Data-parallel training through torch.distributed (gloo, two processes): the gradients
of ember tensors are all-reduced in place through DLPack, with no copy. Both processes end
with the same weights, equal to one process trained on the whole batch."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the collectives are torch.distributed's
dist = pytest.importorskip("torch.distributed")

_spec = importlib.util.spec_from_file_location(
    "data_parallel", os.path.join(os.path.dirname(__file__), "..", "examples", "05_data_parallel.py")
)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="no gloo")
def test_two_gloo_processes_train_as_one(tmp_path):
    ranks = example.run(2, 10, str(tmp_path))
    alone = example.train(0, 1, 10)
    assert set(ranks[0]) == set(alone) == {"w1", "b1", "w2", "b2"}
    for name, want in alone.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], want, rtol=1e-5, atol=1e-6)
    # the all-reduce reached ember's memory: without it, each rank trains on its own half
    alone_half = example.train(0, 2, 10)
    assert not np.allclose(alone_half["w1"], ranks[0]["w1"], rtol=1e-5, atol=1e-6)


def _two_gpus() -> bool:
    import ember

    return ember.cuda_is_available() and ember.cuda_device_count() >= 2


@pytest.mark.skipif(not dist.is_available() or not dist.is_nccl_available() or not _two_gpus(),
                    reason="NCCL needs two CUDA GPUs")  # fmt: skip
def test_nccl_processes_one_gpu_each_train_as_one(tmp_path):
    import ember

    world = ember.cuda_device_count()
    ranks = example.run(world, 10, str(tmp_path), "nccl")
    alone = example.train(0, 1, 10, device="cuda:0")
    for name, want in alone.items():
        for r in range(1, world):
            np.testing.assert_array_equal(ranks[0][name], ranks[r][name])
        np.testing.assert_allclose(ranks[0][name], want, rtol=1e-5, atol=1e-6)
    alone_part = example.train(0, world, 10, device="cuda:0")
    assert not np.allclose(alone_part["w1"], ranks[0]["w1"], rtol=1e-5, atol=1e-6)


def test_dlpack_shares_a_gradients_memory():
    import ember

    w = ember.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    view = torch.from_dlpack(w.grad)
    view.mul_(5)  # as an in-place all-reduce would
    np.testing.assert_array_equal(w.grad.numpy(), [10.0, 10.0, 10.0])
