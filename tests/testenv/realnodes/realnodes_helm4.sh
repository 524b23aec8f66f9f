#!/usr/bin/env bash
# The chart with Helm 4 (helm4, scripts/testenv-build) on real kubelets, and
# the test hook's delete policies with Helm 3 and Helm 4 (docs/helm.md,
# "Helm 3 and Helm 4"):
# - a release installed by Helm 3 (client-side apply) and upgraded by Helm 4
#   stays client-side, and moves to server-side apply with
#   --server-side=true; Helm 3's `helm test` with test.keepSucceededPod=false
#   (before-hook-creation,hook-succeeded) returns and leaves no pod;
# - Helm 4's uninstall keeps the history ConfigMap (helm.sh/resource-policy:
#   keep), and Helm 4's install takes it back (the same object) by
#   server-side apply (field manager helm, operation Apply), and `--wait`
#   (kstatus) returns with the operator Ready;
# - with Helm 4: the default policy (before-hook-creation) keeps the passing
#   pod and --logs reads it; an upgrade leaves the operator's Lease holder and
#   history alone (no field of theirs is the chart's); hook-succeeded deletes
#   the pod before `helm test` returns, --logs still reads it, and the
#   replaced pod of the test before went first (the delete waits that hung
#   Helm 4.2.1 for other charts: a hang fails at --timeout).
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

# BALLAST_HELM4: another Helm 4 binary to run it with (default helm4, the
# one scripts/testenv-build builds).
helm4() { command "${BALLAST_HELM4:-helm4}" "$@"; }
if ! command -v "${BALLAST_HELM4:-helm4}" >/dev/null; then
  echo "skipped: no ${BALLAST_HELM4:-helm4} (the oldest test bed has Helm 3.15 alone)"
  exit 77
fi
release=ballast-h4
uninstall_on_exit() {
  helm4 uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  kubectl delete weightedjobs -n "$ns" --all --wait=false >/dev/null 2>&1 || true
  cleanup
}
trap uninstall_on_exit EXIT

require_ballast_images
[[ $(helm version --template '{{.Version}}') == v3.* ]] || fail "helm is not Helm 3"
[[ $(helm4 version --template '{{.Version}}') == v4.* ]] || fail "helm4 is not Helm 4"
selftest=pod/$release-selftest
test_pod() { kubectl get -n "$ns" "$selftest" -o jsonpath='{.metadata.uid} {.status.phase}' 2>/dev/null; }
apply_method() { helm4 get metadata "$release" -n "$ns" | sed -n 's/^APPLY_METHOD: *//p'; }
history_field() { kubectl get configmap -n "$ns" "$release-history" -o "jsonpath=$1"; }

# --- Helm 3 installs, its test's pod deleted on success --------------------------------
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --set test.keepSucceededPod=false --wait --timeout 240s >/dev/null || fail "helm install (Helm 3)"
helm test "$release" -n "$ns" --timeout 300s >"$tmp/test3" 2>&1 || fail "helm test (Helm 3): $(cat "$tmp/test3")"
grep -q "Phase: *Succeeded" "$tmp/test3" || fail "Helm 3's helm test did not succeed: $(cat "$tmp/test3")"
expect_eq "the test pod once Helm 3's helm test returned (hook-succeeded)" "" "$(test_pod)"

# --- Helm 4 upgrades Helm 3's release, uninstalls it -----------------------------------
helm4 upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --set operator.statusIntervalSeconds=1 \
  --wait --timeout 240s >/dev/null || fail "helm4 upgrade of Helm 3's release"
[[ $(kubectl get deployment -n "$ns" "$release" -o yaml) == *"--status-interval=1"* ]] ||
  fail "Helm 4's upgrade did not reach the Deployment"
expect_eq "Helm 4's upgrade of a Helm 3 release: its apply method" "client-side apply" "$(apply_method)"
# Moving the release to server-side apply, as docs/helm.md says.
helm4 upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --server-side=true \
  --wait --timeout 240s >"$tmp/to-ssa" 2>&1 || fail "helm4 upgrade --server-side=true: $(cat "$tmp/to-ssa")"
expect_eq "after helm4 upgrade --server-side=true: its apply method" "server-side apply" "$(apply_method)"
expect_eq "the Deployment's applied fields after it: their manager" helm \
  "$(kubectl get -n "$ns" deployment/"$release" -o jsonpath='{.metadata.managedFields[?(@.operation=="Apply")].manager}')"
helm4 uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm4 uninstall"
kept_uid=$(history_field '{.metadata.uid}') || fail "Helm 4's uninstall did not keep the history ConfigMap"
pass "Helm 4 uninstalled it and kept the history ConfigMap"

# --- Helm 4 installs: server-side apply, --wait until the operator is Ready ----------------
helm4 install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --wait --timeout 240s >"$tmp/install" 2>&1 || fail "helm4 install: $(cat "$tmp/install")"
grep -q "^NOTES:" "$tmp/install" || fail "helm4 install printed no NOTES: $(cat "$tmp/install")"
# Read once, as --wait returned: kstatus calls the Deployment Current when its
# replicas are updated and available.
expect_eq "the operator's ready replicas when helm4 install --wait returned" 1 \
  "$(kubectl get deployment -n "$ns" "$release" -o jsonpath='{.status.readyReplicas}')"
expect_eq "Helm 4's install: its apply method" "server-side apply" "$(apply_method)"
for object in deployment/"$release" service/"$release"-coordinator lease/"$release" configmap/"$release"-history; do
  expect_eq "$object: the manager of its applied fields" helm \
    "$(kubectl get -n "$ns" "$object" -o jsonpath='{.metadata.managedFields[?(@.operation=="Apply")].manager}')"
done
expect_eq "the history ConfigMap Helm 4's install took back (its uid)" "$kept_uid" "$(history_field '{.metadata.uid}')"
holder() { kubectl get lease -n "$ns" "$release" -o jsonpath='{.spec.holderIdentity}'; }
held() { [[ -n $(holder) ]]; }
wait_until "the operator holds the chart's Lease" 60 held
leader=$(holder)

# helm4_test OUT: helm4 test --logs, its output in OUT; each wait for a hook's
# deletion (before-hook-creation, hook-succeeded) ended by seeing the object
# gone, as its --debug log says, not by running to --timeout (Helm 4.2.1's
# stall: it then went on as if the object were gone).
helm4_test() {
  helm4 test "$release" -n "$ns" --logs --timeout 300s --debug >"$1" 2>"$1.debug" ||
    fail "helm4 test: $(cat "$1" "$1.debug")"
  local waits gone
  waits=$(grep -c 'waiting for resources to be deleted' "$1.debug" || true)
  gone=$(grep -c 'all resources achieved desired status.*desiredStatus=NotFound' "$1.debug" || true)
  ((waits > 0)) || fail "helm4 test --debug logged no wait for a hook's deletion: $(cat "$1.debug")"
  expect_eq "helm4 test: delete waits that saw the object gone, of $waits" "$waits" "$gone"
}

# --- Helm 4, the default policy: the passing pod stays, --logs reads it ---------------------
helm4_test "$tmp/test4"
grep -q "selftest: passed: " "$tmp/test4" || fail "helm4 test --logs printed no log: $(cat "$tmp/test4")"
kept=$(test_pod)
[[ $kept == *" Succeeded" ]] || fail "the passing test's pod after helm4 test (before-hook-creation): '$kept'"
pass "helm4 test --logs, the passing pod kept: $(grep -m1 'selftest: passed' "$tmp/test4")"
# The history as the operator leaves it after a job that recorded speeds:
# data written by a manager that is not Helm (the test's job is too short to
# record any). An apply that owned the data key would take it away.
kubectl patch configmap -n "$ns" "$release-history" --type merge --field-manager ballast-operator \
  -p '{"data":{"speeds.json":"{\"version\":1,\"nodes\":{}}"}}' >/dev/null
samples=$(history_field '{.data}')
[[ $samples == *speeds.json* ]] || fail "the history's data not written: $samples"

# --- Helm 4 upgrades by server-side apply: the operator's fields stay theirs -----------------
helm4 upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --set test.keepSucceededPod=false \
  --wait --timeout 240s >"$tmp/upgrade" 2>&1 || fail "helm4 upgrade: $(cat "$tmp/upgrade")"
expect_eq "the Lease's holder after helm4 upgrade" "$leader" "$(holder)"
expect_eq "the history after helm4 upgrade" "$samples" "$(history_field '{.data}')"

# --- Helm 4, hook-succeeded: deleted before helm test returns, the log read first -------------
helm4_test "$tmp/test4b"
grep -q "selftest: passed: " "$tmp/test4b" || fail "helm4 test --logs with hook-succeeded printed no log: $(cat "$tmp/test4b")"
expect_eq "the test pod once helm4 test returned (hook-succeeded)" "" "$(test_pod)"

# --- Helm 4 uninstalls: nothing left but the history ----------------------------------------
helm4 uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm4 uninstall after its install"
left() {
  kubectl get all,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,leases,configmaps,secrets \
    -n "$ns" -o name | grep -v -e '^serviceaccount/default$' -e '^configmap/kube-root-ca.crt$' \
    -e "^configmap/$release-history\$"
  kubectl get clusterroles,clusterrolebindings,weightprofiles -l "app.kubernetes.io/instance=$release" -o name
}
deadline=$((SECONDS + 90))
until [[ -z $(left) ]]; do
  ((SECONDS < deadline)) || fail "left after helm4 uninstall: $(left | paste -sd' ')"
  sleep 0.5
done
expect_eq "the history kept by helm4 uninstall (its uid)" "$kept_uid" "$(history_field '{.metadata.uid}')"
kubectl -n "$ns" delete configmap "$release-history" >/dev/null || fail "delete the kept history"
pass "helm4 uninstall left the history alone, no test pod"
