"""metal/embed_kernels.py refuses a kernel whose [[buffer(i)]] is not its position among
the kernel's buffer arguments: the emulator's launcher binds by parameter order, so such a
kernel would run on Linux with its buffers swapped relative to a Mac. It also refuses a
kernel with threadgroup memory, barriers or simd functions that does not declare the group
size it is written for, and embeds each family twice (its int64 library)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EMBED = Path(__file__).resolve().parents[1] / "metal" / "embed_kernels.py"

GOOD = """#include "common.h"
template <typename T>
kernel void scale(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                  constant Params& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  // [[buffer(7)]] in a comment is not an argument
  dst[gid.x] = src[gid.x];
}
"""


def embed(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "common.h").write_text("#pragma once\n")
    metal = tmp_path / "fam.metal"
    metal.write_text(source)
    out = tmp_path / "out.cpp"
    return subprocess.run(
        [sys.executable, str(EMBED), "--out", str(out), str(metal)],
        capture_output=True,
        text=True,
    )


def test_buffer_indices_in_parameter_order_are_embedded(tmp_path):
    r = embed(tmp_path, GOOD)
    assert r.returncode == 0, r.stderr
    assert "kernel void scale" in (tmp_path / "out.cpp").read_text()


def test_swapped_buffer_indices_fail_naming_the_kernel(tmp_path):
    swapped = {"[[buffer(0)]]": "[[buffer(1)]]", "[[buffer(1)]]": "[[buffer(0)]]"}
    bad = re.sub(r"\[\[buffer\([01]\)\]\]", lambda m: swapped[m.group()], GOOD)
    r = embed(tmp_path, bad)
    assert r.returncode == 1
    assert "fam.metal:3: kernel scale: [[buffer(1)]] on its buffer argument 0" in r.stderr
    assert not (tmp_path / "out.cpp").exists()


def test_params_index_after_the_buffers(tmp_path):
    r = embed(tmp_path, GOOD.replace("[[buffer(2)]]", "[[buffer(3)]]"))
    assert r.returncode == 1
    assert "kernel scale: [[buffer(3)]] on its buffer argument 2" in r.stderr


GROUPED = """#include "common.h"
template <typename T>
[[max_total_threads_per_threadgroup(256)]]
kernel void tree(device T* dst [[buffer(0)]], constant Params& p [[buffer(1)]],
                 EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(T, part, 256);
  part[lid.x] = dst[gid.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[gid.x] = part[0];
}
"""


def test_a_kernel_with_threadgroup_work_and_a_declared_group_size_is_embedded(tmp_path):
    r = embed(tmp_path, GROUPED)
    assert r.returncode == 0, r.stderr


def test_a_kernel_with_threadgroup_work_must_declare_its_group_size(tmp_path):
    r = embed(tmp_path, GROUPED.replace("[[max_total_threads_per_threadgroup(256)]]\n", ""))
    assert r.returncode == 1
    assert "fam.metal:3: kernel tree uses threadgroup memory" in r.stderr
    assert "max_total_threads_per_threadgroup" in r.stderr


def test_each_family_is_embedded_again_as_its_int64_library(tmp_path):
    r = embed(tmp_path, GOOD)
    assert r.returncode == 0, r.stderr
    out = (tmp_path / "out.cpp").read_text()
    assert '{"fam", std::string(' in out and '{"fam_i64", std::string(' in out
    i64 = out[out.index('{"fam_i64"') :]
    assert i64.index("#define EMBER_I64_LIBRARY 1") < i64.index("kernel void scale")
