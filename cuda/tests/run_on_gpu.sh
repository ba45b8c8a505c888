#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, the CUDA toolkit (nvcc, cuBLAS) and PyTorch: build
# ember with CUDA, run the whole suite, the CUDA tests under compute-sanitizer, and the
# CUDA benchmarks. Logs go to $1 (default: gpu-logs/).
#   bash cuda/tests/run_on_gpu.sh [logdir] [steps]
#   steps: build,tests,sanitize,bench (sanitize = memcheck,racecheck)
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${1:-gpu-logs}
steps=${2:-build,tests,sanitize,bench}
mkdir -p "$logs"
export PYTHONUNBUFFERED=1
has() { [[ ",$steps," == *",$1,"* ]]; }
status=0

if has build; then
  echo "== build"
  SECONDS=0
  python3 -m pip install -q --no-build-isolation --no-deps -C build-dir=build/gpu \
    -C cmake.define.EMBER_CUDA=ON . >"$logs/build.log" 2>&1 || { tail -60 "$logs/build.log"; exit 1; }
  echo "built in $SECONDS s"
  python3 -c "import ember; print(ember.compiled_backends(), ember.cuda_device_count(), \
ember.device('cuda').location); print(ember.device('cuda').info())"
fi

if has tests; then
  echo "== tests"
  SECONDS=0
  # the whole suite, as CI runs it (emulated Metal too), plus the CUDA device
  EMBER_METAL_EMULATOR=1 python3 -m pytest -q -p no:cacheprovider --maxfail=200 tests -n 8 >"$logs/tests.log" 2>&1 || status=1
  tail -40 "$logs/tests.log"
  echo "tests in $SECONDS s"
fi

if has sanitize || has memcheck || has racecheck; then
  # API errors are expected (the out-of-memory test, event queries); the sanitizer
  # serializes streams and pads the pool, so the two tests observing those are left out,
  # with the two whose child processes fault on purpose or run seconds of products.
  skip="not two_streams_are_not_ordered and not empty_cache_trims and not device_fault"
  skip+=" and not ctrl_c"
  for tool in memcheck racecheck; do
    has sanitize || has "$tool" || continue
    files="tests/test_cuda.py tests/test_op_table.py tests/test_events.py tests/test_division.py"
    files+=" tests/test_copy_and_pinned.py tests/test_sort.py tests/test_scan.py tests/test_scatter.py"
    files+=" tests/test_atan2_randint.py tests/test_interpolate.py tests/test_masks.py"
    files+=" tests/test_index_arrays.py"
    files="${MEMCHECK_FILES:-$files}"
    only=()
    if [ "$tool" = racecheck ]; then
      # racecheck checks shared memory. Only ember's kernels are instrumented: cuBLAS's
      # are not ours and, instrumented, take most of the time.
      files="tests/test_reduce.py tests/test_matmul.py tests/test_op_table.py"
      files+=" tests/test_scan.py tests/test_sort.py tests/test_scatter.py"
      files="${RACECHECK_FILES:-$files}"
      only=(--kernel-name kns=ember)  # a substring of the mangled name
    fi
    echo "== compute-sanitizer --tool $tool ${only[*]}"
    SECONDS=0
    timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" "${only[@]}" \
      --error-exitcode 9 --report-api-errors no --target-processes all python3 -m pytest -q \
      -p no:cacheprovider -p no:xdist $files -k "cuda and $skip ${SANITIZE_K:-}" \
      >"$logs/sanitize-$tool.log" 2>&1 \
      || status=1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$logs/sanitize-$tool.log" | tail -5
    echo "$tool in $SECONDS s"
  done
fi

if has bench; then
  echo "== benchmarks"
  python3 -m benchmarks --device cuda --out "$logs/bench" ${BENCH_ARGS:-} >"$logs/bench.log" 2>&1 \
    || status=1
  tail -60 "$logs/bench.log"
fi
exit $status
