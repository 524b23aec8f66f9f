# Helpers for the CRD tests (sourced): the smoke tests' lib.sh (kubectl on
# PATH, KUBECONFIG, a namespace of the test's own in $ns, fail/pass/expect_eq,
# $tmp), and the CRDs of crds/ installed and Established.
# shellcheck source=../../testenv/smoke/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../testenv/smoke/lib.sh"

crds_dir=$source_dir/crds
testdata=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/testdata

# install_ballast_crds: applies both CRDs (tests run in parallel and install
# them too, so a lost create race is retried) and waits until Established.
install_ballast_crds() {
  retry "the CRDs do not apply" kubectl apply -f "$crds_dir/ballast.io_weightedjobs.yaml" \
    -f "$crds_dir/ballast.io_weightprofiles.yaml" >/dev/null
  wait_established 30 crd/weightedjobs.ballast.io crd/weightprofiles.ballast.io ||
    fail "the CRDs are not Established"
  # Discovery can lag Established by a moment.
  wait_until "kind WeightedJob served" 30 kubectl get weightedjobs -n "$ns"
}

# install_ballast_crds_and_profiles: the CRDs, then the shipped WeightProfiles
# (retried: a new kind can be refused for a moment after Established).
install_ballast_crds_and_profiles() {
  install_ballast_crds
  retry "the profiles do not apply" kubectl apply -f "$source_dir/crds/profiles/" >/dev/null
}

# expect_rejected FILE MESSAGE [kubectl args...]: the server refuses FILE, both
# as a dry run and for real, with MESSAGE in its answer.
expect_rejected() {
  local file=$1 message=$2 mode
  shift 2
  for mode in --dry-run=server ""; do
    # shellcheck disable=SC2086
    if kubectl create -n "$ns" $mode -f "$file" "$@" >"$tmp/out" 2>&1; then
      fail "${file##*/} was accepted${mode:+ ($mode)}"
    fi
    # The files name v1.37's wording; v1.30 (scripts/test-k8s-oldest) put a
    # CEL rule's subject before its message and printed a duplicate as a Go map.
    sed -e 's/Invalid value: "object": /Invalid value: /' \
      -e 's/Duplicate value: map\[string\]interface {}{/Duplicate value: {/' "$tmp/out" >"$tmp/out.now"
    grep -qF -- "$message" "$tmp/out.now" ||
      fail "${file##*/}: expected '$message' in: $(cat "$tmp/out")"
  done
  pass "${file##*/} rejected: $message"
}
