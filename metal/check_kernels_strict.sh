#!/usr/bin/env bash
# Compiles every kernel family (metal/kernels/*.metal) the way a Mac reads it (its
# __METAL_VERSION__ path) against metal/strict/metal_stdlib, a declaration-only stand-in,
# in two modes stricter than the emulator's shim:
#   c++14   clang++ -std=c++14 -pedantic-errors: MSL is C++14-based, so C++17-isms
#           (if constexpr, structured bindings, inline variables) fail;
#   opencl  clang -x clcpp -cl-std=clc++2021, with device/constant/threadgroup/thread as
#           __global/__constant/__local/__private: a pointer or reference that changes
#           address space (a device pointer where a thread one is expected, a constant
#           struct bound to a plain reference) is rejected, as Metal's compiler does.
#
#   bash metal/check_kernels_strict.sh              check every family; any diagnostic fails
#   bash metal/check_kernels_strict.sh --self-test  each mode must reject its known-bad
#                                                   snippets and accept a good one
# Exit status: 0 clean, 1 diagnostics (or a self-test that did not behave), 2 no clang.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CLANG="${CLANG:-$(command -v clang-14 || command -v clang || true)}"
if [[ -z "$CLANG" ]]; then
  echo "check_kernels_strict: clang not found (apt-get install clang-14)" >&2
  exit 2
fi

# Only what differs from MSL for syntax, not meaning: standard C++ has no attributes on an
# explicit instantiation (MSL's [[host_name]]), and OpenCL allows __local variables only in
# kernel functions, which cannot be templates there (a __local pointer keeps the checks).
PRELUDE='#include "common.h"
#undef EMBER_KERNEL
#define EMBER_KERNEL(host_name, ...) template decltype(__VA_ARGS__) __VA_ARGS__;
#undef EMBER_KERNEL_GROUPED
#define EMBER_KERNEL_GROUPED(host_name, ...) EMBER_KERNEL(host_name, __VA_ARGS__)
#ifdef __OPENCL_CPP_VERSION__
#undef EMBER_THREADGROUP
#define EMBER_THREADGROUP(T, name, n) threadgroup T* const name = nullptr
#endif'

COMMON=(-fsyntax-only -ferror-limit=0 -D__METAL_VERSION__=240 -Wno-unknown-attributes
  -I metal/strict -I metal/kernels -I csrc)
declare -A MODE_FLAGS=(
  [c++14]="-x c++ -std=c++14 -pedantic-errors --target=aarch64-linux-gnu -nostdinc -nostdinc++"
  [opencl]="-x clcpp -cl-std=clc++2021 --target=spir64 -cl-no-stdinc -nostdinc"
)

# Allowed: a struct copied out of another address space (MSL copies a constant struct into
# a thread variable; OpenCL's implicit copy constructor and assignment take __generic).
ALLOWED="[(]the implicit copy (constructor|assignment operator)[)] not viable: cannot bind reference in address space"

# Drops each error whose notes match ALLOWED; prints what remains.
filter() {
  awk -v allowed="$ALLOWED" '
    function flush() { if (group != "" && group !~ allowed) printf "%s", group; group = "" }
    /^In file included from/ || / generated\.$/ { next }
    /(error|warning):/ { flush() }
    { group = group $0 "\n" }
    END { flush() }'
}

# Compiles `file` (a .metal under an -I dir, included after PRELUDE) in `mode`, as the
# library EMBER_I64_LIBRARY=`i64` (0 by default; 1: its 64-bit integer kernels); prints
# what is left after the allowlist and fails when anything is.
check_family() {
  local mode="$1" file="$2" i64="${3:-0}" out
  # shellcheck disable=SC2086
  out="$(printf '#define EMBER_I64_LIBRARY %s\n%s\n#include "%s"\n' "$i64" "$PRELUDE" "$file" |
    "$CLANG" ${MODE_FLAGS[$mode]} "${COMMON[@]}" -I "$(dirname "$file")" - 2>&1 | filter)"
  [[ -z "$out" ]] || { printf '%s\n' "$out"; return 1; }
}

run_check() {
  local f mode failed=0 n=0 start=$SECONDS
  for f in metal/kernels/*.metal; do
    for mode in c++14 opencl; do
      for i64 in 0 1; do
        n=$((n + 1))
        if check_family "$mode" "$(basename "$f")" "$i64"; then
          echo "check_kernels_strict: ok    $f ($mode, EMBER_I64_LIBRARY=$i64)"
        else
          echo "check_kernels_strict: FAIL  $f ($mode, EMBER_I64_LIBRARY=$i64)" >&2
          failed=1
        fi
      done
    done
  done
  echo "check_kernels_strict: $n compiles with $("$CLANG" --version | head -n1)" \
    "in $((SECONDS - start))s"
  return $failed
}

# ---- self-test ------------------------------------------------------------------------------

# Each snippet is a kernel family of its own: a template kernel instantiated once.
snippet() {
  cat <<EOF
#include "common.h"
$1
template <typename T>
kernel void k(device T* dst [[buffer(0)]], constant StridedLayout& p [[buffer(1)]],
              EMBER_THREAD_ARGS) {
  $2
}
EMBER_KERNEL(k_f32, k<float>)
EOF
}

# mode | text the diagnostic must contain | helpers | kernel body
BAD=(
  "c++14|constexpr if is a C++17 extension||if constexpr (sizeof(T) == 4) dst[gid.x] = T(1);"
  "c++14|decomposition declarations are a C++17 extension|struct Two { int a, b; };|auto [a, b] = Two{1, 2}; dst[gid.x] = T(a + b);"
  "c++14|inline variables are a C++17 extension|inline constexpr int kTwo = 2;|dst[gid.x] = T(kTwo);"
  "opencl|cannot pass pointer to address space '__global' as a pointer to address space '__private'|inline void put(thread float* o) { *o = 1.0f; }|put(dst + gid.x);"
  "opencl|cannot bind reference in address space '__constant' to object in address space '__generic'|inline int64_t first(const StridedLayout& l) { return l.offset; }|dst[gid.x] = T(first(p));"
  "opencl|cannot pass pointer to address space '__local' as a pointer to address space '__global'|inline void put(device float* o) { *o = 1.0f; }|EMBER_THREADGROUP(float, tg, 32); put(tg);"
)
GOOD_HELPERS='inline int64_t first(constant StridedLayout& l) { return l.offset; }
inline void put(thread float* o) { *o = 1.0f; }'
GOOD_BODY='StridedLayout copy = p;  // a struct copy across address spaces: allowed
  StridedLayout again; again = p;
  float v; put(&v);
  EMBER_THREADGROUP(float, tg, 32); tg[lid.x] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[gid.x] = T(tg[0]) + T(first(p) + copy.offset + again.offset) + exp(T(1));'

run_self_test() {
  local dir entry mode pattern helpers body out failed=0
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN
  snippet "$GOOD_HELPERS" "$GOOD_BODY" >"$dir/good.metal"
  for mode in c++14 opencl; do
    if out="$(check_family "$mode" "$dir/good.metal")"; then
      echo "self-test: ok    accepted ($mode): correct kernel with struct copies"
    else
      echo "self-test: FAIL  the correct kernel was rejected ($mode):" >&2
      printf '%s\n' "$out" >&2
      failed=1
    fi
  done
  for entry in "${BAD[@]}"; do
    IFS='|' read -r mode pattern helpers body <<<"$entry"
    snippet "$helpers" "$body" >"$dir/bad.metal"
    if ! out="$(check_family "$mode" "$dir/bad.metal")" && grep -qF -- "$pattern" <<<"$out"; then
      echo "self-test: ok    rejected ($mode): ${pattern}"
    else
      echo "self-test: FAIL  not rejected as expected ($mode): wanted \"$pattern\"" >&2
      printf '%s\n' "$out" >&2
      failed=1
    fi
  done
  return $failed
}

case "${1:-}" in
  "") run_check ;;
  --self-test) run_self_test ;;
  *)
    echo "usage: bash metal/check_kernels_strict.sh [--self-test]" >&2
    exit 2
    ;;
esac
