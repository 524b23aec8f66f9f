#!/bin/bash
# Lays out the root filesystems of the two images from programs already compiled for one
# architecture, on a Debian system that has that architecture's libraries (the amd64 build
# image, where docker/build-stage.sh has just compiled them, or an amd64 Debian host whose
# own build/ made them: scripts/images):
#   OUT/ballast/         /usr/bin/ballast + its loader and shared libraries
#   OUT/ballast-worker/  /usr/bin/ballast-worker + its loader and shared libraries, and
#                        /bundle: the same as `ballast-worker bundle` lays out (ld.so, lib/,
#                        ballast-worker), as relative links into the image, for a pod that
#                        mounts the whole image as an image volume (docs/workloads.md)
# Each root holds the program, stripped; its dynamic loader at its PT_INTERP path; the closure
# of its DT_NEEDED libraries and of those it opens with dlopen (OpenBLAS, for the worker's
# matmul kernel), resolved as the target's loader would, under /usr/lib/<triple>/;
# /etc/passwd and /etc/group with root, nobody and nonroot (65532); an empty /tmp (mode 1777);
# and the licenses of what it ships: the project's LICENSE and NOTICE under
# /usr/share/doc/ballast/, and the Debian copyright file of each package a library or the
# loader comes from under /usr/share/doc/<package>/copyright.
#   layout.sh ARCH BUILD_DIR SOURCE_DIR OUT
#     ARCH: amd64, arm64 or arm (GOARCH names); BUILD_DIR holds the programs ballast and
#     ballast-worker; SOURCE_DIR is the repository (LICENSE, NOTICE).
set -euo pipefail

if (($# != 4)); then
  echo "usage: layout.sh amd64|arm64|arm BUILD_DIR SOURCE_DIR OUT" >&2
  exit 2
fi
arch=$1 build=$2 src=$3 out=$4
case "$arch" in
  amd64) triple=x86_64-linux-gnu ;;
  arm64) triple=aarch64-linux-gnu ;;
  arm) triple=arm-linux-gnueabihf ;;
  *) echo "layout.sh: architecture '$arch': expected amd64, arm64 or arm" >&2; exit 2 ;;
esac
# The target's binutils; on an amd64 host building for amd64, the unprefixed ones.
readelf=$triple-readelf
strip=$triple-strip
command -v "$readelf" >/dev/null || readelf=readelf
command -v "$strip" >/dev/null || strip=strip
lib_dirs=(/usr/lib/$triple /lib/$triple)

# Prints the DT_NEEDED sonames of the ELF file $1.
needed() { "$readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

# Prints the path of the library $1 where the target's loader finds it; fails if none.
find_library() {
  local dir
  for dir in "${lib_dirs[@]}"; do
    if [[ -e "$dir/$1" ]]; then echo "$dir/$1"; return 0; fi
  done
  echo "layout.sh: $1 (needed by the $arch build) is in none of ${lib_dirs[*]}" >&2
  return 1
}

# Prints the Debian package that installed the file $1 (as named, resolved, or its twin under
# /lib or /usr/lib: dpkg records one of them on a merged-/usr system); fails if none did.
package_of() {
  local path resolved candidate package
  path=$1
  resolved=$(readlink -f "$path")
  for candidate in "$path" "$resolved" "${path/#\/usr\/lib\//\/lib\/}" "${resolved/#\/usr\/lib\//\/lib\/}" \
    "${path/#\/lib\//\/usr\/lib\/}" "${resolved/#\/lib\//\/usr\/lib\/}"; do
    package=$(dpkg-query -S "$candidate" 2>/dev/null | sed -n '1s/^\([^:,]*\).*: .*/\1/p')
    if [[ -n $package ]]; then echo "$package"; return 0; fi
  done
  echo "layout.sh: no Debian package owns $path: its license cannot be shipped" >&2
  return 1
}

# Copies the copyright file of the package that installed $2 into the root $1.
ship_license_of() {
  local root=$1 package copyright
  package=$(package_of "$2")
  copyright=$(readlink -f "/usr/share/doc/$package/copyright")
  [[ -f $copyright ]] || {
    echo "layout.sh: /usr/share/doc/$package/copyright is missing (the build image must keep it)" >&2
    return 1
  }
  install -D -m 0644 "$copyright" "$root/usr/share/doc/$package/copyright"
}

# Lays out $out/$1 for the program $build/$1, with the libraries named after it
# (sonames the program opens with dlopen, which DT_NEEDED does not list).
layout() {
  local name=$1 root=$out/$1
  shift
  rm -rf "$root"
  install -d "$root/usr/bin" "$root/usr/lib/$triple" "$root/etc" "$root/tmp"
  chmod 1777 "$root/tmp"
  "$strip" --strip-all -o "$root/usr/bin/$name" "$build/$name"
  install -D -m 0644 "$src/LICENSE" "$root/usr/share/doc/ballast/LICENSE"
  install -D -m 0644 "$src/NOTICE" "$root/usr/share/doc/ballast/NOTICE"
  local interp loader
  interp=$("$readelf" -l "$build/$name" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
  loader=$(find_library "${interp##*/}")
  install -D -m 0755 "$(readlink -f "$loader")" "$root$interp"
  ship_license_of "$root" "$loader"
  local -a queue
  local -A seen=(["${interp##*/}"]=1)
  mapfile -t queue < <(needed "$build/$name")
  queue+=("$@")
  while ((${#queue[@]} > 0)); do
    local soname=${queue[0]} path
    queue=("${queue[@]:1}")
    [[ -n "${seen[$soname]:-}" ]] && continue
    seen[$soname]=1
    path=$(find_library "$soname")
    install -m 0644 "$(readlink -f "$path")" "$root/usr/lib/$triple/$soname"
    ship_license_of "$root" "$path"
    mapfile -t -O "${#queue[@]}" queue < <(needed "$path")
  done
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$root/etc/group"
  echo "layout: $name for $arch: $(du -sh --apparent-size "$root" | cut -f1)," \
    "$(find "$root/usr/lib" -type f | wc -l) libraries," \
    "$(find "$root/usr/share/doc" -name copyright | wc -l) packages' copyright files"
}

# bundle_links ROOT: ROOT/bundle/{ld.so,lib,ballast-worker}, relative links to the loader, the
# libraries' directory and the program, so that they resolve wherever the image is mounted
# (operator/api/pod_template.h, kBundleImageDir).
bundle_links() {
  local root=$1 interp
  interp=$("$readelf" -l "$root/usr/bin/ballast-worker" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
  install -d "$root/bundle"
  ln -s "..$interp" "$root/bundle/ld.so"
  ln -s "../usr/lib/$triple" "$root/bundle/lib"
  ln -s ../usr/bin/ballast-worker "$root/bundle/ballast-worker"
  local link
  for link in ld.so lib ballast-worker; do
    [[ -e $root/bundle/$link ]] || { echo "layout.sh: bundle/$link resolves to nothing" >&2; return 1; }
  done
}

layout ballast
# The matmul kernel opens OpenBLAS when it is first used (worker/kernels/matmul_kernel.cc).
layout ballast-worker libopenblas.so.0
bundle_links "$out/ballast-worker"
