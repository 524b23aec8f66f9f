#!/usr/bin/env bash
# The install as a user does it, on real kubelets running the real images:
# helm install from the chart -> both operator replicas Ready -> kubectl apply
# of seed 000's job -> Succeeded with 25997 primes and weights 5 / 5 / 1, the
# workers reaching the coordinator through its Service; the leader's pod
# killed mid-job -> the standby resumes and the result is exact; helm upgrade
# of a value mid-job -> still exact; helm test passes and --logs prints its
# log; helm uninstall leaves only the CRDs and the test's pod; between them an exec job runs its command in a busybox image
# (nothing of ours in it) through the bundled worker. The chart comes from
# the bed's registry by its OCI reference, and the operator's and the
# workers' images are pulled from there (their Pulled Events name the
# registry's references). The chart's
# NetworkPolicy is enforced (kube-router's controller on every node): from
# another namespace, a pod without the worker labels is refused at the
# coordinator port and reaches the metrics port, a pod with them reaches the
# coordinator. Needs the images in the
# bed's registry (scripts/images --arch amd64 before scripts/testenv-up
# --real-nodes pushes them).
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

release=ballast

# A second namespace, for the NetworkPolicy's peers.
peer=$ns-peer
kubectl create namespace "$peer" >/dev/null
# A failed run must not leave the release's cluster-wide objects behind (the
# next install could not take them over).
uninstall_on_exit() {
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  kubectl delete namespace "$peer" --wait=false >/dev/null 2>&1 || true
  cleanup
}
trap uninstall_on_exit EXIT

# --- install -----------------------------------------------------------------
require_ballast_images
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --wait --timeout 240s >"$tmp/install" ||
  fail "helm install: $(cat "$tmp/install")"
grep -q "NOTES" "$tmp/install" || fail "helm install printed no NOTES"
pass "helm install $chart --version $chart_version, both replicas Ready"
expect_from_registry ballast
operator_pods() { kubectl get pods -n "$ns" -l app.kubernetes.io/component=operator -o name; }
leader() { kubectl get pods -n "$ns" -l ballast.io/coordinator=leader -o jsonpath='{.items[*].metadata.name}'; }
wait_until "a leader pod labelled for the coordinator Service" 60 test -n "$(leader)"
expect_eq "operator pods" 2 "$(operator_pods | wc -l)"
service=$(kubectl get services -n "$ns" -o name | grep coordinator)
# (A function: wait_until retries a command, and $(...) in its arguments
# would be read once.)
one_endpoint() {
  [[ $(kubectl get endpoints -n "$ns" "${service#service/}" -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 1 ]]
}
wait_until "the coordinator Service has one endpoint" 30 one_endpoint

# --- the NetworkPolicy, enforced -------------------------------------------------
# Probes in the other namespace, on a board (the operator is on its own node):
# "plain" has no label of Ballast's; "worker" has a job's worker labels.
coordinator=${service#service/}.$ns.svc:$(jp "$service" '{.spec.ports[0].port}')
metrics_port=$(kubectl get deployment -n "$ns" -l app.kubernetes.io/component=operator \
  -o jsonpath='{.items[0].spec.template.spec.containers[0].ports[?(@.name=="metrics")].containerPort}')
sleeper=(--image="$busybox" --image-pull-policy=Never --restart=Never
  --overrides="{\"spec\":{\"nodeName\":\"${real_nodes[0]}\",\"terminationGracePeriodSeconds\":1}}")
kubectl run plain -n "$peer" "${sleeper[@]}" --command -- sleep 3600 >/dev/null
kubectl run worker -n "$peer" "${sleeper[@]}" \
  --labels=app.kubernetes.io/managed-by=ballast,ballast.io/job=x --command -- sleep 3600 >/dev/null
peer_running() { [[ $(kubectl get pod -n "$peer" "$1" -o jsonpath='{.status.phase}') == Running ]]; }
for pod in plain worker; do
  wait_until "probe $pod Running" 60 peer_running "$pod"
done
# answers PROBE HOST:PORT PATH: whether an HTTP GET from pod PROBE gets an
# answer (refused, or no connection within 2 s: none). Only the status line
# leaves the pod: with pipefail, grep -q ending a long read early would fail
# kubectl on SIGPIPE.
answers() {
  kubectl exec -n "$peer" "$1" -- sh -c \
    "printf 'GET $3 HTTP/1.0\r\n\r\n' | nc -w 2 ${2%:*} ${2##*:} | head -n 1" 2>/dev/null | grep -q '^HTTP/1'
}
silent() { ! answers "$@"; }
# expect_answer PROBE HOST:PORT PATH yes|no: waits up to 30 s (the nodes'
# controllers apply a change within a sync), then checks once more.
expect_answer() {
  local check=answers
  [[ $4 == no ]] && check=silent
  wait_until "$1 -> $2$3: $4" 30 "$check" "$1" "$2" "$3"
  "$check" "$1" "$2" "$3" || fail "$1 -> $2$3 changed back: expected $4"
}
leader_ip=$(kubectl get pod -n "$ns" "$(leader)" -o jsonpath='{.status.podIP}')
expect_answer plain "$coordinator" / no
expect_answer worker "$coordinator" / yes
expect_answer plain "$leader_ip:$metrics_port" /metrics yes
# Without the job label, ballast's own label is not enough.
kubectl label pod -n "$peer" worker ballast.io/job- >/dev/null
expect_answer worker "$coordinator" / no
kubectl delete pods -n "$peer" --all --wait=false >/dev/null
pass "NetworkPolicy: the coordinator port only from a job's workers, any namespace"

# apply_job NAME LIMIT: seed 000's job on the seed-000 boards.
apply_job() {
  sed -e "s/name: primes-300000/name: $1/" -e "s/limit: 300000/limit: $2/" \
    "$source_dir/examples/jobs/primes-300000.yaml" >"$tmp/$1.yaml"
  printf '  nodeSelector: {ballast.io/pool: seed000}\n' >>"$tmp/$1.yaml"
  kubectl apply -n "$ns" -f "$tmp/$1.yaml" >/dev/null
}
phase() { jp "weightedjob/$1" '{.status.phase}'; }
succeeded() {
  local p
  p=$(phase "$1")
  [[ $p == Failed ]] && fail "job $1 failed: $(jp "weightedjob/$1" '{.status.conditions}')"
  [[ $p == Succeeded ]]
}
completed() { jp "weightedjob/$1" '{.status.completedItems}'; }
midway() { local c; c=$(completed "$1"); [[ ${c:-0} -gt 0 ]]; }

# --- seed 000's job ------------------------------------------------------------
apply_job seed000 300000
wait_until "job seed000 Succeeded" 300 succeeded seed000
pass "seed000: efficiency $(jp weightedjob/seed000 '{.status.efficiency}') (pod start included), against $(jp weightedjob/seed000 '{.status.efficiencyReference}'), the job's own estimate $(jp weightedjob/seed000 '{.status.estimatedEfficiency}')"
expect_eq "primes below 300000" 25997 "$(jp weightedjob/seed000 '{.status.result.primes.count}')"
for row in pi4b-0=5 pi4b-1=5 pi3b-0=1; do
  expect_eq "weight of ${row%=*}" "${row#*=}" \
    "$(jp weightedjob/seed000 "{.status.nodes[?(@.name==\"${row%=*}\")].weight}")"
done
url=$(kubectl get pods -n "$ns" -l ballast.io/job=seed000 \
  -o jsonpath='{.items[0].spec.containers[0].env[?(@.name=="BALLAST_COORDINATOR")].value}')
expect_eq "the workers' coordinator" "http://${service#service/}.$ns.svc:8080" "$url"
expect_from_registry ballast-worker

# --- exec in an image with nothing of ours: busybox, no libc -------------------------
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: exec-busybox}
spec:
  workload:
    exec:
      image: busybox:1.35
      perItem: true
      # In the user's image: its busybox is there, no program of ours is
      # outside the bundle's volume, and the item is the one given. Each
      # item also orphans a process that exits at once: the pod's PID 1
      # (the sandbox, as the pod shares its process namespace) must reap
      # it, or the next check finds a zombie.
      command: [sh, -c, 'test -x /bin/busybox && ! test -e /usr/bin/ballast-worker && test "\$BALLAST_ITEM" -lt 12 && (sleep 0 &) && sleep 0.2 && ! grep -q "^State:.Z" /proc/[0-9]*/status']
  items: 12
  nodeSelector: {ballast.io/pool: seed000}
  worker: {imagePullPolicy: Never}
YAML
wait_until "exec job in the busybox image Succeeded" 300 succeeded exec-busybox
expect_eq "items the command succeeded on, in the busybox image" 12 \
  "$(jp weightedjob/exec-busybox '{.status.result.exec.succeeded}')"
expect_eq "failed ranges" "[]" "$(jp weightedjob/exec-busybox '{.status.result.exec.failures}')"

# resumed JOB: the Resumed Event's message, which the leader that took JOB
# over posts ("resumed from the checkpoint at DONE of ITEMS items; ...").
resumed() {
  kubectl get events -n "$ns" --field-selector "involvedObject.name=$1,reason=Resumed" \
    -o jsonpath='{.items[0].message}' 2>/dev/null
}
has_resumed() { [[ -n $(resumed "$1") ]]; }
# expect_resumed_mid_job JOB: the next leader resumed JOB from a checkpoint
# short of its end, so the change of leader came while the job ran (a job
# that had finished before would have been left alone, and its exact count
# would prove nothing).
expect_resumed_mid_job() {
  wait_until "a Resumed Event of job $1" 120 has_resumed "$1"
  local message done items
  message=$(resumed "$1")
  [[ $message =~ ^resumed\ from\ the\ checkpoint\ at\ ([0-9]+)\ of\ ([0-9]+)\ items ]] ||
    fail "job $1's Resumed Event says: $message"
  done=${BASH_REMATCH[1]} items=${BASH_REMATCH[2]}
  ((done < items)) || fail "job $1 was resumed at its end ($message): the leader changed after it finished"
  pass "job $1 resumed by the next leader at $done of $items items"
}

# The jobs below change the leader while they run: each acts at the job's
# first progress written (its first items done) and is sized to run on well
# past that change, half a minute of the boards' 1.2 cores and more, which the
# Resumed Event then proves (expect_resumed_mid_job).

# --- the leader killed mid-job -----------------------------------------------------
apply_job killed 500000
wait_until "job killed under way" 120 midway killed
old=$(leader)
kubectl delete pod -n "$ns" "$old" --grace-period=0 --force >/dev/null 2>&1
pass "killed the leader $old at $(completed killed) items"
expect_resumed_mid_job killed
wait_until "job killed Succeeded after the standby took over" 400 succeeded killed
expect_eq "primes below 500000 after the kill" 41538 "$(jp weightedjob/killed '{.status.result.primes.count}')"
new=$(leader)
[[ -n $new && $new != "$old" ]] || fail "the leader label did not move from $old (now '$new')"
pass "the standby $new leads"

# --- helm upgrade mid-job ------------------------------------------------------------
# The rollout replaces the standby, then the leader (half a minute and more
# here under load): the job is larger, to outlast it.
apply_job upgraded 700000
wait_until "job upgraded under way" 120 midway upgraded
helm upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --set operator.statusIntervalSeconds=1 \
  --wait --timeout 240s >/dev/null || fail "helm upgrade"
pass "helm upgrade to statusIntervalSeconds=1 at $(completed upgraded) items"
[[ $(kubectl get deployment -n "$ns" -o yaml) == *"--status-interval=1"* ]] ||
  fail "the upgraded Deployment does not pass --status-interval=1"
expect_resumed_mid_job upgraded
wait_until "job upgraded Succeeded across the upgrade" 400 succeeded upgraded
expect_eq "primes below 700000 across the upgrade" 56543 "$(jp weightedjob/upgraded '{.status.result.primes.count}')"

# --- helm test -------------------------------------------------------------------
helm test "$release" -n "$ns" --logs --timeout 300s >"$tmp/test" 2>&1 || fail "helm test: $(cat "$tmp/test")"
[[ $(grep -A3 "TEST SUITE: *ballast-selftest" "$tmp/test") =~ Phase:\ *Succeeded ]] ||
  fail "helm test did not succeed: $(cat "$tmp/test")"
grep -q "selftest: passed: " "$tmp/test" || fail "helm test --logs printed no log: $(cat "$tmp/test")"
pass "helm test, its log read"

# --- uninstall: only the CRDs, the last test's pod and the history stay (docs/helm.md)
kubectl delete weightedjobs -n "$ns" --all --wait=true >/dev/null
helm uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm uninstall"
left() {
  kubectl get all,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,leases,configmaps,secrets \
    -n "$ns" -o name | grep -v -e '^serviceaccount/default$' -e '^configmap/kube-root-ca.crt$' \
    -e "^pod/$release-selftest\$" -e "^configmap/$release-history\$"
  kubectl get clusterroles,clusterrolebindings,weightprofiles -l "app.kubernetes.io/instance=$release" -o name
}
deadline=$((SECONDS + 90))
until [[ -z $(left) ]]; do
  ((SECONDS < deadline)) || fail "left after helm uninstall: $(left | paste -sd' ')"
  sleep 0.5
done
pass "nothing of the release left but what docs/helm.md lists"
kubectl get configmap -n "$ns" "$release-history" >/dev/null 2>&1 ||
  fail "the history ConfigMap was not kept (history.keepOnUninstall)"
kubectl -n "$ns" delete configmap "$release-history" >/dev/null || fail "delete the kept history"
pass "the history ConfigMap kept, then deleted as docs/helm.md says"
expect_eq "CRDs kept" "2" "$(kubectl get crds -o name | grep -c '\.ballast\.io$')"
