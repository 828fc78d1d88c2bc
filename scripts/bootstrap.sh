#!/usr/bin/env bash
# Installs what kstencil needs on Debian 12 (bookworm) and builds Kokkos + Kokkos Kernels 3.4.01 from
# Debian's trilinos source package into .deps/<backend>/. Idempotent: a second call installs and
# rebuilds nothing.
#
#   scripts/bootstrap.sh <openmp|serial|cuda|hip> [--test]
#
# --test also installs what the test suite needs (ParaView, Xvfb, h5py).
set -euo pipefail

backend=${1:-openmp}
want_test=0
[[ "${2:-}" == "--test" ]] && want_test=1
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
trilinos_version=13.2.0-4

case "$backend" in
openmp | serial | cuda | hip) ;;
*)
  echo "bootstrap: unknown backend '$backend' (allowed: openmp, serial, cuda, hip)" >&2
  exit 2
  ;;
esac

sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)

# Extra apt sources (deb-src, backports, non-free) derived from the machine's own configuration, so
# that no host name is written anywhere by this project.
enable_sources() {
  local own=/etc/apt/sources.list.d/debian.sources
  local ours=/etc/apt/sources.list.d/kstencil-extra.sources
  [[ -f "$ours" ]] && return 0
  if [[ ! -f "$own" ]]; then
    echo "bootstrap: $own not found; enable deb-src, bookworm-backports and non-free by hand" >&2
    exit 1
  fi
  local uris signed
  uris=$(awk '/^URIs:/ {print $2; exit}' "$own")
  signed=$(awk '/^Signed-By:/ {print $2; exit}' "$own")
  "${sudo_cmd[@]}" tee "$ours" >/dev/null <<EOF
Types: deb-src
URIs: $uris
Suites: bookworm
Components: main
Signed-By: $signed

Types: deb
URIs: $uris
Suites: bookworm-backports
Components: main
Signed-By: $signed

Types: deb
URIs: $uris
Suites: bookworm
Components: contrib non-free
Signed-By: $signed
EOF
  apt_updated=0
}

apt_updated=0
install_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "${pkg%%/*}" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  enable_sources
  if [[ $apt_updated -eq 0 ]]; then
    "${sudo_cmd[@]}" apt-get update -q
    apt_updated=1
  fi
  echo "bootstrap: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
}

packages=(build-essential cmake make dpkg-dev ca-certificates libhdf5-openmpi-dev openmpi-bin
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev python3-matplotlib python3-numpy)
# Catch2 v3 lives in bookworm-backports (main has 2.13).
catch2_ok() { dpkg-query -W -f='${Version}' catch2 2>/dev/null | grep -q '^3'; }
case "$backend" in
cuda) packages+=(nvidia-cuda-toolkit g++-11) ;;
hip) packages+=(hipcc libamdhip64-dev rocm-device-libs) ;;
esac
[[ $want_test -eq 1 ]] && packages+=(paraview python3-paraview xvfb xauth python3-h5py)
install_packages "${packages[@]}"
if ! catch2_ok; then
  enable_sources
  [[ $apt_updated -eq 0 ]] && "${sudo_cmd[@]}" apt-get update -q && apt_updated=1
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q -t bookworm-backports catch2
fi

# Kokkos + Kokkos Kernels 3.4.01 from the trilinos source package.
src="$deps/src"
kokkos_src="$src/kokkos"
kk_src="$src/kokkos-kernels"
if [[ ! -f "$kokkos_src/CMakeLists.txt" || ! -f "$kk_src/CMakeLists.txt" ]]; then
  mkdir -p "$src"
  orig=$(ls "$src"/trilinos_*.orig.tar.* 2>/dev/null | head -n 1 || true)
  if [[ -z "$orig" ]]; then
    enable_sources
    [[ $apt_updated -eq 0 ]] && "${sudo_cmd[@]}" apt-get update -q && apt_updated=1
    (cd "$src" && apt-get source --download-only "trilinos=$trilinos_version")
    orig=$(ls "$src"/trilinos_*.orig.tar.* | head -n 1)
  fi
  tmp=$(mktemp -d "$src/extract.XXXX")
  tar xf "$orig" -C "$tmp" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  rm -rf "$kokkos_src" "$kk_src"
  mv "$tmp"/*/packages/kokkos "$kokkos_src"
  mv "$tmp"/*/packages/kokkos-kernels "$kk_src"
  rm -rf "$tmp"
fi

prefix="$deps/$backend"
jobs=$(nproc)
kokkos_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ENABLE_SERIAL=ON
  -DKokkos_ENABLE_TESTS=OFF -DCMAKE_CXX_STANDARD=17)
compiler=(-DCMAKE_CXX_COMPILER=g++)
case "$backend" in
openmp) kokkos_flags+=(-DKokkos_ENABLE_OPENMP=ON) ;;
serial) ;;
cuda)
  # Kokkos 3.4 knows no Hopper arch: compile for sm_80 through Kokkos and add sm_90 code through
  # NVCC_APPEND_FLAGS (nvcc_wrapper rejects a second -arch). The CMake preset sets the same.
  export NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
  export NVCC_APPEND_FLAGS="-gencode=arch=compute_90,code=sm_90"
  export PATH="/usr/bin:$PATH"
  compiler=(-DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper")
  kokkos_flags+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON
    -DKokkos_ARCH_AMPERE80=ON)
  ;;
hip)
  compiler=(-DCMAKE_CXX_COMPILER=hipcc)
  kokkos_flags+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON)
  ;;
esac

# Explicit instantiation off: kstencil instantiates what it uses (default ETI for CUDA takes >30 min).
kk_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix"
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TESTS=OFF
  -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
  -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF
  -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
  -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF
  -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF
  -DKokkosKernels_INST_EXECSPACE_CUDA=OFF -DKokkosKernels_INST_MEMSPACE_CUDAUVMSPACE=OFF
  # Kokkos Kernels' own kernels, not cuBLAS/cuSPARSE: those libraries are hundreds of MB, and a GPU
  # build carried to a machine with another CUDA major would not find them.
  -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF)

# The stamp records the configuration it was built with: a changed one rebuilds.
stamp="$prefix/.kstencil-bootstrap-done"
configuration=$(printf '%s\n' "$backend" "${compiler[@]}" "${kokkos_flags[@]}" "${kk_flags[@]}")
[[ -f "$stamp" && "$(cat "$stamp")" == "$configuration" ]] && exit 0
build="$deps/build-$backend"
rm -rf "$build"
cmake -S "$kokkos_src" -B "$build/kokkos" "${compiler[@]}" "${kokkos_flags[@]}" >"$deps/kokkos-$backend.log"
cmake --build "$build/kokkos" -j "$jobs" >>"$deps/kokkos-$backend.log"
cmake --install "$build/kokkos" >>"$deps/kokkos-$backend.log"

cmake -S "$kk_src" -B "$build/kk" "${compiler[@]}" "${kk_flags[@]}" >"$deps/kokkos-kernels-$backend.log"
cmake --build "$build/kk" -j "$jobs" >>"$deps/kokkos-kernels-$backend.log"
cmake --install "$build/kk" >>"$deps/kokkos-kernels-$backend.log"
rm -rf "$build"
echo "$configuration" >"$stamp"
echo "bootstrap: Kokkos + Kokkos Kernels 3.4.01 ($backend) installed in $prefix"
