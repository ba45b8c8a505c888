"""A Metal device under stress, each case in a fresh interpreter (a crash or hang there
fails the test instead of the suite): empty_cache() while another thread runs ops, a
long loop of ops that must not grow memory, and a device used in a forked child."""

from __future__ import annotations

import sys

import ember
import helpers
import pytest

pytestmark = pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")

EMULATOR = {"EMBER_METAL_EMULATOR": "1"} if sys.platform != "darwin" else {}


def run_python(code: str):
    return helpers.run_python(code, env=EMULATOR)


def test_empty_cache_while_another_thread_runs_ops():
    # Freed buffers that queued work still reads stay pooled through empty_cache().
    r = run_python(
        """
        import threading
        import ember, numpy as np

        d = ember.device("metal")
        a = ember.tensor(np.arange(1 << 20, dtype=np.float32), device=d)
        errors = []

        def work():
            try:
                for i in range(300):
                    c = a + 1
                    if i % 50 == 0:
                        assert c[-1].item() == 1 << 20
            except BaseException as e:
                errors.append(repr(e))

        t = threading.Thread(target=work)
        t.start()
        while t.is_alive():
            d.empty_cache()
        t.join()
        d.empty_cache()
        print("errors", errors, "cached", d.memory_stats()["bytes_cached"])
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "errors [] cached 0" in r.stdout, r.stdout
