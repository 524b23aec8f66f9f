// The phases of ballast_operator_bench, each in a file of its own. Each
// prints its section ("== ... ==" and its lines) as it goes and leaves the
// namespace as it found it: its jobs deleted and their pods gone (or said
// what is left). Called from the bench's thread.
#pragma once
#include "bench/operator_bench/context.h"
#include "bench/operator_bench/figures.h"

namespace ballast::operator_bench {

// apply -> pods (apply_phase.cc): --sequential jobs applied one at a time:
// from the Create of a WeightedJob returning to a pod watch having seen
// every worker pod of it (one per eligible node, `nodes`); p50 <= 300 ms.
// Beside it where the time goes, all seen from outside: the API server's
// own floor (a ConfigMap's create round trip and watch delivery), create ->
// the job's token Secret seen (the operator's first write), -> its first
// pod, -> its last pod. Sets results->apply_p50.
void ApplyToPods(Context& context, int nodes, Results* results);

// N at once (concurrent_phase.cc): --concurrent small primes jobs created
// back to back: the operator's peak RSS (VmHWM, <= 60 MB), reconcile p99
// from its /metrics summary (<= 100 ms), API requests per job by verb (the
// ballast_operator_api_requests_total delta / N), wall time until every
// job is Succeeded. Sets results' peak_rss, reconcile_p99_ms,
// requests_per_job and wall_s.
void Concurrent(Context& context, int nodes, Results* results);

// efficiency (efficiency_phase.cc): one primes job per policy on seed 000's
// boards (nodeSelector ballast.io/pool: seed000), status.efficiency (pod
// start included; against the nodes' declared speeds), median of --repeat
// runs, policies interleaved run by run; beside makespan, idealSeconds and
// the job's own estimate. Sets results->efficiency.
void Efficiency(Context& context, Results* results);

// wide (wide_phase.cc; --wide N, instead of the above): one adaptive primes
// job on N light nodes labelled ballast.io/pool: wide (bench/operator-bench
// --wide N registers them): apply -> every worker pod seen, -> every worker
// reporting (the coordinator's ballast_node_reports_total, scraped each
// second), -> done; the status's largest size as written (<= 256 KiB), the
// operator's peak RSS and reconcile p99 meanwhile. Returns 0 when the job
// finished, 1 when it did not or the nodes were not Ready in 10 minutes.
int Wide(Context& context);

// churn (churn_phase.cc; --churn N, instead of the others): N small primes
// jobs in waves of --churn-wave: each wave created, waited for until every
// job is finished, deleted and its pods gone. Every --churn-every jobs, once
// the operator's passes have settled, its VmRSS beside what it still holds
// (jobs tracked, jobs at the coordinator, /metrics series, threads, pods of
// deleted jobs left); then the growth over the first half of the run beside
// the last half: whether it levels off. Returns 0 when every job Succeeded,
// else 1.
int Churn(Context& context, int nodes);

}  // namespace ballast::operator_bench
