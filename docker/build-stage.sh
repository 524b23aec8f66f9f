#!/bin/bash
# The build stage of docker/Dockerfile: compiles ballast and ballast-worker for one target
# architecture on the amd64 build image (natively for amd64, with Debian's cross compilers for
# arm64 and arm) and lays out each image's root filesystem with docker/layout.sh:
#   /out/ballast/         /usr/bin/ballast + its loader, shared libraries and their licenses
#   /out/ballast-worker/  /usr/bin/ballast-worker + the same for it
#   build-stage.sh ARCH     ARCH: amd64, arm64 or arm (GOARCH names, as TARGETARCH)
# Compiler objects are cached by ccache in $CCACHE_DIR (a volume the build script mounts).
set -euo pipefail

arch=${1:?usage: build-stage.sh amd64|arm64|arm}
case "$arch" in
  amd64) triple=x86_64-linux-gnu ;;
  arm64) triple=aarch64-linux-gnu ;;
  arm) triple=arm-linux-gnueabihf ;;
  *) echo "build-stage.sh: architecture '$arch': expected amd64, arm64 or arm" >&2; exit 2 ;;
esac
export BALLAST_TRIPLE=$triple

# The build type of every build of the project (RelWithDebInfo: -O2), so that each architecture
# ships the code the amd64 image takes from a host build; without the debug information, which
# the image strips anyway.
cmake_args=(-S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBALLAST_DEBUG_INFO=OFF
  -DBALLAST_BUILD_TESTS=OFF -DBALLAST_BUILD_BENCH=OFF
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [[ "$arch" != amd64 ]]; then cmake_args+=(-DCMAKE_TOOLCHAIN_FILE=/src/docker/cross.cmake); fi
cmake "${cmake_args[@]}" >/dev/null
ccache --zero-stats >/dev/null
nice ninja -C /build -j "${BUILD_JOBS:-2}" ballast ballast-worker
echo "build-stage: ccache $(ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m=$2} END{printf "%d hits, %d misses", h, m}')"

# Lays out /out/ballast and /out/ballast-worker (docker/layout.sh: the same layout scripts/images
# makes from an amd64 host's own build).
/src/docker/layout.sh "$arch" /build /src /out
# The objects are in ccache; without them this stage's cached layer is only /out and /src.
rm -rf /build
