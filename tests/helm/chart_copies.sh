#!/usr/bin/env bash
# One source of the CRDs, the raspberry-pi profile and the Prometheus rules:
# the chart's copies (helm/ballast/crds/, helm/ballast/files/profiles/,
# helm/ballast/files/prometheus/) equal crds/ and prometheus/ byte for
# byte, and `helm package` carries them, without the chart's tests. (Helm
# 3.15 would package a symlink's target too, with a warning; copies keep the
# chart whole wherever it is copied, and this test keeps them equal.)
source "$(dirname "$0")/lib.sh"

# same SOURCE COPY: the copy exists, is a regular file, and equals the source.
same() {
  [[ -f $2 && ! -L $2 ]] || fail "${2#"$source_dir"/} is missing or not a regular file (copy ${1#"$source_dir"/} there)"
  cmp -s "$1" "$2" ||
    fail "${2#"$source_dir"/} differs from ${1#"$source_dir"/}: copy it again (cp ${1#"$source_dir"/} ${2#"$source_dir"/})"
  pass "${2#"$source_dir"/} = ${1#"$source_dir"/}"
}
for crd in "$source_dir"/crds/*.yaml; do
  same "$crd" "$chart/crds/${crd##*/}"
done
for copy in "$chart"/crds/*; do
  [[ -f $source_dir/crds/${copy##*/} ]] || fail "helm/ballast/crds/${copy##*/} has no source in crds/"
done
same "$source_dir/crds/profiles/raspberry-pi.yaml" "$chart/files/profiles/raspberry-pi.yaml"
same "$source_dir/prometheus/ballast-rules.yaml" "$chart/files/prometheus/ballast-rules.yaml"

helm package "$chart" --destination "$tmp" >/dev/null
package=$(ls "$tmp"/ballast-*.tgz)
tar -tzf "$package" | sort >"$tmp/listing"
mkdir "$tmp/unpacked"
tar -xzf "$package" -C "$tmp/unpacked"
for file in crds/ballast.io_weightedjobs.yaml crds/ballast.io_weightprofiles.yaml \
  files/profiles/raspberry-pi.yaml files/prometheus/ballast-rules.yaml; do
  cmp -s "$chart/$file" "$tmp/unpacked/ballast/$file" || fail "the package's $file differs or is missing"
done
pass "helm package carries the CRDs, the profile and the rules"
! grep -E '^ballast/(tests|ci)/' "$tmp/listing" || fail "the package carries the chart's tests"
grep -q '^ballast/templates/tests/selftest.yaml$' "$tmp/listing" || fail "the package lacks the helm test pod"
pass "helm package leaves out tests/ and ci/, keeps templates/tests/ ($(wc -l <"$tmp/listing") files)"

# Regression: a copy that differs is caught (the check above is not vacuous).
cp -r "$chart" "$tmp/chart"
echo "# edited" >>"$tmp/chart/crds/ballast.io_weightedjobs.yaml"
! cmp -s "$source_dir/crds/ballast.io_weightedjobs.yaml" "$tmp/chart/crds/ballast.io_weightedjobs.yaml" ||
  fail "cmp does not see an edited copy"
pass "an edited copy is told apart"

# The chart's appVersion (the images' default tag) is the project's version.
project_version=$(sed -n 's/^project(ballast VERSION \([0-9.]*\) .*/\1/p' "$source_dir/CMakeLists.txt")
app_version=$(sed -n 's/^appVersion: "\(.*\)"$/\1/p' "$chart/Chart.yaml")
[[ -n $project_version ]] || fail "no project version in CMakeLists.txt"
[[ $app_version == "$project_version" ]] ||
  fail "helm/ballast/Chart.yaml appVersion is '$app_version', the project's version (CMakeLists.txt) is '$project_version'"
pass "appVersion $app_version = the project's version"
