#!/usr/bin/env bash
# scripts/plugin-archives (docs/kubectl-plugin.md): the archive of the kubectl plugin and its
# krew manifest, packed from this machine's build of ballast (--binary; the images' archives
# are packed the same way from the image's root). The archive holds the launcher, lib/ and
# the project's LICENSE and NOTICE, the manifest names the project's homepage, the archive's
# sha256 and the layout krew installs (the license with it), and the launcher runs
# the program as kubectl-ballast through a symlink (as krew links it) with no library of this
# machine's search path.
#   usage: plugin_archives.sh BALLAST_BINARY
set -euo pipefail
ballast=${1:?usage: plugin_archives.sh BALLAST_BINARY}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

version=$(sed -n 's/^project(ballast VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
arch=$(dpkg --print-architecture)
arch=${arch/armhf/arm}
"$source_dir/scripts/plugin-archives" --binary "$ballast" --out "$tmp/out" \
  --base-url https://releases.invalid/ballast >"$tmp/log" || fail "$(cat "$tmp/log")"
archive=$tmp/out/kubectl-ballast-$version-linux-$arch.tar.gz
[[ -f $archive ]] || fail "no $archive: $(cat "$tmp/log")"

tar -tzf "$archive" | sort >"$tmp/files"
grep -qx 'kubectl-ballast' "$tmp/files" || fail "no launcher at the archive's root"
for file in lib/ballast lib/ld.so lib/libc.so.6 lib/libcpprest.so.2.10 lib/libyaml-cpp.so.0.7; do
  grep -qx "$file" "$tmp/files" || fail "no $file in the archive: $(cat "$tmp/files")"
done
pass "the archive holds kubectl-ballast and lib/ ($(wc -l <"$tmp/files") entries)"
mkdir "$tmp/top"
for file in LICENSE NOTICE; do
  grep -qx "$file" "$tmp/files" || fail "no $file at the archive's root: $(cat "$tmp/files")"
  tar -C "$tmp/top" -xzf "$archive" "$file"
  cmp -s "$source_dir/$file" "$tmp/top/$file" || fail "the archive's $file differs from the repository's"
done
pass "the archive holds the repository's LICENSE and NOTICE at its root"

python3 - "$tmp/out/ballast.yaml" "$arch" "$(sha256sum "$archive" | cut -d' ' -f1)" "$version" <<'PY' ||
import sys, yaml
manifest, arch, sha, version = sys.argv[1:]
doc = yaml.safe_load(open(manifest))
assert doc["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2", doc["apiVersion"]
assert doc["kind"] == "Plugin" and doc["metadata"]["name"] == "ballast"
assert doc["spec"]["version"] == "v" + version, doc["spec"]["version"]
assert doc["spec"]["shortDescription"]
assert doc["spec"]["homepage"] == "https://github.com/ballast-io/ballast", doc["spec"].get("homepage")
(platform,) = doc["spec"]["platforms"]
assert platform["selector"]["matchLabels"] == {"os": "linux", "arch": arch}, platform
assert platform["sha256"] == sha, (platform["sha256"], sha)
assert platform["uri"] == f"https://releases.invalid/ballast/kubectl-ballast-{version}-linux-{arch}.tar.gz", platform["uri"]
assert platform["bin"] == "kubectl-ballast"
assert {f["from"] for f in platform["files"]} == {"kubectl-ballast", "lib", "LICENSE", "NOTICE"}, platform["files"]
PY
  fail "the manifest is wrong"
pass "the manifest names the homepage, the archive's sha256, URI and layout, LICENSE and NOTICE among its files"

# Installed as krew does: unpacked, and linked from a directory on PATH.
mkdir -p "$tmp/install" "$tmp/bin"
tar -C "$tmp/install" -xzf "$archive"
ln -s "$tmp/install/kubectl-ballast" "$tmp/bin/kubectl-ballast"
out=$(env -i PATH="$tmp/bin:/usr/bin:/bin" LD_LIBRARY_PATH=/nonexistent kubectl-ballast --version) ||
  fail "kubectl-ballast --version failed"
[[ $out == "kubectl-ballast $version" ]] || fail "--version said '$out'"
env -i PATH="$tmp/bin:/usr/bin:/bin" kubectl-ballast --help >"$tmp/help" || fail "--help failed"
for sub in weights top report fit; do
  grep -q "^  $sub " "$tmp/help" || fail "--help lists no $sub: $(cat "$tmp/help")"
done
pass "the launcher runs the plugin through a symlink: $out"
