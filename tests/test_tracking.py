"""Tensor provenance: ember.set_tracking / EMBER_TRACK_TENSORS=1 record where each tensor is
created, and a DeviceMismatchError names both tensors' creation sites."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import ember
import numpy as np
import pytest


def here() -> int:
    """The caller's line number: `x, line = make(), here()` on one line."""
    return sys._getframe(1).f_lineno


def site(line: int, function: str) -> str:
    return f"{__file__}:{line} in {function}"


@pytest.fixture
def tracking():
    before = ember.is_tracking()
    ember.set_tracking(True)
    yield
    ember.set_tracking(before)


def gpus() -> list[str]:
    return [k for k in ("metal", "cuda") if getattr(ember, f"{k}_is_available")()]


def apart_from(device):
    """A Device whose tensors do not mix with device's: another queue of the same GPU,
    or a GPU for the CPU (which has only one Device)."""
    if device.kind == "metal":
        return ember.Device.metal(0)
    if device.kind == "cuda":
        return ember.Device.cuda(0, new_stream=True)
    if not gpus():
        pytest.skip("the CPU has one Device, and this machine has no GPU to mix it with")
    return ember.device(gpus()[0])


def make_lhs(device):
    return ember.ones(3, device=device), here()


def make_rhs(device):
    return ember.zeros(3, device=device), here()


def test_off_by_default_in_a_fresh_interpreter():
    env = {k: v for k, v in os.environ.items() if k != "EMBER_TRACK_TENSORS"}
    code = "import ember; t = ember.ones(2); print(ember.is_tracking(), t.creation_site)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "None"]


def test_mismatch_names_both_sites(device, tracking):
    other = apart_from(device)
    (a, la), (b, lb) = make_lhs(device), make_rhs(other)
    assert a.creation_site == site(la, "make_lhs")
    assert b.creation_site == site(lb, "make_rhs")
    with pytest.raises(ember.DeviceMismatchError) as info:
        a + b
    e = info.value
    assert (e.lhs_site, e.rhs_site) == (site(la, "make_lhs"), site(lb, "make_rhs"))
    assert f"the lhs tensor was created at {site(la, 'make_lhs')}" in str(e)
    assert f"the rhs tensor was created at {site(lb, 'make_rhs')}" in str(e)
    assert e.op == "add" and e.lhs.same_device(device) and e.rhs.same_device(other)
    with pytest.raises(ember.DeviceMismatchError) as info:  # the sides follow the operands
        ember.matmul(b.reshape(1, 3), a.reshape(3, 1))
    assert (info.value.lhs_site, info.value.rhs_site) == (b.creation_site, a.creation_site)


def test_off_the_message_says_how_to_turn_it_on(device):
    if ember.is_tracking():
        pytest.skip("EMBER_TRACK_TENSORS is set for this run")
    a, b = ember.ones(3, device=device), ember.ones(3, device=apart_from(device))
    assert a.creation_site is None
    with pytest.raises(ember.DeviceMismatchError) as info:
        a * b
    assert info.value.lhs_site is None and info.value.rhs_site is None
    assert "ember.set_tracking(True)" in str(info.value)
    assert "EMBER_TRACK_TENSORS=1" in str(info.value)


def test_views_report_their_base_and_moves_a_new_site(device, tracking):
    base, line = ember.arange(6, device=device).reshape(2, 3), here()
    assert base.creation_site == site(line, "test_views_report_their_base_and_moves_a_new_site")
    assert base.T.creation_site == base.creation_site
    assert base[1].creation_site == base.creation_site
    moved, line2 = base.to_device(ember.device("cpu")).clone(), here()
    assert moved.creation_site == site(line2, "test_views_report_their_base_and_moves_a_new_site")


def test_ember_own_python_frames_are_skipped(device, tracking):
    # ember.tensor and max(dim) run Python code inside the ember package first
    t, line = ember.tensor([[1.0, 5.0], [3.0, 2.0]], device=device), here()
    values, line2 = t.max(dim=1).values, here()
    name = "test_ember_own_python_frames_are_skipped"
    assert t.creation_site == site(line, name)
    assert values.creation_site == site(line2, name)


def test_tensors_made_before_tracking_keep_no_site(device):
    before = ember.is_tracking()
    ember.set_tracking(False)
    old = ember.ones(3, device=device)
    ember.set_tracking(True)
    try:
        view = old.reshape(3, 1)  # handed to Python while on, but its storage is older
        new = ember.ones(3, device=apart_from(device))
        assert view.creation_site is None and old.creation_site is None
        with pytest.raises(ember.DeviceMismatchError) as info:
            old + new
        assert info.value.lhs_site is None and info.value.rhs_site == new.creation_site
        assert "the lhs tensor has no recorded origin" in str(info.value)
    finally:
        ember.set_tracking(before)


@pytest.mark.skipif(not gpus(), reason="a numpy operand mixes only with a GPU tensor")
def test_numpy_operand_is_sited_at_the_op(tracking):
    g = ember.ones(3, device=ember.device(gpus()[0]))
    with pytest.raises(ember.DeviceMismatchError) as info:
        line = here() + 1
        g + np.ones(3, np.float32)
    assert info.value.rhs_site == site(line, "test_numpy_operand_is_sited_at_the_op")


def test_each_thread_records_its_own_frame(tracking):
    made = {}

    def worker():
        made["t"], made["line"] = ember.ones(2), here()

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    fn = getattr(worker.__code__, "co_qualname", "worker")
    assert made["t"].creation_site == site(made["line"], fn)


def test_environment_variable_turns_it_on(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import ember
            def build():
                return ember.ones(2)
            t = build()
            print(ember.is_tracking())
            print(t.creation_site)
            """
        )
    )
    env = dict(os.environ, EMBER_TRACK_TENSORS="1")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["True", f"{script}:4 in build"]
    env["EMBER_TRACK_TENSORS"] = "0"
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert out.stdout.splitlines() == ["False", "None"]
