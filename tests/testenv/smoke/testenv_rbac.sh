#!/usr/bin/env bash
# RBAC is enforced: the restricted identity (user ballast-restricted) may do
# nothing but discovery until a RoleBinding grants it more, and then only in
# that namespace; the admin identity may do everything.
source "$(dirname "$0")/lib.sh"

restricted=(kubectl --kubeconfig "$BALLAST_TESTENV_DIR/kubeconfig-restricted")
expect_eq "restricted identity" ballast-restricted \
  "$("${restricted[@]}" auth whoami -o 'jsonpath={.status.userInfo.username}')"
"${restricted[@]}" api-resources >/dev/null || fail "restricted identity cannot use discovery"
pass "restricted identity can use discovery"
expect_eq "restricted: can-i list pods" no "$("${restricted[@]}" auth can-i list pods -n "$ns" || true)"
if "${restricted[@]}" get pods -n "$ns" 2>"$tmp/err"; then
  fail "restricted identity listed pods without a role"
fi
grep -q Forbidden "$tmp/err" || fail "expected Forbidden, got: $(cat "$tmp/err")"
pass "restricted identity is Forbidden to list pods"
expect_eq "admin: can-i '*' '*'" yes "$(kubectl auth can-i '*' '*' --all-namespaces)"

kubectl create role pod-reader -n "$ns" --verb=get,list,watch --resource=pods >/dev/null
kubectl create rolebinding pod-reader -n "$ns" --role=pod-reader --user=ballast-restricted >/dev/null
can_list() { [[ $("${restricted[@]}" auth can-i list pods -n "$ns") == yes ]]; }
wait_until "restricted identity may list pods in $ns after the RoleBinding" 10 can_list
"${restricted[@]}" get pods -n "$ns" >/dev/null || fail "restricted identity cannot list pods in $ns"
expect_eq "restricted: can-i list pods in default" no \
  "$("${restricted[@]}" auth can-i list pods -n default || true)"
expect_eq "restricted: can-i delete pods in $ns" no \
  "$("${restricted[@]}" auth can-i delete pods -n "$ns" || true)"
