"""Fixtures shared by the whole suite.

`device` runs a test once per available device: always the CPU, plus Metal and CUDA
when the machine has them. The same tests run on every backend, so an op missing on
one backend is a failing test there, never a skip.

`dtype` runs a test once per ember dtype (as a name, e.g. "bfloat16"); a test that
gets a dtype its device lacks asserts UnsupportedDTypeError (helpers.require_dtype).
"""

from __future__ import annotations

import os
import sys

import ember
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from helpers import DTYPES  # noqa: E402

settings.register_profile(
    "ember",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ember")


def available_device_specs() -> list[str]:
    specs = ["cpu"]
    if ember.metal_is_available():
        specs.append("metal")
    if ember.cuda_is_available():
        specs.append("cuda")
    return specs


DEVICE_SPECS = available_device_specs()


@pytest.fixture(scope="session", params=DEVICE_SPECS, ids=DEVICE_SPECS)
def device(request):
    """The process-wide cached device of each available kind (ordinal 0)."""
    return ember.device(request.param)


@pytest.fixture(scope="session", params=DTYPES, ids=DTYPES)
def dtype(request):
    """Each of the nine ember dtypes, by name."""
    return request.param


@pytest.fixture
def rng(request):
    """A numpy generator seeded from the test's id, so every test is reproducible."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)


@pytest.fixture
def deterministic():
    """ember.use_deterministic_algorithms(True) for one test, then as it was: for the tests
    that assert float adds in index order (scatter_add, index_add), which CUDA otherwise adds
    atomically in any order, as PyTorch does."""
    was = ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True)
    yield
    ember.use_deterministic_algorithms(was)
