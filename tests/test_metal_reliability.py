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


def test_a_long_loop_of_ops_keeps_memory_flat():
    # The host may run only a few command buffers ahead of the queue, so freed results
    # are reused instead of piling up behind work the device has not done yet.
    r = run_python(
        """
        import os
        import ember, numpy as np

        def rss_mib():
            pages = int(open("/proc/self/statm").read().split()[1])
            return pages * os.sysconf("SC_PAGE_SIZE") >> 20

        d = ember.device("metal")
        a = ember.tensor(np.zeros(1 << 18, dtype=np.float32), device=d)
        for _ in range(300):
            c = a + 1
        warm = rss_mib()
        for _ in range(1200):  # 1.2 GiB of results if none were reused
            c = a + 1
        assert c[-1].item() == 1.0
        print("growth", rss_mib() - warm)
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    growth = int(r.stdout.split("growth")[1])
    assert growth < 64, f"RSS grew by {growth} MiB over 1200 ops"


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork() on this OS")
def test_a_forked_child_gets_device_error_not_a_hang():
    r = run_python(
        """
        import os, signal, sys
        import ember, numpy as np

        d = ember.device("metal")
        a = ember.ones(1000, device=d) + 1
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)  # a hang kills the child (SIGALRM), so the test fails, not hangs
            out = []
            for name, use in [
                ("inherited", lambda: (a + 1).numpy()),
                ("cached", lambda: ember.ones(3, device=ember.device("metal"))),
                ("new", lambda: ember.Device.metal()),
            ]:
                try:
                    use()
                    out.append(name + ": no error")
                except ember.DeviceError as e:
                    ok = "forked child" in str(e) and "spawn" in str(e)
                    out.append(name + (": DeviceError" if ok else ": " + str(e)))
            print("; ".join(out), flush=True)
            sys.exit(0)  # a normal exit: finalising the inherited device must not hang
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status), "parent", (a + 1).numpy()[0])
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "inherited: DeviceError; cached: DeviceError; new: DeviceError" in r.stdout, r.stdout
    assert "child 0 parent 3.0" in r.stdout, r.stdout
