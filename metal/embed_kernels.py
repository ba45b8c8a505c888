"""Embed the MSL source of each kernel family into a C++ file.

Metal compiles kernels from source at run time and cannot include files, so each
family's quoted includes of metal/kernels files are inlined (recursively, each file once
per family, `#pragma once` dropped, `#line` kept so Metal's errors name the real file).
Each family is embedded twice: as <family> and as <family>_i64, the same text after
`#define EMBER_I64_LIBRARY 1`, which keeps only its 64-bit integer kernels (common.h).
The output defines what metal/kernels/sources.h declares; it is rewritten only when it
changes. Usage: embed_kernels.py --out kernel_sources.cpp [-I dir] kernels/a.metal kernels/b.metal
(quoted includes are looked up next to the including file, then in each -I dir).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\b")
# `threadgroup T name[n]` in a kernel body: the emulator would give every lane its own
# array; EMBER_THREADGROUP(T, name, n) is the form both compile correctly.
TG_ARRAY = re.compile(
    r"\bthreadgroup\s+(const\s+)?[A-Za-z_][\w:]*(\s*<[^;]*>)?\s+[A-Za-z_]\w*\s*\["
)

# A kernel's parameter list, and each [[buffer(i)]] in it: the emulator's launcher binds
# buffers by parameter order, so the k-th argument bound to a buffer must be [[buffer(k)]]
# (the convention of kernels/common.h).
KERNEL = re.compile(r"\bkernel\s+void\s+(\w+)\s*\(")
BUFFER_ATTR = re.compile(r"\[\[\s*buffer\s*\(\s*(\w+)\s*\)\s*\]\]")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)

# A kernel that shares threadgroup memory or synchronises its lanes is written for a group
# size: it must say so, or Metal may build its pipeline for fewer threads than it needs.
GROUP_WORK = re.compile(r"\bthreadgroup_barrier\s*\(|\bEMBER_THREADGROUP\s*\(|\bsimd_\w+\s*\(")
MAX_THREADS = re.compile(r"\[\[\s*max_total_threads_per_threadgroup\s*\([^\]]+\)\s*\]\]\s*$")

I64_DEFINE = "#define EMBER_I64_LIBRARY 1\n"


class EmbedError(Exception):
    pass


def closing(code: str, start: int, pair: str) -> int:
    """The index just past the bracket that closes the one opened before `start`."""
    depth, end = 1, start
    while depth and end < len(code):
        depth += {pair[0]: 1, pair[1]: -1}.get(code[end], 0)
        end += 1
    return end


def check_group_size(path: Path, code: str, m: re.Match, params_end: int) -> None:
    """Raises EmbedError when the kernel at `m` uses threadgroup memory, barriers or simd
    functions without [[max_total_threads_per_threadgroup(n)]] before `kernel`."""
    brace = code.find("{", params_end)
    body = code[brace : closing(code, brace + 1, "{}")] if brace >= 0 else ""
    declared = MAX_THREADS.search(code[max(0, m.start() - 300) : m.start()])
    if GROUP_WORK.search(body) and not declared:
        line = code.count("\n", 0, m.start()) + 1
        raise EmbedError(
            f"{path.name}:{line}: kernel {m.group(1)} uses threadgroup memory, barriers or "
            f"simd functions: declare [[max_total_threads_per_threadgroup(n)]] before `kernel` "
            f"with the group size it is written for"
        )


def check_buffer_indices(path: Path, text: str) -> None:
    """Raises EmbedError naming the first kernel whose [[buffer(i)]] is not its position,
    or whose group size is undeclared (check_group_size)."""
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    for m in KERNEL.finditer(code):
        end = closing(code, m.end(), "()")
        check_group_size(path, code, m, end)
        for position, attr in enumerate(BUFFER_ATTR.finditer(code, m.end(), end)):
            if attr.group(1) != str(position):
                line = code.count("\n", 0, attr.start()) + 1
                raise EmbedError(
                    f"{path.name}:{line}: kernel {m.group(1)}: [[buffer({attr.group(1)})]] on "
                    f"its buffer argument {position}; buffers are bound in parameter order, "
                    f"so it must be [[buffer({position})]]"
                )


def inline(path: Path, include_dirs: list[Path], seen: set[Path], out: list[str]) -> None:
    path = path.resolve()
    if path in seen:
        return
    seen.add(path)
    out.append(f'#line 1 "{path.name}"')
    text = path.read_text()
    check_buffer_indices(path, text)
    for number, line in enumerate(text.splitlines(), start=1):
        if PRAGMA_ONCE.match(line):
            out.append("")
            continue
        code = line.split("//", 1)[0]
        if not code.lstrip().startswith("#") and TG_ARRAY.search(code):
            raise EmbedError(
                f"{path.name}:{number}: declare threadgroup arrays with "
                f"EMBER_THREADGROUP(T, name, n), not `threadgroup T name[n]`"
            )
        m = INCLUDE.match(line)
        if not m:
            out.append(line)
            continue
        target = next(
            (d / m.group(1) for d in [path.parent, *include_dirs] if (d / m.group(1)).is_file()),
            None,
        )
        if target is None:
            raise EmbedError(f'{path.name}:{number}: cannot inline "{m.group(1)}"')
        inline(target, include_dirs, seen, out)
        out.append(f'#line {number + 1} "{path.name}"')


def family_source(metal: Path, include_dirs: list[Path]) -> str:
    out: list[str] = []
    inline(metal, include_dirs, set(), out)
    return "\n".join(out) + "\n"


def c_string(text: str) -> str:
    """The text as concatenated C string literals, one per line."""
    lines = []
    for line in text.splitlines(keepends=True):
        escaped = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        escaped = escaped.replace("\t", "\\t").replace("??", '?""?')  # no trigraphs
        lines.append(f'    "{escaped}"')
    return "\n".join(lines) if lines else '    ""'


def render(sources: dict[str, str]) -> str:
    entries = "\n".join(
        f'      {{"{family}", std::string(\n{c_string(text)})}},'
        for family, text in sorted(sources.items())
    )
    return f"""// Generated by metal/embed_kernels.py from metal/kernels/*.metal: do not edit.
#include <map>
#include <string>
#include <vector>

#include "kernels/sources.h"

namespace ember::metal {{
namespace {{

const std::map<std::string, std::string>& sources() {{
  static const std::map<std::string, std::string> kSources = {{
{entries}
  }};
  return kSources;
}}

}}  // namespace

const std::string& kernel_source(const std::string& family) {{
  static const std::string kNone;
  auto it = sources().find(family);
  return it == sources().end() ? kNone : it->second;
}}

std::vector<std::string> kernel_families() {{
  std::vector<std::string> out;
  for (const auto& entry : sources()) out.push_back(entry.first);
  return out;
}}

}}  // namespace ember::metal
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("-I", dest="include_dirs", action="append", default=[], type=Path)
    parser.add_argument("metal", nargs="*", type=Path)
    args = parser.parse_args(argv)
    try:
        sources = {m.stem: family_source(m, args.include_dirs) for m in args.metal}
        sources.update({f"{name}_i64": I64_DEFINE + text for name, text in list(sources.items())})
    except (EmbedError, OSError) as e:
        print(f"embed_kernels.py: {e}", file=sys.stderr)
        return 1
    text = render(sources)
    if not args.out.is_file() or args.out.read_text() != text:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
