#!/usr/bin/env bash
# A board whose clock jumps an hour ahead mid-job, on real nodes, as far as
# one machine can show it. The boards share the machine's kernel, so
# CLOCK_REALTIME cannot differ per board; what a board's clock can change in
# Ballast is its worker's, and the worker measures everything it reports
# (calcSeconds, its report cadence, its retries) on the monotonic clock,
# which an NTP step or `date -s` leaves alone, while the coordinator times
# leases on its own monotonic clock. The emulation: libfaketime, preloaded
# into every worker of the job (hostPath volume, LD_PRELOAD), gives each the
# wall clock of a file named after its node (+0); mid-job pi4b-1's file
# becomes +3600, so that worker's CLOCK_REALTIME (time(), gettimeofday,
# clock_gettime(CLOCK_REALTIME), its log's timestamps) jumps an hour ahead
# while its monotonic clocks do not (FAKETIME_DONT_FAKE_MONOTONIC). Not
# emulated: the board's kubelet and containerd, static Go binaries that
# libfaketime cannot reach (their Lease renewTime and container timestamps
# keep the machine's time). Bound: nothing to recover from: the jumped
# worker's next report within the heartbeat (leaseSeconds / 3) plus 2 s of
# the jump, no worker lost, its measured speed within 25 % of its twin
# pi4b-0's (same quota), the job exact with each item merged once; its log
# shows the hour's jump, which proves the fault was injected.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chaos_lib.sh"

victim=pi4b-1
twin=pi4b-0
lease_s=30
libfaketime=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[[ -f $libfaketime ]] || fail "no $libfaketime: install Debian's faketime (scripts/install-deps)"
# A directory the nodes' containerd can mount (the machine's mount
# namespace), readable by the worker's user.
clock_dir=$(mktemp -d /tmp/ballast-chaos-clock.XXXXXX)
chmod 755 "$clock_dir"
cp "$libfaketime" "$clock_dir/"
for node in "${boards[@]}"; do echo "+0" >"$clock_dir/$node"; done
chmod 644 "$clock_dir"/*
restore() {
  chaos_restore
  rm -rf "$clock_dir"
}
trap restore EXIT

chaos_install
# FAKETIME_CACHE_DURATION 1: each worker reads its file again at most once a
# second, so the jump reaches it within a second.
chaos_job 1000000 "leaseSeconds: $lease_s" "template:" "  spec:" "    containers:" \
  "      - name: worker" \
  "        env:" \
  "          - {name: CHAOS_NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}" \
  "          - {name: LD_PRELOAD, value: /chaos-clock/libfaketime.so.1}" \
  "          - {name: FAKETIME_TIMESTAMP_FILE, value: /chaos-clock/\$(CHAOS_NODE)}" \
  "          - {name: FAKETIME_DONT_FAKE_MONOTONIC, value: \"1\"}" \
  "          - {name: FAKETIME_CACHE_DURATION, value: \"1\"}" \
  "        volumeMounts: [{name: chaos-clock, mountPath: /chaos-clock, readOnly: true}]" \
  "    volumes:" \
  "      - {name: chaos-clock, hostPath: {path: $clock_dir, type: Directory}}"
wait_until "every board's worker Running" 120 all_running
start_sampler
pid=$(worker_pids "$victim")
[[ -n $pid ]] || fail "no worker process of the job on $victim"
grep -q libfaketime "/proc/$pid/maps" || fail "libfaketime is not loaded in $victim's worker (pid $pid)"
pass "libfaketime loaded in $victim's worker (pid $pid)"
wait_until "a tenth of the job's work done" 300 done_share 10

reports() { metric ballast_node_reports_total "$victim"; }
reports_then=$(reports)
echo "+3600" >"$clock_dir/$victim"
jumped=$(now_ms)
pass "$victim's worker's wall clock set an hour ahead"
reported() { (($(reports) > reports_then)); }
bound_s=$((lease_s / 3 + 2))
wait_until "$victim's worker reporting after the jump" "$bound_s" reported
report_ms=$(($(now_ms) - jumped))
((report_ms <= bound_s * 1000)) || fail "the next report came $(seconds "$report_ms") s after the jump; the bound is $bound_s s"
pass "$victim's first report after the jump came $(seconds "$report_ms") s after it (bound $bound_s s = leaseSeconds / 3 + 2 s)"

finish_exact 600
# The worker's log lines carry its wall clock: the first from before the
# jump, the last (the job done) an hour later than the job took.
kubectl logs -n "$ns" "$job-$victim" >"$tmp/victim.log" || fail "no log of $job-$victim"
first=$(awk 'NR == 1 { print $1 }' "$tmp/victim.log")
last=$(awk 'END { print $1 }' "$tmp/victim.log")
makespan=$(jp "weightedjob/$job" '{.status.makespanSeconds}')
ahead_s=$(awk -v a="$(date -d "$first" +%s.%N)" -v b="$(date -d "$last" +%s.%N)" -v m="$makespan" \
  'BEGIN { printf "%.0f", b - a - m }')
((ahead_s > 3000)) || fail "$victim's worker log does not show the jump: first line at $first, last at $last, the job took $makespan s"
pass "$victim's worker log: first line at $first, last at $last, the job took $makespan s: its wall clock ran $ahead_s s ahead"
speed() { jp "weightedjob/$job" "{.status.nodes[?(@.name==\"$1\")].measuredSpeed}"; }
ratio=$(awk -v a="$(speed "$victim")" -v b="$(speed "$twin")" 'BEGIN { printf "%.3f", a / b }')
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.75 && r <= 1.25) }' ||
  fail "$victim's measured speed is $ratio of $twin's; the jump skewed it"
pass "measured speeds: $victim $(speed "$victim"), $twin $(speed "$twin") (ratio $ratio)"
no_duplicate_workers
expect_eq "the losses counted over the run (pi4b-0 pi4b-1 pi3b-0)" "0 0 0" \
  "$(most_lost pi4b-0) $(most_lost pi4b-1) $(most_lost pi3b-0)"
nothing_left
