"""Device instances come and go: each new GPU instance owns a queue (and, on the
emulator, a worker thread), so making and dropping many must leak neither queues,
threads nor memory, and must not start failing (MLX fails after ~1600 new streams)."""

from __future__ import annotations

import os

import ember
import pytest
from helpers import run_python

GPU_KINDS = [k for k in ("metal", "cuda") if getattr(ember, f"{k}_is_available")()]


@pytest.mark.parametrize("kind", GPU_KINDS)
def test_ten_thousand_instances_leak_nothing(kind):
    r = run_python(
        f"""
        import os, ember
        def rss_mib():
            pages = int(open("/proc/self/statm").read().split()[1])
            return pages * os.sysconf("SC_PAGESIZE") / 2**20
        def threads():
            return len(os.listdir("/proc/self/task"))
        if "{kind}" == "cuda":
            new = lambda: ember.Device.cuda(0, new_stream=True)
        else:
            new = ember.Device.metal
        ids = set()
        for i in range(10_000):
            d = new()
            ids.add(d.id)
            x = (ember.ones(64, device=d) + 1).numpy()
            assert x[0] == 2.0
            if i == 500:
                base_rss, base_threads = rss_mib(), threads()
            del d
        print(len(ids), rss_mib() - base_rss, threads() - base_threads)
        """
    )
    assert r.returncode == 0, r.stderr
    count, rss_growth, thread_growth = r.stdout.split()
    assert int(count) == 10_000  # every instance had its own id
    # AddressSanitizer's quarantine keeps up to 256 MiB of freed memory by design
    bound = 32 + (300 if "libasan" in os.environ.get("LD_PRELOAD", "") else 0)
    assert float(rss_growth) < bound, f"RSS grew by {rss_growth} MiB over 9500 instances"
    assert int(thread_growth) <= 2, f"{thread_growth} threads were left behind"
