#!/bin/bash
# The build stage of docker/Dockerfile: compiles ballast and ballast-worker for one target
# architecture on the amd64 build image (natively for amd64, with Debian's cross compilers for
# arm64 and arm) and lays out each image's root filesystem:
#   /out/ballast/         /usr/bin/ballast + its loader and shared libraries
#   /out/ballast-worker/  /usr/bin/ballast-worker + its loader and shared libraries
# Each holds the program's dynamic loader at its PT_INTERP path, the closure of its DT_NEEDED
# libraries and of those it opens with dlopen (OpenBLAS, for the worker's matmul kernel),
# resolved as the target's loader would, under /usr/lib/<triple>/, /etc/passwd and /etc/group
# with root, nobody and nonroot (65532), and an empty /tmp (mode 1777).
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

cmake_args=(-S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release
  -DBALLAST_BUILD_TESTS=OFF -DBALLAST_BUILD_BENCH=OFF
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [[ "$arch" != amd64 ]]; then cmake_args+=(-DCMAKE_TOOLCHAIN_FILE=/src/docker/cross.cmake); fi
cmake "${cmake_args[@]}" >/dev/null
ccache --zero-stats >/dev/null
nice ninja -C /build -j "${BUILD_JOBS:-2}" ballast ballast-worker
echo "build-stage: ccache $(ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m=$2} END{printf "%d hits, %d misses", h, m}')"

readelf=$triple-readelf
lib_dirs=(/usr/lib/$triple /lib/$triple)

# Prints the DT_NEEDED sonames of the ELF file $1.
needed() { "$readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

# Prints the path of the library $1 where the target's loader finds it; fails if none.
find_library() {
  local dir
  for dir in "${lib_dirs[@]}"; do
    if [[ -e "$dir/$1" ]]; then echo "$dir/$1"; return 0; fi
  done
  echo "build-stage.sh: $1 (needed by the $arch build) is in none of ${lib_dirs[*]}" >&2
  return 1
}

# Lays out /out/$1 for the program /build/$1, with the libraries named after it
# (sonames the program opens with dlopen, which DT_NEEDED does not list).
layout() {
  local name=$1 root=/out/$1
  shift
  rm -rf "$root"
  install -d "$root/usr/bin" "$root/usr/lib/$triple" "$root/etc" "$root/tmp"
  chmod 1777 "$root/tmp"
  "$triple-strip" --strip-all -o "$root/usr/bin/$name" "/build/$name"
  local interp
  interp=$("$readelf" -l "/build/$name" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
  install -D -m 0755 "$(readlink -f "$(find_library "${interp##*/}")")" "$root$interp"
  local -a queue
  local -A seen=(["${interp##*/}"]=1)
  mapfile -t queue < <(needed "/build/$name")
  queue+=("$@")
  while ((${#queue[@]} > 0)); do
    local soname=${queue[0]} path
    queue=("${queue[@]:1}")
    [[ -n "${seen[$soname]:-}" ]] && continue
    seen[$soname]=1
    path=$(find_library "$soname")
    install -m 0644 "$(readlink -f "$path")" "$root/usr/lib/$triple/$soname"
    mapfile -t -O "${#queue[@]}" queue < <(needed "$path")
  done
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$root/etc/group"
  echo "build-stage: $name for $arch: $(du -sh --apparent-size "$root" | cut -f1)," \
    "$(find "$root/usr/lib" -type f | wc -l) libraries"
}

layout ballast
# The matmul kernel opens OpenBLAS when it is first used (worker/kernels/matmul_kernel.cc).
layout ballast-worker libopenblas.so.0
# The objects are in ccache; without them this stage's cached layer is only /out and /src.
rm -rf /build
