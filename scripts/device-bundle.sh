#!/usr/bin/env bash
# Packs a GPU build for a machine without this project's dependencies: the kstencil binary (and
# the test binary, if built) plus the shared libraries they need that are not the system's, MPI's
# or the driver's.
#
#   scripts/device-bundle.sh [BUILD_DIR=build/cuda] [OUT=.device]
# Also packs OUT into OUT.txz (xz: a fifth of the size, for size-limited transfers).
# Then, there: tar xJf .device.txz; LD_LIBRARY_PATH=$PWD/.device/lib .device/kstencil info
set -euo pipefail
build=${1:-build/cuda}
out=${2:-.device}
rm -rf "$out"
mkdir -p "$out/lib"
# The test binary when it was built (`make build BACKEND=cuda TARGET=kstencil` builds the driver only).
binaries=("$out/kstencil")
cp "$build/miniapp/kstencil" "$out/"
if [[ -f "$build/tests/kstencil_tests" ]]; then
  cp "$build/tests/kstencil_tests" "$out/"
  binaries+=("$out/kstencil_tests")
fi
strip --strip-unneeded "${binaries[@]}"  # the carry to a device is size-limited
# Left to the target: C/C++ runtimes, the CUDA driver, and MPI (its ABI is shared by Open MPI 4.x).
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libresolv|libmpi|libopen-rte|libopen-pal|libhwloc|libevent|libudev)'
for binary in "${binaries[@]}"; do
  ldd "$binary" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] || cp -Lu "$path" "$out/lib/$name"
  done
done
tar cf - "$out" | xz -T0 -6 >"$out.txz"
du -sh "$out" "$out.txz"
