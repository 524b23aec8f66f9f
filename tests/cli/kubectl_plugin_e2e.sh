#!/usr/bin/env bash
# `kubectl ballast` (docs/kubectl-plugin.md) against the real control plane,
# found by the real kubectl as a plugin on PATH, with a real `ballast
# operator` for the test's namespace and the emulated Pis running the real
# ballast-worker:
#   weights  the live nodes' weights, the same table `ballast weights` prints
#            from `kubectl get nodes -o yaml`;
#   top      a running job's progress live from its coordinator, through the
#            API server's service proxy, ahead of the job's status; the
#            status's figures and the reason for a user RBAC refuses the
#            proxy, and live again once a Role grants it; the job in a real
#            terminal (tmux, read with capture-pane): a bar per node while it
#            runs; a second, small job followed from before it runs to its
#            result;
#   report   the HTML report of the finished job; a job that is not finished
#            has none;
#   fit      the profile's ranks fitted to the history the finished job left
#            in the operator's ConfigMap, named by a flag or found from the
#            operator's pod; and to the history a real Prometheus holds, fetched
#            through the API server's service proxy;
# and the errors a user meets: an unknown job, a bad flag, no operator.
#   usage: kubectl_plugin_e2e.sh BALLAST_BINARY
# shellcheck source=../operator/crds/lib.sh
source "$(dirname "$0")/../operator/crds/lib.sh"
ballast=${1:?usage: kubectl_plugin_e2e.sh BALLAST_BINARY}
[[ -x $ballast ]] || fail "no ballast binary at $ballast"
command -v tmux >/dev/null || fail "tmux is not installed (scripts/install-deps)"

install_ballast_crds_and_profiles

# The plugin as a user installs it: the program under the name kubectl-ballast on PATH.
mkdir -p "$tmp/bin"
ln -s "$(readlink -f "$ballast")" "$tmp/bin/kubectl-ballast"
export PATH=$tmp/bin:$PATH
kubectl plugin list >"$tmp/plugins" 2>&1 || true
grep -q "$tmp/bin/kubectl-ballast" "$tmp/plugins" || fail "kubectl does not list the plugin: $(cat "$tmp/plugins")"
kubectl ballast --help >"$tmp/help" || fail "kubectl ballast --help failed"
for sub in weights top report fit; do
  grep -q "^  $sub " "$tmp/help" || fail "--help does not list $sub: $(cat "$tmp/help")"
done
pass "kubectl finds the plugin; --help lists weights, top, report, fit"

# This machine's address: the API server proxies to no loopback address, so
# what the test reaches through its service proxy (the coordinator, a
# Prometheus) listens there.
host_ip=$(ip -4 -o route get 192.0.2.254 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
[[ -n $host_ip && $host_ip != 127.* ]] || host_ip=$(hostname -I | awk '{print $1}')
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'; }

# The coordinator listens on this machine's address, where the emulated Pis'
# workers (processes here) reach it too. A running job's status is written
# every 30 s at the soonest, so that its first progress stays unwritten long
# enough for top to show it live first.
port=$(free_port)
"$ballast" operator -n "$ns" --coordinator-listen "$host_ip:$port" --status-interval 30 \
  --worker-image ballast-worker:dev --history-configmap "$ns/speeds" >"$tmp/operator.log" 2>&1 &
operator=$!
stop_operator() {
  kill "$operator" 2>/dev/null && wait "$operator" 2>/dev/null || true
}
tmux_socket=$tmp/tmux.sock
stop_all() {
  tmux -S "$tmux_socket" kill-server 2>/dev/null || true
  [[ -n ${prometheus:-} ]] && kill "$prometheus" 2>/dev/null
  stop_operator
  kubectl delete clusterrole,clusterrolebinding "$ns-watcher" --ignore-not-found >/dev/null 2>&1 || true
  cleanup
}
trap stop_all EXIT

# host_service NAME PORT TARGET: a Service NAME whose endpoint is port TARGET
# of this machine. The API server proxies only to an endpoint whose target is
# a pod with that IP: a stand-in pod that never runs, its status given the
# address.
host_service() {
  local name=$1 service_port=$2 target=$3
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name-0}
spec:
  nodeSelector: {ballast.io/stand-in: never}
  containers: [{name: $name, image: $name:dev}]
---
apiVersion: v1
kind: Service
metadata: {name: $name}
spec:
  ports: [{name: web, port: $service_port, targetPort: $target}]
YAML
  kubectl patch pod -n "$ns" "$name-0" --subresource=status --type=merge \
    -p "{\"status\": {\"podIP\": \"$host_ip\", \"podIPs\": [{\"ip\": \"$host_ip\"}]}}" >/dev/null
  kubectl apply -n "$ns" -f - >/dev/null 2>"$tmp/endpoints.err" <<YAML || fail "$(cat "$tmp/endpoints.err")"
apiVersion: v1
kind: Endpoints
metadata: {name: $name}
subsets:
- addresses: [{ip: "$host_ip", targetRef: {kind: Pod, name: $name-0, namespace: $ns}}]
  ports: [{name: web, port: $target}]
YAML
}

# leader_pod ARGS...: a stand-in of the operator's leading pod, as the chart
# runs it (labelled ballast.io/coordinator=leader), with these args; it never
# runs (no node carries its selector).
leader_pod() {
  kubectl delete pod -n "$ns" operator-stand-in --wait=true >/dev/null 2>&1 || true
  python3 -c '
import json, sys
print(json.dumps({"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "operator-stand-in", "labels": {"ballast.io/coordinator": "leader"}},
  "spec": {"nodeSelector": {"ballast.io/stand-in": "never"},
           "containers": [{"name": "operator", "image": "ballast:dev",
                           "args": ["operator", "--mark-leader-pod"] + sys.argv[1:]}]}}))' "$@" |
    kubectl apply -n "$ns" -f - >/dev/null
}

# ---- weights: the table of `ballast weights` from the same nodes --------------------------
kubectl ballast weights -l ballast.io/pool=seed000 >"$tmp/weights" 2>"$tmp/weights.err" ||
  fail "kubectl ballast weights: $(cat "$tmp/weights.err")"
cat "$tmp/weights"
kubectl get nodes -l ballast.io/pool=seed000 -o yaml >"$tmp/nodes.yaml"
"$ballast" weights --nodes "$tmp/nodes.yaml" >"$tmp/weights.file" 2>/dev/null
cmp -s "$tmp/weights" "$tmp/weights.file" ||
  fail "kubectl ballast weights differs from ballast weights --nodes: $(diff "$tmp/weights" "$tmp/weights.file")"
expect_eq "seed 000's weights (pi3b-0, pi4b-0, pi4b-1)" "1 5 5" \
  "$(awk '$1 ~ /^pi/ {print $1, $4}' "$tmp/weights" | sort | awk '{printf "%s%s", sep, $2; sep=" "}')"
kubectl ballast weights -l ballast.io/pool=seed000 -o json | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["nodes"]
assert sorted(n["weight"] for n in nodes) == [1, 5, 5], nodes' || fail "-o json"
rc=0
kubectl ballast weights --profile no-such-profile >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of an unknown profile" 2 "$rc"
grep -q "no WeightProfile of that name in the cluster" "$tmp/out" || fail "unknown profile: $(cat "$tmp/out")"

# apply_primes NAME LIMIT [SUSPEND]: a WeightedJob of primes below LIMIT on seed 000's boards.
apply_primes() {
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: $1}
spec:
  workload: {primes: {limit: $2, method: trial}}
  policy: adaptive
  profile: raspberry-pi
  nodeSelector: {ballast.io/pool: seed000}
  suspend: ${3:-false}
YAML
}

# ---- top: a running job in a terminal ------------------------------------------------------
# Two jobs. "running" is the one top shows while it runs: live, to a user
# RBAC refuses the proxy, in a terminal, quit with Ctrl-C. It is large
# (primes below 1,500,000: about 200 CPU-seconds, on the boards' 1.2 cores
# minutes) so that it runs through every one of those checks whatever the
# machine's load, and it is deleted once they are done: nothing waits for its
# end. "primes", small, is the one a terminal's top follows from before it
# runs to its end, and whose finished status the report and fit read.
apply_primes running 1500000
wait_until "the job running with its three workers" 60 \
  bash -c "[[ \$(kubectl get wj -n '$ns' running -o jsonpath='{.status.phase}/{.status.nodes[2].name}') == Running/pi* ]]"

# ---- top: live from the coordinator, through the API server's service proxy -----------------
# The job's workers reach the coordinator at this machine's address, which no
# proxy reaches; the operator's leading pod says its Service, as the chart's
# does (ballast-coordinator): here a Service whose endpoint is the operator's
# coordinator port.
host_service coordinator "$port" "$port"
leader_pod --lease-namespace="$ns" --coordinator-url="http://coordinator.$ns.svc:$port"
written_items() { kubectl get wj -n "$ns" running -o jsonpath='{.status.completedItems}'; }
# Items done live, more than the status has, read between two reads of the
# status that agree: the live view shows progress the status has not written.
# (Not "while the status has none": under load the node agent can report the
# pods Running after the workers' first reports, and the job's Running phase,
# written at once, carries them; after that write the status holds still for
# the 30 s of --status-interval while the live items move on.)
running_at=$SECONDS
deadline=$((SECONDS + 60))
while :; do
  before=$(written_items)
  kubectl ballast top running -n "$ns" --once >"$tmp/live" 2>"$tmp/live.err" ||
    fail "top --once: $(cat "$tmp/live.err")"
  after=$(written_items)
  live_items=$(sed -n 's|.*% of the work  \([0-9]*\)/750000 items  live.*|\1|p' "$tmp/live")
  if [[ -n $live_items && ${before:-0} == "${after:-0}" ]] && ((live_items > ${after:-0})); then
    break
  fi
  ((SECONDS < deadline)) || fail "no live progress ahead of the status within 60 s: $(cat "$tmp/live")"
  sleep 0.2
done
cat "$tmp/live"
grep -Eq '^pi4b-0 +5 +[0-9.]+ +[1-9][0-9]* ' "$tmp/live" || fail "no live row of pi4b-0: $(cat "$tmp/live")"
grep -q "from the status" "$tmp/live" && fail "a live view says it is the status's: $(cat "$tmp/live")"
pass "top --once: progress live from the coordinator $((SECONDS - running_at)) s after the job ran, $live_items items while status.completedItems is '${after:-0}'"

# A user who may read the job and list pods, but not get services/proxy:
# the status's figures, the reason in one line, exit code 0.
kubectl create serviceaccount watcher -n "$ns" >/dev/null
kubectl create role watcher -n "$ns" --verb=get --resource=weightedjobs.ballast.io >/dev/null
kubectl create rolebinding watcher -n "$ns" --role=watcher --serviceaccount="$ns:watcher" >/dev/null
kubectl create clusterrole "$ns-watcher" --verb=list --resource=pods >/dev/null
kubectl create clusterrolebinding "$ns-watcher" --clusterrole="$ns-watcher" \
  --serviceaccount="$ns:watcher" >/dev/null
watcher_config=$tmp/watcher.kubeconfig
kubectl config view --minify --flatten >"$watcher_config"
KUBECONFIG=$watcher_config kubectl config set-credentials watcher \
  --token="$(kubectl create token watcher -n "$ns" --duration=1h)" >/dev/null
KUBECONFIG=$watcher_config kubectl config set-context --current --user=watcher >/dev/null
watcher_top() { KUBECONFIG=$watcher_config kubectl ballast top running -n "$ns" --once >"$tmp/watcher" 2>&1; }
watcher_top || fail "top as a user without services/proxy: exit $?: $(cat "$tmp/watcher")"
cat "$tmp/watcher"
grep -q "^WeightedJob $ns/running  Running" "$tmp/watcher" || fail "no view of the status: $(cat "$tmp/watcher")"
grep -q '^from the status: RBAC refuses the proxy (get services/proxy): ' "$tmp/watcher" ||
  fail "no reason for the status's figures: $(cat "$tmp/watcher")"
grep -q ' items  live' "$tmp/watcher" && fail "a refused user's view says live: $(cat "$tmp/watcher")"
pass "top as a user without services/proxy: the status's figures and why"
# The Role of docs/kubectl-plugin.md: get services/proxy of the coordinator's
# Service alone, named as the proxy request names it.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ballast-top}
rules:
  - apiGroups: [""]
    resources: [services/proxy]
    resourceNames: ["http:coordinator:$port"]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ballast-top}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ballast-top}
subjects:
  - {kind: ServiceAccount, name: watcher, namespace: $ns}
YAML
watcher_live() { watcher_top && grep -q ' items  live' "$tmp/watcher"; }
wait_until "top live for the user the Role lets in" 30 watcher_live

# A terminal 110 columns wide; the pane stays after top exits.
tmux -S "$tmux_socket" new-session -d -x 110 -y 30 -s top \
  "kubectl ballast top running -n $ns --interval 0.5; echo \"top exited \$?\"; sleep 600"
screen() { tmux -S "$tmux_socket" capture-pane -p -t '=top:'; }
running_screen() {
  screen >"$tmp/screen"
  grep -q "^WeightedJob $ns/running  Running  primes (adaptive)  3 workers" "$tmp/screen" &&
    grep -Eq '^pi4b-0 +5 +[0-9.]+ +[0-9]+ +[0-9]+ \[#+-*\] +[0-9]+%  [0-9]' "$tmp/screen" &&
    grep -Eq 'ETA [0-9]' "$tmp/screen"
}
wait_until "top's screen of the running job: a measured bar and ETA per node" 60 running_screen
cat "$tmp/screen"
grep -q "every 0.5 s, live from the coordinator; Ctrl-C quits" "$tmp/screen" || fail "no refresh line"
awk 'length($0) > 110 {exit 1}' "$tmp/screen" || fail "a line is wider than the terminal"
for node in pi4b-0 pi4b-1 pi3b-0; do grep -q "^$node " "$tmp/screen" || fail "no row of $node"; done

# Ctrl-C quits a live top at once, with exit code 0. In a user's terminal
# SIGINT is at its default; a background job of a shell without job control
# starts with it ignored, and every ballast command keeps an ignored SIGINT
# ignored (stop_signals.h): whatever this test inherited, the pane puts it
# back to its default for top, and top's shell survives it to say the exit
# code (after the ^C the terminal echoes).
cat >"$tmp/bin/with-sigint" <<'PY'
#!/usr/bin/env python3
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])
PY
chmod +x "$tmp/bin/with-sigint"
tmux -S "$tmux_socket" new-session -d -x 100 -y 20 -s quit \
  "bash -c 'trap : INT; $tmp/bin/with-sigint kubectl ballast top running -n $ns; echo \"top exited \$?\"; sleep 600'"
quit_screen() { tmux -S "$tmux_socket" capture-pane -p -t '=quit:' >"$tmp/quit"; grep -q "$1" "$tmp/quit"; }
wait_until "a second top drawing the running job" 30 quit_screen "^WeightedJob $ns/running  Running"
tmux -S "$tmux_socket" send-keys -t '=quit:' C-c
wait_until "top quits on Ctrl-C with exit code 0" 10 quit_screen "top exited 0$"
tmux -S "$tmux_socket" kill-session -t '=quit'

tmux -S "$tmux_socket" kill-session -t '=top'

# The running job deleted, its workers gone: the boards are the small job's.
kubectl delete wj -n "$ns" running --wait=true >/dev/null
wait_until "the running job's worker pods gone" 60 \
  bash -c "[[ -z \$(kubectl get pods -n '$ns' -l ballast.io/job=running -o name) ]]"

# ---- top: a job followed from before it runs to its end -------------------------------------
# Made suspended, so that top draws it before it runs; top exits 0 when it is done.
apply_primes primes 300000 true
tmux -S "$tmux_socket" new-session -d -x 110 -y 30 -s top \
  "kubectl ballast top primes -n $ns --interval 0.5; echo \"top exited \$?\"; sleep 600"
suspended_screen() { screen >"$tmp/screen"; grep -q "^WeightedJob $ns/primes  Suspended" "$tmp/screen"; }
wait_until "top drawing the suspended job" 30 suspended_screen
kubectl patch wj -n "$ns" primes --type=merge -p '{"spec": {"suspend": false}}' >/dev/null
finished_screen() {
  screen >"$tmp/screen"
  grep -q "top exited 0" "$tmp/screen"
}
wait_until "top exits 0 when the job is done" 180 finished_screen
cat "$tmp/screen"
grep -q "^WeightedJob $ns/primes  Succeeded" "$tmp/screen" || fail "the last screen is not Succeeded"
grep -q "100.0% of the work  150000/150000 items  makespan" "$tmp/screen" || fail "the last screen is not full"
grep -q '^result 25997 primes, checksum 0x' "$tmp/screen" ||
  fail "no result line with the 25997 primes below 300000"
grep -q "^finished$" "$tmp/screen" || fail "no finished line"

# Not on a terminal (--once): one view.
kubectl ballast top primes -n "$ns" --once >"$tmp/once"
grep -q "^WeightedJob $ns/primes  Succeeded" "$tmp/once" || fail "top --once: $(cat "$tmp/once")"
rc=0
kubectl ballast top no-such-job -n "$ns" --once >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of top of an unknown job" 2 "$rc"
grep -q "WeightedJob no-such-job not found in namespace $ns" "$tmp/out" || fail "$(cat "$tmp/out")"
rc=0
kubectl ballast top primes --interval 0 >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of a bad --interval" 2 "$rc"

# ---- report: the finished job's page; none for a job not finished ---------------------------
(cd "$tmp" && kubectl ballast report primes -n "$ns") 2>"$tmp/report.err" ||
  fail "report: $(cat "$tmp/report.err")"
grep -q "^wrote primes.html" "$tmp/report.err" || fail "$(cat "$tmp/report.err")"
python3 - "$tmp/primes.html" <<'PY' || fail "the report is not the job's"
import sys, html.parser
text = open(sys.argv[1]).read()
html.parser.HTMLParser().feed(text)
for want in ("<svg", "Succeeded: makespan", "25997", ">pi4b-0<", ">pi4b-1<", ">pi3b-0<"):
    assert want in text, want
PY
pass "report wrote primes.html with the Gantt chart, the nodes and the result"
kubectl ballast report primes -n "$ns" -o - >"$tmp/stdout.html" || fail "report -o -"
grep -q "</html>" "$tmp/stdout.html" || fail "report -o - wrote no page"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: later}
spec:
  workload: {primes: {limit: 1000, method: trial}}
  profile: raspberry-pi
  suspend: true
YAML
wait_until "the suspended job's phase" 30 \
  bash -c "[[ \$(kubectl get wj -n '$ns' later -o jsonpath='{.status.phase}') == Suspended ]]"
rc=0
kubectl ballast report later -n "$ns" >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of a report of a suspended job" 1 "$rc"
grep -q "is Suspended: a report needs a finished job" "$tmp/out" || fail "$(cat "$tmp/out")"

# ---- fit: the history the job left ----------------------------------------------------------
wait_until "the operator's ConfigMap of speeds" 30 kubectl get configmap -n "$ns" speeds
fit_ok() {  # fit_ok ORIGIN ARGS...: the fitted profile, its speeds from ORIGIN
  local origin=$1
  shift
  kubectl ballast fit -l ballast.io/pool=seed000 "$@" >"$tmp/fit" 2>"$tmp/fit.err" ||
    fail "fit $*: $(cat "$tmp/fit.err")"
  grep -q "^# speeds: $origin" "$tmp/fit" || fail "fit $*: speeds not from $origin: $(head -3 "$tmp/fit")"
  python3 -c '
import sys, yaml
profile = yaml.safe_load(open(sys.argv[1]))
assert profile["kind"] == "WeightProfile", profile
assert profile["spec"]["criteria"], profile' "$tmp/fit" || fail "fit $*: not a WeightProfile"
  for node in pi4b-0 pi4b-1 pi3b-0; do grep -q "^# $node " "$tmp/fit" || fail "fit $*: no $node"; done
  cat "$tmp/fit.err" "$tmp/fit"
  pass "fit $*: a WeightProfile from $origin"
}
fit_ok "the operator's ConfigMap $ns/speeds, workload primes" --history-configmap "$ns/speeds"

# Found from the operator's pod, as the chart runs it.
leader_pod --lease-namespace="$ns" --history-configmap="$ns/speeds"
fit_ok "the operator's ConfigMap $ns/speeds, workload primes"

# The operator's Prometheus, through the API server's service proxy: a
# Service without selector whose endpoint is a real Prometheus on this machine
# (the API server proxies to no loopback address), holding two primes jobs of
# an hour ago as the coordinator exports them (recorded speed and its
# timestamp), written into its TSDB by promtool.
prometheus_port=$(free_port)
python3 - "$tmp/history.om" <<'PY'
import sys, time
now = int(time.time())
lines = []
for job, end in (("primes-a", now - 3600), ("primes-b", now - 3000)):
    for node, speed in (("pi4b-0", 125), ("pi4b-1", 120), ("pi3b-0", 30)):
        for k in range(10):
            t = end - (9 - k) * 15
            labels = f'weightedjob="{job}",job_namespace="default",workload="primes",node="{node}"'
            lines.append((t, f"ballast_node_recorded_speed_cost_units_per_second{{{labels}}} {speed} {t}"))
            lines.append((t, f'ballast_node_speed_timestamp_seconds{{workload="primes",node="{node}"}} {t} {t}'))
lines.sort(key=lambda line: line[0])
with open(sys.argv[1], "w") as out:
    out.write("# TYPE ballast_node_recorded_speed_cost_units_per_second gauge\n")
    out.write("# TYPE ballast_node_speed_timestamp_seconds gauge\n")
    out.write("".join(line + "\n" for _, line in lines) + "# EOF\n")
PY
promtool tsdb create-blocks-from openmetrics "$tmp/history.om" "$tmp/prometheus-data" >"$tmp/promtool.log" 2>&1 ||
  fail "promtool: $(tail -5 "$tmp/promtool.log")"
printf 'global:\n  scrape_interval: 15s\n' >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prometheus-data" \
  --storage.tsdb.retention.time=100y --web.listen-address="$host_ip:$prometheus_port" \
  --log.level=warn >"$tmp/prometheus.log" 2>&1 &
prometheus=$!
wait_until "Prometheus ready" 30 curl -fs "http://$host_ip:$prometheus_port/-/ready"
host_service prometheus 9090 "$prometheus_port"
leader_pod --prometheus-url="http://prometheus.$ns.svc:9090" --prometheus-window=86400
fit_ok "the operator's Prometheus http://prometheus.$ns.svc:9090 (through the API server: /api/v1/namespaces/$ns/services/http:prometheus:9090/proxy/), workload primes, the 1d"
# Its history, as the query reads it: pi3b-0 at 30 of the jobs' mean of 91.7, in 2 jobs.
grep -Eq "^# pi3b-0 +0\.327[0-9]* +2 " "$tmp/fit" || fail "fit: pi3b-0 is not Prometheus's history: $(grep '^# pi3b-0' "$tmp/fit")"

leader_pod --no-history
rc=0
kubectl ballast fit -l ballast.io/pool=seed000 >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of fit when the operator keeps no history" 2 "$rc"
grep -q "runs with --no-history" "$tmp/out" || fail "$(cat "$tmp/out")"
kubectl delete pod -n "$ns" operator-stand-in --wait=true >/dev/null

# Without the operator's pod (elsewhere in the cluster there is none), fit says what to pass.
if [[ -z $(kubectl get pods -A -l ballast.io/coordinator=leader -o name) ]]; then
  rc=0
  kubectl ballast fit -l ballast.io/pool=seed000 >"$tmp/out" 2>&1 || rc=$?
  expect_eq "exit code of fit without an operator pod" 2 "$rc"
  grep -q "no Ballast operator pod labelled ballast.io/coordinator=leader" "$tmp/out" || fail "$(cat "$tmp/out")"
fi

# The cluster flags as kubectl's: --kubeconfig, --context.
rc=0
kubectl ballast weights --kubeconfig "$tmp/none" >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of a missing --kubeconfig" 2 "$rc"
rc=0
kubectl ballast weights --context no-such-context >"$tmp/out" 2>&1 || rc=$?
expect_eq "exit code of an unknown --context" 2 "$rc"
grep -q "no-such-context" "$tmp/out" || fail "$(cat "$tmp/out")"
pass "kubectl ballast: weights, top, report and fit against the live cluster"
