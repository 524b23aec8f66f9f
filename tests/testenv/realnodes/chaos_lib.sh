# Helpers for the faults on real nodes (tests/testenv/realnodes/chaos_*.sh,
# CTest labels realnodes and chaos; sourced after ../smoke/lib.sh and
# lib.sh). Each test installs the chart, runs seed 000's primes job on the
# three boards, injects one fault into one board while the job runs, times
# the recovery against a bound, and checks that the job ends exact, that no
# board ever ran two workers of the job at once, and that no pod or
# container of the job is left behind.

# A release of each test's own: the chart's cluster-wide objects carry its
# name, so one test's install never meets the last one's.
release=${test_name//_/-}
job=chaos
rn=$BALLAST_TESTENV_DIR/realnodes
boards=(pi4b-0 pi4b-1 pi3b-0)
# The π(limit) of the limits the tests use.
declare -A primes_below=([1000000]=78498 [1500000]=114155 [2000000]=148933)

now_ms() { date +%s%3N; }
# seconds MS: milliseconds as seconds with one decimal.
seconds() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

# node_ctr NODE ARGS...: ctr on NODE's containerd, namespace k8s.io.
node_ctr() {
  local node=$1
  shift
  ctr --address "$rn/$node/containerd.sock" -n k8s.io "$@"
}

# chaos_restore: what every chaos test does on exit, after its own repair.
chaos_restore() {
  stop_sampler
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  cleanup
}

# chaos_install: the chart as a user installs it, one operator replica on
# server-0, the images never pulled.
chaos_install() {
  local node
  for node in "${boards[@]}"; do
    kubectl get node "$node" >/dev/null 2>&1 || fail "no node $node (tests/testenv/nodes/seed000-real.yaml)"
  done
  require_ballast_images
  helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
    --wait --timeout 240s >"$tmp/install" || fail "helm install: $(cat "$tmp/install")"
  operator_ip=$(kubectl get pods -n "$ns" -l app.kubernetes.io/component=operator \
    -o jsonpath='{.items[0].status.podIP}')
  [[ -n $operator_ip ]] || fail "no operator pod IP"
  pass "helm install (the operator at $operator_ip)"
}

# chaos_job LIMIT [SPEC...]: seed 000's job, the primes below LIMIT, on the
# three boards; SPEC lines are added under spec: (indented 2).
chaos_job() {
  local limit=$1 line
  shift
  sed -e "s/name: primes-300000/name: $job/" -e "s/limit: 300000/limit: $limit/" \
    "$source_dir/examples/jobs/primes-300000.yaml" >"$tmp/job.yaml"
  {
    echo "  nodeSelector:"
    echo "    ballast.io/pool: seed000"
    for line in "$@"; do echo "  $line"; done
  } >>"$tmp/job.yaml"
  kubectl apply -n "$ns" -f "$tmp/job.yaml" >/dev/null
  job_limit=$limit
}

# The operator's /metrics (the coordinator's series of every job and node).
metrics() { curl -sf --max-time 2 "http://$operator_ip:9090/metrics"; }
# metric NAME NODE: the job's series NAME of NODE (0 when absent).
metric() {
  metrics | awk -v name="$1" -v node="node=\"$2\"" -v job="weightedjob=\"$job\"" \
    'index($0, name "{") == 1 && index($0, node) && index($0, job) { v = $NF } END { print v + 0 }'
}

# status_items NODE: the items NODE's worker delivered, as the job's status says.
status_items() { jp "weightedjob/$job" "{.status.nodes[?(@.name==\"$1\")].items}"; }
completed() { jp "weightedjob/$job" '{.status.completedItems}'; }
total_items() { jp "weightedjob/$job" '{.status.items}'; }
# done_share PERCENT: whether PERCENT % of the job's work is done (trial
# division's cost grows with n, so the first k of N items hold (k / N)^2 of it).
done_share() {
  local done items
  done=$(completed)
  items=$(total_items)
  [[ -n $done && -n $items ]] && ((done * done * 100 >= items * items * $1))
}
running_on() { [[ $(jp "pod/$job-$1" '{.status.phase}') == Running ]]; }
all_running() {
  local node
  for node in "${boards[@]}"; do running_on "$node" || return 1; done
}
has_event() {
  kubectl get events -n "$ns" --field-selector "involvedObject.name=$job,reason=$1" -o name | grep -q .
}

# worker_pids NODE: the pids of the job's worker processes on NODE (their
# cgroup is under the node's, their environment names the job).
worker_pids() {
  local pid
  for pid in $(pgrep -x ballast-worker); do
    grep -qs "ballast-realnodes/$1/" "/proc/$pid/cgroup" || continue
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "BALLAST_JOB=$ns.$job" || continue
    echo "$pid"
  done
}

# start_sampler: every 0.5 s, how many workers of the job run on each board
# and, while the job is in the coordinator's metrics, each board's
# ballast_node_lost_total (the job's series go when it ends, so it is read
# during the run). no_duplicate_workers fails when any board ever ran two;
# most_lost NODE prints the highest loss count seen.
start_sampler() {
  (
    while true; do
      for node in "${boards[@]}"; do
        echo "workers $node $(worker_pids "$node" | wc -l)"
      done
      metrics | awk -v job="weightedjob=\"$job\"" 'index($0, "ballast_node_lost_total{") == 1 && index($0, job) {
          match($0, /node="[^"]*"/); print "lost", substr($0, RSTART + 6, RLENGTH - 7), $NF }' || true
      sleep 0.5
    done
  ) >"$tmp/samples" 2>/dev/null &
  sampler_pid=$!
}
stop_sampler() {
  [[ -n ${sampler_pid:-} ]] || return 0
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=
}
no_duplicate_workers() {
  stop_sampler
  local most
  most=$(awk '$1 == "workers" && $3 > m[$2] { m[$2] = $3 } END { for (n in m) printf "%s:%d ", n, m[n] }' \
    "$tmp/samples")
  awk '$1 == "workers" && $3 > 1 { bad = 1 } END { exit bad }' "$tmp/samples" ||
    fail "a board ran two workers of the job at once (most per board: $most)"
  pass "never two workers of the job on one board ($(grep -c '^workers' "$tmp/samples") samples; most per board: $most)"
}
most_lost() { awk -v n="$1" '$1 == "lost" && $2 == n && $3 > m { m = $3 } END { print m + 0 }' "$tmp/samples"; }

# finish_exact SECONDS: waits for Succeeded, then checks the count of primes,
# that the boards' merged items add up to the job's items (each item merged
# once), and prints each board's items.
finish_exact() {
  local node sum=0 items row
  succeeded() { [[ $(jp "weightedjob/$job" '{.status.phase}') == Succeeded ]]; }
  wait_until "job $job Succeeded" "$1" succeeded
  expect_eq "primes below $job_limit" "${primes_below[$job_limit]}" \
    "$(jp "weightedjob/$job" '{.status.result.primes.count}')"
  items=$(total_items)
  row=""
  for node in "${boards[@]}"; do
    sum=$((sum + $(status_items "$node")))
    row+="$node $(status_items "$node"), "
  done
  expect_eq "items merged over the boards (each once)" "$items" "$sum"
  pass "items: ${row%, }; makespan $(jp "weightedjob/$job" '{.status.makespanSeconds}') s"
}

# nothing_left: after the job is deleted, no pod of it in the API, and on
# no board a container (sandbox or worker) of its pod or a worker process.
nothing_left() {
  local node left
  kubectl delete weightedjob -n "$ns" "$job" --wait=true --timeout=60s >/dev/null
  pods_gone() { [[ -z $(kubectl get pods -n "$ns" -l "ballast.io/job=$job" -o name) ]]; }
  wait_until "the job's pods deleted" 60 pods_gone
  containers_gone() {
    for node in "${boards[@]}"; do
      left=$(node_ctr "$node" containers ls -q \
        "labels.\"io.kubernetes.pod.namespace\"==$ns,labels.\"io.kubernetes.pod.name\"==$job-$node" |
        grep -c . || true)
      ((left == 0)) || return 1
      [[ -z $(worker_pids "$node") ]] || return 1
    done
  }
  # The kubelet removes a deleted pod's stopped sandbox at its next container
  # garbage collection (once a minute).
  wait_until "no container or worker process of the job left on any board" 150 containers_gone
}

# save_component NAME: notes the command line and environment of the test
# bed's process pids/NAME (a node's kubelet or containerd), for
# restart_component after the test killed it.
save_component() {
  local pid
  pid=$(<"$BALLAST_TESTENV_DIR/pids/$1")
  [[ -r /proc/$pid/cmdline ]] || fail "$1 (pid $pid) is not running"
  cp "/proc/$pid/cmdline" "$tmp/$1.cmdline"
  cp "/proc/$pid/environ" "$tmp/$1.environ"
  echo "$pid"
}
# restart_component NAME NODE: starts it again as the test bed started it:
# in NODE's network namespace (realnodes_in_netns; /proc shows the program
# nsenter exec'd, not nsenter), detached, with the same command line and
# environment, its log appended.
restart_component() {
  local args envs
  mapfile -d '' -t args <"$tmp/$1.cmdline"
  mapfile -d '' -t envs <"$tmp/$1.environ"
  env -i "${envs[@]}" setsid nsenter "--net=/run/netns/ballast-rn-$2" "${args[@]}" </dev/null \
    >>"$BALLAST_TESTENV_DIR/logs/$1.log" 2>&1 &
  echo $! >"$BALLAST_TESTENV_DIR/pids/$1"
}
# component_running NAME: whether pids/NAME is a live process.
component_running() { kill -0 "$(<"$BALLAST_TESTENV_DIR/pids/$1")" 2>/dev/null; }

# node_ready NODE: the status of the node's Ready condition (True, False, Unknown).
node_ready() { kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }
