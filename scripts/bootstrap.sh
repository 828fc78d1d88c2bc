#!/usr/bin/env bash
# Installs what kstencil needs on Debian 12 (bookworm) and builds Kokkos + Kokkos Kernels into
# .deps/. Idempotent: a second call installs and rebuilds nothing.
#
#   scripts/bootstrap.sh <openmp|serial|cuda|hip> [--test] [--sanitize]
#
# --test also installs what the test suite needs (ParaView, Xvfb, h5py).
# --sanitize (openmp or serial) builds Kokkos + Kokkos Kernels with AddressSanitizer and
# UndefinedBehaviorSanitizer (-O1 -g1, shared libraries) into .deps/<backend>-sanitize/, for the
# preset of that name (`make sanitize`). Shared: a sanitized kstencil does not link against the
# static Release prefix (the linker fails on Kokkos' thread-local t_tracking_enabled, "TLS
# transition from R_X86_64_GOTTPOFF to R_X86_64_TPOFF32").
#
# By default Kokkos + Kokkos Kernels 3.4.01 come from Debian's trilinos source package and go to
# .deps/<backend>/. With KOKKOS_SOURCE and KOKKOSKERNELS_SOURCE set to upstream release tarballs
# (e.g. kokkos-4.6.01.tar.gz and kokkos-kernels-4.6.01.tar.gz) they are built from those instead, into
# .deps/<backend>-kokkos<major>.<minor>/ (e.g. .deps/openmp-kokkos4.6), which the presets of that name
# use (`make test KOKKOS=4.6`). The tarballs' sha256 is part of the build's stamp. KOKKOS_VERSION
# (optional, e.g. 4.6 or 4.6.01) makes it fail unless the tarball holds that version.
set -euo pipefail

backend=${1:-openmp}
want_test=0
sanitize=0
for arg in "${@:2}"; do
  case "$arg" in
  --test) want_test=1 ;;
  --sanitize) sanitize=1 ;;
  *)
    echo "bootstrap: unknown option '$arg' (allowed: --test, --sanitize)" >&2
    exit 2
    ;;
  esac
done
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
if [[ $sanitize -eq 1 && "$backend" != openmp && "$backend" != serial ]]; then
  echo "bootstrap: --sanitize is for the host backends (openmp, serial), not '$backend'" >&2
  exit 2
fi

# Upstream tarballs instead of Debian's 3.4.01 (both or neither).
kokkos_tarball=${KOKKOS_SOURCE:-}
kk_tarball=${KOKKOSKERNELS_SOURCE:-}
if [[ -n "$kokkos_tarball" || -n "$kk_tarball" ]]; then
  for tarball in "$kokkos_tarball" "$kk_tarball"; do
    if [[ -z "$tarball" || ! -f "$tarball" ]]; then
      echo "bootstrap: KOKKOS_SOURCE and KOKKOSKERNELS_SOURCE must both name source tarballs" \
        "(got '$kokkos_tarball' and '$kk_tarball')" >&2
      exit 2
    fi
  done
  kokkos_tarball=$(realpath "$kokkos_tarball")
  kk_tarball=$(realpath "$kk_tarball")
fi

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

# Bootstraps of several backends may run at once (CI builds the GPU checks beside the tests): apt
# and the shared source folders are taken one at a time, the Kokkos builds (each in its own
# folders) side by side.
mkdir -p "$deps"
exec 9>"$deps/.bootstrap.lock"
flock 9

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
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev libmuparser-dev python3-matplotlib
  python3-numpy)
# Catch2 v3 lives in bookworm-backports (main has 2.13).
catch2_ok() { dpkg-query -W -f='${Version}' catch2 2>/dev/null | grep -q '^3'; }
case "$backend" in
cuda) packages+=(nvidia-cuda-toolkit g++-11) ;;
hip) packages+=(hipcc libamdhip64-dev rocm-device-libs) ;;
esac
[[ $want_test -eq 1 ]] && packages+=(paraview python3-paraview xvfb xauth python3-h5py)
# make fuzz: clang with libFuzzer and the sanitizers' runtimes.
[[ $want_test -eq 1 ]] && packages+=(clang-14 libclang-rt-14-dev)
install_packages "${packages[@]}"
if ! catch2_ok; then
  enable_sources
  [[ $apt_updated -eq 0 ]] && "${sudo_cmd[@]}" apt-get update -q && apt_updated=1
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q -t bookworm-backports catch2
fi

src="$deps/src"
# Unpacks a release tarball (one top-level folder) into src/<name>, again only when its sha256 changed.
unpack() {
  local tarball=$1 sum=$2 name
  name=$(basename "$tarball")
  name=${name%.tgz}
  name=${name%.tar*}
  local dest="$src/$name"
  if [[ ! -f "$dest/CMakeLists.txt" || "$(cat "$dest/.kstencil-sha256" 2>/dev/null)" != "$sum" ]]; then
    rm -rf "$dest"
    mkdir -p "$dest"
    tar xf "$tarball" -C "$dest" --strip-components=1
    if [[ ! -f "$dest/CMakeLists.txt" ]]; then
      echo "bootstrap: $tarball holds no CMake project in its top-level folder" >&2
      exit 2
    fi
    echo "$sum" >"$dest/.kstencil-sha256"
  fi
  echo "$dest"
}

if [[ -n "$kokkos_tarball" ]]; then
  kokkos_sum=$(sha256sum "$kokkos_tarball" | cut -d' ' -f1)
  kk_sum=$(sha256sum "$kk_tarball" | cut -d' ' -f1)
  kokkos_src=$(unpack "$kokkos_tarball" "$kokkos_sum")
  kk_src=$(unpack "$kk_tarball" "$kk_sum")
else
  # Kokkos + Kokkos Kernels 3.4.01 from the trilinos source package.
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
fi

flock -u 9

# The version, from the sources' own CMakeLists.txt.
version_part() {
  sed -n "s/^ *[sS][eE][tT] *( *$1_VERSION_$2 \+\([0-9]\+\) *).*/\1/p" "$3/CMakeLists.txt" | head -n 1
}
major=$(version_part Kokkos MAJOR "$kokkos_src")
minor=$(version_part Kokkos MINOR "$kokkos_src")
patch=$(version_part Kokkos PATCH "$kokkos_src")
kk_major=$(version_part KokkosKernels MAJOR "$kk_src")
kk_minor=$(version_part KokkosKernels MINOR "$kk_src")
if [[ -z "$major" || -z "$minor" || -z "$kk_major" || -z "$kk_minor" ]]; then
  echo "bootstrap: cannot read the versions of $kokkos_src and $kk_src" >&2
  exit 2
fi
version=$(printf '%d.%d.%02d' "$major" "$minor" "$((10#${patch:-0}))")
if [[ -n "${KOKKOS_VERSION:-}" && "$KOKKOS_VERSION" != "$major.$minor" &&
  "$KOKKOS_VERSION" != "$version" ]]; then
  echo "bootstrap: KOKKOS_VERSION=$KOKKOS_VERSION but $kokkos_src is Kokkos $version" >&2
  exit 2
fi
if [[ "$major.$minor" != "$kk_major.$kk_minor" ]]; then
  echo "bootstrap: Kokkos $major.$minor and Kokkos Kernels $kk_major.$kk_minor differ; Kokkos Kernels" \
    "needs the Kokkos of its own version" >&2
  exit 2
fi

if [[ -n "$kokkos_tarball" ]]; then
  name="$backend-kokkos$major.$minor"
else
  name="$backend"
fi
[[ $sanitize -eq 1 ]] && name+="-sanitize"
prefix="$deps/$name"
jobs=$(nproc)
build_type=(-DCMAKE_BUILD_TYPE=Release)
if [[ $sanitize -eq 1 ]]; then
  # The sanitizers of the <backend>-sanitize presets (CMakePresets.json, KSTENCIL_SANITIZE in
  # CMakeLists.txt), without assertions, as shared libraries (see --sanitize above), at -O1
  # where kstencil's presets have -Og: Kokkos' own routines keep their speed.
  build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    -DBUILD_SHARED_LIBS=ON)
fi
kokkos_flags=("${build_type[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ENABLE_SERIAL=ON
  -DKokkos_ENABLE_TESTS=OFF -DCMAKE_CXX_STANDARD=17)
compiler=(-DCMAKE_CXX_COMPILER=g++)
case "$backend" in
openmp) kokkos_flags+=(-DKokkos_ENABLE_OPENMP=ON) ;;
serial) ;;
cuda)
  # Debian's nvcc 11.8 (in /usr/bin, before /usr/local/cuda's 13.0) with g++-11 as host compiler.
  export NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
  export PATH="/usr/bin:$PATH"
  compiler=(-DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper")
  kokkos_flags+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_CUDA=ON)
  if [[ $major -ge 4 ]]; then
    # Kokkos 4 knows Hopper (and device lambdas are always on).
    kokkos_flags+=(-DKokkos_ARCH_HOPPER90=ON)
  else
    # Kokkos 3.4 knows no Hopper arch: compile for sm_80 through Kokkos and add sm_90 code through
    # NVCC_APPEND_FLAGS (nvcc_wrapper rejects a second -arch); the cuda preset's KSTENCIL_CUDA_ARCH
    # compiles kstencil's own kernels for sm_90.
    export NVCC_APPEND_FLAGS="-gencode=arch=compute_90,code=sm_90"
    kokkos_flags+=(-DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON)
  fi
  ;;
hip)
  compiler=(-DCMAKE_CXX_COMPILER=hipcc)
  if [[ $major -ge 4 ]]; then
    kokkos_flags+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_AMD_GFX908=ON)
  else
    kokkos_flags+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON)  # 3.4 knows VEGA900/906/908 only
  fi
  ;;
esac

# Explicit instantiation off: kstencil instantiates what it uses (default ETI for CUDA takes >30 min).
kk_flags=("${build_type[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix"
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
if [[ $major -ge 4 ]]; then
  # Kokkos Kernels 4: the same, in its option names. It adds cuSOLVER (on by default with CUDA, like
  # cuBLAS and cuSPARSE), keeps CudaSpace/HIPSpace instantiation on unless told, and drops supernodal
  # SpTRSV (LayoutLeft ETI only) with a warning unless told.
  kk_flags+=(-DKokkosKernels_INST_MEMSPACE_HOSTSPACE=OFF -DKokkosKernels_ENABLE_SUPERNODAL_SPTRSV=OFF)
  case "$backend" in
  cuda) kk_flags+=(-DKokkosKernels_INST_MEMSPACE_CUDASPACE=OFF -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF) ;;
  hip) kk_flags+=(-DKokkosKernels_INST_EXECSPACE_HIP=OFF -DKokkosKernels_INST_MEMSPACE_HIPSPACE=OFF) ;;
  esac
fi

# The stamp records the configuration it was built with (and the tarballs' sha256): a changed one
# rebuilds.
stamp="$prefix/.kstencil-bootstrap-done"
configuration=$(printf '%s\n' "$backend" "${compiler[@]}" "${kokkos_flags[@]}" "${kk_flags[@]}")
if [[ -n "$kokkos_tarball" ]]; then
  configuration+=$(printf '\n%s' "kokkos sha256 $kokkos_sum" "kokkos-kernels sha256 $kk_sum")
fi
[[ -f "$stamp" && "$(cat "$stamp")" == "$configuration" ]] && exit 0
build="$deps/build-$name"
log="$deps/kokkos-$name.log"
kk_log="$deps/kokkos-kernels-$name.log"
rm -rf "$build" "$prefix"
echo "bootstrap: building Kokkos $version ($name) into $prefix (log: $log)"
t0=$(date +%s)
cmake -S "$kokkos_src" -B "$build/kokkos" "${compiler[@]}" "${kokkos_flags[@]}" >"$log"
cmake --build "$build/kokkos" -j "$jobs" >>"$log"
cmake --install "$build/kokkos" >>"$log"
t1=$(date +%s)
echo "bootstrap: Kokkos $version built in $((t1 - t0)) s; Kokkos Kernels next (log: $kk_log)"
cmake -S "$kk_src" -B "$build/kk" "${compiler[@]}" "${kk_flags[@]}" >"$kk_log"
cmake --build "$build/kk" -j "$jobs" >>"$kk_log"
cmake --install "$build/kk" >>"$kk_log"
t2=$(date +%s)
rm -rf "$build"
echo "$configuration" >"$stamp"
echo "bootstrap: Kokkos Kernels built in $((t2 - t1)) s"
echo "bootstrap: Kokkos + Kokkos Kernels $version ($name) installed in $prefix"
