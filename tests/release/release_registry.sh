#!/usr/bin/env bash
# scripts/release against a real registry (docs/images.md, "Publishing a release"): Debian's
# docker-registry on loopback, plain HTTP, storage in a temporary directory. From the amd64
# images scripts/images last built (--no-build), `scripts/release --registry
# 127.0.0.1:PORT/ballast-io --plain-http --arch amd64` pushes both images and the chart, then,
# from the registry's side:
# - each image is an OCI image index of linux/amd64 alone (the archive may hold more), whose
#   manifest is the one scripts/images built, its configuration amd64 at the version;
# - `helm pull oci://.../charts/ballast --version VERSION --plain-http` gets the chart that
#   was packaged, whose imageRegistry is still ghcr.io/ballast-io (release rewrites nothing);
#   `helm template` of it with imageRegistry=127.0.0.1:PORT/ballast-io names exactly the two
#   pushed images, and each resolves in the registry;
# - the krew manifest's sha256 is the archive's, its URI under --base-url; SHA256SUMS checks.
# And: --dry-run pushes nothing; a registry that does not answer fails before anything is
# built, naming the registry and the step; an architecture the archive lacks fails the check.
# Skipped (77) when scripts/images has built no amd64 images.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BALLAST_CACHE:-/var/cache/ballast}
version=$(sed -n 's/^project(ballast VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
chart_version=$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$source_dir/helm/ballast/Chart.yaml")
images=$cache/images/$version

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
pass() { echo "ok: $*"; }

read -r -a built <<<"$(cat "$images/built" 2>/dev/null || true)"
if [[ " ${built[*]} " != *" amd64 "* ]]; then
  echo "release_registry: no amd64 images built for $version (scripts/images --arch amd64 --no-smoke; skipped)"
  exit 77
fi
for tool in /usr/bin/docker-registry skopeo curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing: scripts/install-deps"
done

tmp=$(mktemp -d)
registry_pid=""
finish() {
  if [[ -n $registry_pid ]]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap finish EXIT
# Helm's registry logins, cache and repositories stay in the test's directory.
export HELM_CONFIG_HOME=$tmp/helm-config HELM_CACHE_HOME=$tmp/helm-cache HELM_DATA_HOME=$tmp/helm-data
helm=$("$source_dir/scripts/testenv-build" --print-bin)/helm
kube_version=$("$source_dir/scripts/testenv-build" --print-version)

# --- the registry ----------------------------------------------------------------------------
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
registry=127.0.0.1:$port/ballast-io
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $tmp/registry-data}
http:
  addr: 127.0.0.1:$port
EOF
/usr/bin/docker-registry serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
registry_pid=$!
up() { [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v2/") == 200 ]]; }
for _ in $(seq 100); do
  up && break
  kill -0 "$registry_pid" 2>/dev/null || fail "docker-registry stopped: $(cat "$tmp/registry.log")"
  sleep 0.1
done
up || fail "docker-registry does not answer on 127.0.0.1:$port: $(cat "$tmp/registry.log")"
pass "docker-registry on 127.0.0.1:$port ($(/usr/bin/docker-registry --version | awk '{print $NF}'))"
catalog() { curl -sf "http://127.0.0.1:$port/v2/_catalog" | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["repositories"] or []))'; }

release=("$source_dir/scripts/release" --registry "$registry" --plain-http --arch amd64 --no-build
  --out "$tmp/out" --base-url "https://releases.invalid/ballast/v$version")

# --- what must fail, and what must push nothing ------------------------------------------------
"${release[@]}" --dry-run >"$tmp/dry" 2>&1 || fail "release --dry-run: $(cat "$tmp/dry")"
grep -q "push images: skopeo copy --all --dest-tls-verify=false" "$tmp/dry" || fail "the dry run shows no push: $(cat "$tmp/dry")"
[[ -z $(catalog) && ! -e $tmp/out ]] || fail "the dry run pushed or wrote: $(catalog) $(ls "$tmp/out" 2>&1)"
pass "--dry-run lists the steps, pushes and writes nothing"

dead=127.0.0.1:$(free_port)/ballast-io
rc=0
"$source_dir/scripts/release" --registry "$dead" --plain-http --arch amd64 --no-build --out "$tmp/dead" \
  >"$tmp/dead.log" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "release to a registry that is not there: exit $rc, expected 1: $(cat "$tmp/dead.log")"
grep -q "FAILED in step 'registry check' (registry $dead): the registry ${dead%%/*} does not answer" "$tmp/dead.log" ||
  fail "the failure does not name the registry and the step: $(cat "$tmp/dead.log")"
[[ ! -e $tmp/dead ]] || fail "release wrote $tmp/dead before the registry answered"
pass "a registry that does not answer: $(grep -o "FAILED in step 'registry check'.*does not answer" "$tmp/dead.log")"

if [[ " ${built[*]} " != *" arm64 "* ]]; then
  rc=0
  "$source_dir/scripts/release" --arch amd64,arm64 --no-build --out "$tmp/arm64" >"$tmp/arm64.log" 2>&1 || rc=$?
  [[ $rc == 1 ]] && grep -q "FAILED in step 'check'.*not linux/arm64" "$tmp/arm64.log" ||
    fail "release --arch amd64,arm64 of images without arm64: exit $rc: $(cat "$tmp/arm64.log")"
  pass "an architecture the images lack: $(grep -o "is built for.*not linux/arm64" "$tmp/arm64.log" | head -1)"
fi

# --- the release -------------------------------------------------------------------------------
# The archive's index and manifests as they are now, under scripts/images' lock (it rewrites
# them while it builds); a rebuild during the test would make them differ from what was pushed.
mkdir "$tmp/oci"
exec 9>"$cache/images/lock"
flock 9
tar -C "$tmp/oci" -xf "$images/ballast-$version.oci.tar" ./index.json ./blobs
archive_stamp=$(stat -c '%s %Y' "$images/ballast-$version.oci.tar")
flock -u 9
"${release[@]}" >"$tmp/release.log" 2>&1 || fail "scripts/release: $(cat "$tmp/release.log")"
[[ $(stat -c '%s %Y' "$images/ballast-$version.oci.tar") == "$archive_stamp" ]] ||
  fail "scripts/images rewrote $images/ballast-$version.oci.tar during the test: run it again"
cat "$tmp/release.log"
for step in check chart plugin sums "push images" "push chart"; do
  grep -Eq "^release: \[[0-9]/6\] $step: done in [0-9]+\.[0-9] s$" "$tmp/release.log" ||
    fail "no timed line for the step '$step'"
done
pass "six steps, each timed"
expect_catalog="ballast-io/ballast ballast-io/ballast-worker ballast-io/charts/ballast"
[[ $(catalog) == "$expect_catalog" ]] || fail "the registry holds '$(catalog)', expected '$expect_catalog'"
pass "the registry holds $expect_catalog"

# Each image against the archive's amd64 manifest, as scripts/images built it.
for image in ballast ballast-worker; do
  skopeo inspect --raw --tls-verify=false "docker://$registry/$image:$version" >"$tmp/$image.index" ||
    fail "skopeo inspect --raw $registry/$image:$version"
  python3 - "$tmp/$image.index" "$tmp/oci" "$image:$version" >"$tmp/$image.digest" <<'PY' || fail "$image: the index"
import json, pathlib, sys
index = json.load(open(sys.argv[1]))
layout, name = pathlib.Path(sys.argv[2]), sys.argv[3]
assert index["mediaType"] == "application/vnd.oci.image.index.v1+json", index.get("mediaType")
platforms = [m["platform"] for m in index["manifests"]]
assert platforms == [{"architecture": "amd64", "os": "linux"}], platforms
local = [m for m in json.loads((layout / "index.json").read_text())["manifests"]
         if m["annotations"]["org.opencontainers.image.ref.name"].rsplit("/", 1)[-1] == name]
blob = lambda d: json.loads((layout / "blobs" / d.replace(":", "/")).read_text())
built = {m["platform"]["architecture"]: m["digest"] for m in blob(local[0]["digest"])["manifests"]}
assert index["manifests"][0]["digest"] == built["amd64"], (index["manifests"][0]["digest"], built)
print(built["amd64"])
PY
  skopeo inspect --config --tls-verify=false "docker://$registry/$image@$(cat "$tmp/$image.digest")" >"$tmp/$image.config" ||
    fail "skopeo inspect --config $registry/$image"
  python3 - "$tmp/$image.config" "$image" "$version" <<'PY' || fail "$image: the configuration in the registry"
import json, sys
config, image, version = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert (config["os"], config["architecture"]) == ("linux", "amd64"), (config["os"], config["architecture"])
labels = config["config"]["Labels"]
assert labels["org.opencontainers.image.title"] == image, labels
assert labels["org.opencontainers.image.version"] == version, labels
assert config["config"]["Entrypoint"] == [f"/usr/bin/{image}"], config["config"]["Entrypoint"]
PY
  pass "$registry/$image:$version: an OCI index of linux/amd64 alone, the manifest scripts/images built ($(cut -c1-19 "$tmp/$image.digest")), its configuration amd64 at $version"
done

# --- the chart, as a user pulls it ----------------------------------------------------------------
mkdir "$tmp/pulled"
"$helm" pull "oci://$registry/charts/ballast" --version "$chart_version" --plain-http -d "$tmp/pulled" \
  >"$tmp/pull.log" 2>&1 || fail "helm pull: $(cat "$tmp/pull.log")"
cmp -s "$tmp/pulled/ballast-$chart_version.tgz" "$tmp/out/ballast-$chart_version.tgz" ||
  fail "the chart pulled differs from the one packaged"
"$helm" show values "$tmp/pulled/ballast-$chart_version.tgz" >"$tmp/values.yaml"
[[ $(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["imageRegistry"])' "$tmp/values.yaml") == ghcr.io/ballast-io ]] ||
  fail "the pushed chart's imageRegistry is not the published ghcr.io/ballast-io: $(grep imageRegistry "$tmp/values.yaml")"
pass "helm pull oci://$registry/charts/ballast --version $chart_version: the chart packaged, imageRegistry ghcr.io/ballast-io"

"$helm" template ballast "$tmp/pulled/ballast-$chart_version.tgz" -n ballast-system --kube-version "$kube_version" \
  --set "imageRegistry=$registry" >"$tmp/rendered.yaml" || fail "helm template of the pulled chart"
python3 - "$tmp/rendered.yaml" >"$tmp/named" <<'PY'
import sys, yaml
named = set()
def walk(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "image" and isinstance(value, str):
                named.add(value)
            walk(value)
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, str) and value.startswith("--worker-image"):
                named.add(value.split("=", 1)[1] if value.startswith("--worker-image=") else value.split("=", 2)[2])
            walk(value)
for document in yaml.safe_load_all(open(sys.argv[1])):
    walk(document)
print("\n".join(sorted(named)))
PY
expected=$(printf '%s\n' "$registry/ballast-worker:$version" "$registry/ballast:$version")
[[ $(cat "$tmp/named") == "$expected" ]] || fail "helm template names $(paste -sd' ' "$tmp/named"), expected $(paste -sd' ' <<<"$expected")"
while read -r reference; do
  skopeo inspect --raw --tls-verify=false "docker://$reference" >/dev/null || fail "$reference is not in the registry"
done <"$tmp/named"
pass "helm template --set imageRegistry=$registry names $(paste -sd' ' "$tmp/named"), both in the registry"

# --- the kubectl plugin's archive and krew manifest --------------------------------------------
archive=kubectl-ballast-$version-linux-amd64.tar.gz
python3 - "$tmp/out/ballast.yaml" "$(sha256sum "$tmp/out/$archive" | cut -d' ' -f1)" \
  "https://releases.invalid/ballast/v$version/$archive" <<'PY' || fail "the krew manifest"
import sys, yaml
manifest, sha, uri = yaml.safe_load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
(platform,) = manifest["spec"]["platforms"]
assert platform["selector"]["matchLabels"] == {"os": "linux", "arch": "amd64"}, platform["selector"]
assert platform["sha256"] == sha, (platform["sha256"], sha)
assert platform["uri"] == uri, platform["uri"]
PY
(cd "$tmp/out" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not check"
expect_files="SHA256SUMS ballast-$chart_version.tgz ballast.yaml $archive"
[[ $(cd "$tmp/out" && LC_ALL=C ls | paste -sd' ') == "$expect_files" ]] || fail "the release wrote $(ls "$tmp/out"), expected $expect_files"
pass "the krew manifest names the archive's sha256 and its URI; SHA256SUMS checks $(wc -l <"$tmp/out/SHA256SUMS") files"
