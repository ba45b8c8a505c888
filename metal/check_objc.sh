#!/usr/bin/env bash
# Syntax-checks every Objective-C++ file under metal/ on Linux (DESIGN.md §7, check 3):
# clang parses the .mm files with ARC and blocks against metal/stubs/, headers that declare
# only the Foundation/Metal API the backend uses, written from Apple's documentation.
#
#   bash metal/check_objc.sh              check metal/**/*.mm; any diagnostic fails
#   bash metal/check_objc.sh --self-test  show the check can fail: known-bad snippets must
#                                         be rejected (for the expected reason), a good one
#                                         must pass
#
# It also checks that every Objective-C message is sent inside an @autoreleasepool
# (metal/check_autorelease.py over clang's AST): Python threads have no run loop to drain one.
#
# Exit status: 0 clean, 1 diagnostics (or a self-test that did not behave), 2 no clang++.
# CLANGXX=/path/to/clang++ overrides the compiler search.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_clang() {
  local c
  for c in "${CLANGXX:-}" clang++-14 clang++; do
    if [[ -n "$c" ]] && command -v "$c" >/dev/null 2>&1; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if ! CXX="$(find_clang)"; then
  echo "check_objc: clang++ not found (needs clang++-14 or clang++)." >&2
  echo "check_objc: install it with: apt-get install clang-14" >&2
  exit 2
fi

# gnustep-2.0 is the non-Apple runtime clang knows that supports ARC; the runtime choice only
# matters for code generation, which -fsyntax-only never reaches. The warning flags are the
# ones CMake gives target _core; -Werror turns each warning into a failure.
FLAGS=(-x objective-c++ -std=gnu++17 -fsyntax-only -fobjc-runtime=gnustep-2.0 -fobjc-arc
  -fblocks -Werror -Wall -Wextra -Wno-unused-parameter -I metal/stubs -I csrc -I metal)

# SDK profiles of the stubs: the macOS 15 SDK, and an older one without the API that only
# the 15 SDK declares (mathMode, ...), as a Mac with Xcode 15 or earlier builds against.
PROFILES=("sdk15:-D__MAC_OS_X_VERSION_MAX_ALLOWED=150000"
  "sdk14:-D__MAC_OS_X_VERSION_MAX_ALLOWED=140000")

# Compiles one file under one profile's flag; prints clang's output. Fails on a non-zero
# status or any output at all.
check_file() {
  local file="$1" profile_flag="${2:--D__MAC_OS_X_VERSION_MAX_ALLOWED=150000}" out status=0
  out="$("$CXX" "${FLAGS[@]}" "$profile_flag" "$file" 2>&1)" || status=$?
  if [[ $status -ne 0 || -n "$out" ]]; then
    printf '%s\n' "$out"
    return 1
  fi
}

# Every message send inside an @autoreleasepool of its own function (check_autorelease.py).
check_pools() {
  "$CXX" "${FLAGS[@]}" -Xclang -ast-dump "$1" | python3 metal/check_autorelease.py
}

run_check() {
  local files=() f failed=0 start=$SECONDS
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find metal -name '*.mm' -print0 | sort -z)
  if [[ ${#files[@]} -eq 0 ]]; then
    echo "check_objc: no .mm files under metal/" >&2
    return 1
  fi
  for f in "${files[@]}"; do
    for p in "${PROFILES[@]}"; do
      if check_file "$f" "${p#*:}"; then
        echo "check_objc: ok    $f (${p%%:*})"
      else
        echo "check_objc: FAIL  $f (${p%%:*})" >&2
        failed=1
      fi
    done
    if check_pools "$f"; then
      echo "check_objc: ok    $f (autorelease pools)"
    else
      echo "check_objc: FAIL  $f (autorelease pools)" >&2
      failed=1
    fi
  done
  echo "check_objc: ${#files[@]} file(s) x ${#PROFILES[@]} SDK profiles with $("$CXX" --version | head -n1) in $((SECONDS - start))s"
  return $failed
}

# ---- self-test ------------------------------------------------------------------------------

# Every snippet starts from the same declarations as the real file, so the only fault in
# each bad snippet is the one it names.
PRELUDE='#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
void snippet(id<MTLDevice> device, id<MTLComputeCommandEncoder> encoder,
             id<MTLCommandBuffer> command_buffer, id<MTLLibrary> library,
             id<MTLComputePipelineState> state, id<MTLBuffer> buffer) {'

# name | regex the diagnostic must match | body
BAD_SNIPPETS=(
  "misspelt selector|newBufferWithLenght|[device newBufferWithLenght:16 options:MTLResourceStorageModeShared];"
  "wrong argument type|no viable conversion from 'int' to 'MTLSize'|[encoder dispatchThreadgroups:16 threadsPerThreadgroup:MTLSizeMake(1, 1, 1)];"
  "wrong protocol|parameter of type 'id<MTLComputePipelineState> _Nonnull' with an lvalue of type '__strong id<MTLBuffer>'|[encoder setComputePipelineState:buffer];"
  "release under ARC|ARC forbids explicit message send of 'release'|[buffer release];"
  "missing __bridge|requires a bridged cast|void* raw = (void*)buffer; (void)raw;"
  "nil for a nonnull argument|null passed to a callee that requires a non-null|(void)[library newFunctionWithName:nil];"
  "wrong block signature|with an rvalue of type 'void (^)(int)'|[command_buffer addCompletedHandler:^(int status) { (void)status; }];"
  "unknown property|property 'statuss' not found|(void)command_buffer.statuss;"
)

# Rejected by the pool check (they compile): name | regex of its report | body.
POOL_SNIPPETS=(
  "message outside a pool|[... newBufferWithLength:options:] in snippet outside|(void)[device newBufferWithLength:16 options:MTLResourceStorageModeShared];"
  "block without its own pool|a call in a block outside|@autoreleasepool { [command_buffer addCompletedHandler:^(id<MTLCommandBuffer> done) { (void)done; snippet(device, encoder, command_buffer, library, state, buffer); }]; }"
)

# Rejected under the older SDK profile only (the same body is fine with the macOS 15 SDK).
OLD_SDK_SNIPPETS=(
  "15-only API without an SDK guard|property 'mathMode' not found|MTLCompileOptions* o = [[MTLCompileOptions alloc] init]; if (@available(macOS 15.0, *)) o.mathMode = MTLMathModeSafe;"
)

GOOD_SNIPPET='
  @autoreleasepool {
    id<MTLBuffer> b = [device newBufferWithLength:16 options:MTLResourceStorageModeShared];
    void* raw = (__bridge void*)b; (void)raw;
    [encoder setComputePipelineState:state];
    [encoder setBuffer:buffer offset:0 atIndex:0];
    [encoder dispatchThreadgroups:MTLSizeMake(16, 1, 1) threadsPerThreadgroup:MTLSizeMake(32, 1, 1)];
    [command_buffer addCompletedHandler:^(id<MTLCommandBuffer> done) {
      @autoreleasepool { (void)done.status; }
    }];
    NSString* name = [[NSString alloc] initWithBytes:"k" length:1 encoding:NSUTF8StringEncoding];
    (void)[library newFunctionWithName:name];
  }'

run_self_test() {
  local dir entry name pattern body out status failed=0 p profile flag
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN

  printf '%s\n%s\n}\n' "$PRELUDE" "$GOOD_SNIPPET" >"$dir/good.mm"
  for p in "${PROFILES[@]}"; do
    if out="$(check_file "$dir/good.mm" "${p#*:}")"; then
      echo "self-test: ok    accepted: correct use of the same API (${p%%:*})"
    else
      echo "self-test: FAIL  the correct snippet was rejected (${p%%:*}):" >&2
      printf '%s\n' "$out" >&2
      failed=1
    fi
  done

  for entry in "${BAD_SNIPPETS[@]/#/sdk15:}" "${OLD_SDK_SNIPPETS[@]/#/sdk14:}"; do
    profile="${entry%%:*}"
    entry="${entry#*:}"
    name="${entry%%|*}"
    entry="${entry#*|}"
    pattern="${entry%%|*}"
    body="${entry#*|}"
    printf '%s\n  %s\n}\n' "$PRELUDE" "$body" >"$dir/bad.mm"
    flag=-D__MAC_OS_X_VERSION_MAX_ALLOWED=150000
    [[ $profile == sdk14 ]] && flag=-D__MAC_OS_X_VERSION_MAX_ALLOWED=140000
    status=0
    out="$("$CXX" "${FLAGS[@]}" "$flag" "$dir/bad.mm" 2>&1)" || status=$?
    if [[ $status -ne 0 ]] && grep -qF -- "$pattern" <<<"$out"; then
      echo "self-test: ok    rejected: $name ($profile)"
    else
      echo "self-test: FAIL  not rejected as expected: $name (wanted \"$pattern\")" >&2
      printf '%s\n' "$out" >&2
      failed=1
    fi
  done

  if out="$(check_pools "$dir/good.mm")"; then
    echo "self-test: ok    accepted by the pool check: the correct snippet"
  else
    echo "self-test: FAIL  the pool check rejected the correct snippet:" >&2
    printf '%s\n' "$out" >&2
    failed=1
  fi
  for entry in "${POOL_SNIPPETS[@]}"; do
    name="${entry%%|*}"
    entry="${entry#*|}"
    pattern="${entry%%|*}"
    printf '%s\n  %s\n}\n' "$PRELUDE" "${entry#*|}" >"$dir/pool.mm"
    expect_pool_failure "$name" "$pattern" "$dir/pool.mm" || failed=1
  done
  # The real file with one pool taken away (the one around -commit).
  perl -0pe 's/\@autoreleasepool \{\s*(\[buffer_ commit\];)\s*\}/$1/' \
    metal/runtime/mtl_runtime.mm >"$dir/mtl_runtime.mm"
  if cmp -s metal/runtime/mtl_runtime.mm "$dir/mtl_runtime.mm"; then
    echo "self-test: FAIL  found no pool around [buffer_ commit] to take away" >&2
    failed=1
  else
    expect_pool_failure "mtl_runtime.mm without its pool in commit()" \
      "[... commit] in commit outside" "$dir/mtl_runtime.mm" || failed=1
  fi
  return $failed
}

expect_pool_failure() {
  local out status=0
  out="$(check_pools "$3" 2>&1)" || status=$?
  if [[ $status -ne 0 ]] && grep -qF -- "$2" <<<"$out"; then
    echo "self-test: ok    rejected by the pool check: $1"
  else
    echo "self-test: FAIL  not rejected by the pool check: $1 (wanted \"$2\")" >&2
    printf '%s\n' "$out" >&2
    return 1
  fi
}

case "${1:-}" in
  "") run_check ;;
  --self-test) run_self_test ;;
  *)
    echo "usage: bash metal/check_objc.sh [--self-test]" >&2
    exit 2
    ;;
esac
