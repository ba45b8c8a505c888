#!/usr/bin/env bash
# Builds the Metal emulator's checks (AddressSanitizer + UBSan) and runs them; exits
# non-zero on any failure. EMBER_METAL_CHECK_BUILD_DIR keeps the build for reuse;
# extra arguments go to cmake (e.g. -DEMBER_CHECK_PROJECT_KERNELS=OFF).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${EMBER_METAL_CHECK_BUILD_DIR:-}
if [[ -z "$build" ]]; then
  build=$(mktemp -d "${TMPDIR:-/tmp}/ember-metal-checks.XXXXXX")
  trap 'rm -rf "$build"' EXIT
fi
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
cmake --build "$build"
"$build/ember_metal_checks" --list
"$build/ember_metal_checks"
