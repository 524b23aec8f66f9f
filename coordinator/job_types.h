// The coordinator's value types: what a job is given (JobConfig), what it has
// finished (Checkpoint) and what the coordinator knows of it and of each
// worker (JobView, WorkerView). JobSession (job_session.h) makes and keeps
// them; the operator's decisions, the metrics and the reports read them
// without the session, so this header holds no class with behaviour and
// includes nothing of the coordinator.
//
// Thread-safety: values and pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/health/deviation.h"
#include "core/health/measurement_noise.h"
#include "core/history/history_key.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::coordinator {

// The verification a job asks for (verification.h, docs/trust.md).
struct VerifyOptions {
  // The expected share of finished items recomputed on another worker;
  // 0: verification off. Otherwise 0 < fraction <= 1.
  double fraction = 0;
  // Decides which completions are sampled. Secret from the workers:
  // Server::AddJob draws a random one when it is 0.
  uint64_t seed = 0;
};

// What verification did (verification.h), for tables and status.
struct VerificationView {
  double fraction = 0;     // 0: off
  uint64_t ranges = 0;     // completions merged (each a candidate)
  uint64_t sampled = 0;    // completions picked for recomputation
  uint64_t checked = 0;    // recomputed and found equal
  uint64_t items = 0;      // items recomputed and compared: the cost
  uint64_t pending = 0;    // checks not compared yet (waiting or in progress)
  double cpu_s = 0;        // CPU seconds the recomputations used
  double finished_at = 0;  // when the last check was compared (0: none yet)
  // Per worker, in the job's worker order: CPU and busy seconds spent
  // recomputing others' ranges (already included in WorkerView's cpu_s and
  // busy_s, which count everything a worker did).
  std::vector<double> worker_cpu_s;
  std::vector<double> worker_busy_s;
  // Empty, or why the job failed: the range, both workers and both results.
  std::string failure;
};

// What a job has finished so far: enough to resume it after the coordinator
// restarts with every finished item's result kept and nothing counted twice.
// The operator writes it into the WeightedJob's status.
struct Checkpoint {
  balance::IntervalSet completed;  // items whose results are merged
  workload::Result result = workload::Result::Empty(workload::WorkloadKind::kPrimes);
};

// {"completed": [[begin, end], ...], "result": {...}}.
nlohmann::json CheckpointToJson(const Checkpoint& checkpoint);
// The inverse for a job of `kind`; Invalid naming the field that is wrong
// (ranges must be ascending, disjoint and non-empty).
StatusOr<Checkpoint> CheckpointFromJson(workload::WorkloadKind kind, const nlohmann::json& json);

struct JobConfig {
  std::string id;
  std::string token;  // every request must carry it
  workload::WorkloadSpec workload;
  balance::PolicySpec policy;
  // One per worker, in a fixed order: name and prior speed (fuzzy weight or
  // a measured speed).
  std::vector<balance::WorkerPrior> workers;
  // The most cores one worker computes with: a report's cpuSeconds is
  // bounded by the seconds the coordinator saw pass times this. Set it to
  // the nodes' core count where it is known.
  double max_worker_cores = 64;
  // The cores each worker computes with, by name, where they are known (the
  // CPU quota of an emulated node, a node's capacity): its cpuSeconds are
  // bounded by them instead of max_worker_cores. Each value finite and > 0.
  std::map<std::string, double> worker_cores;
  // A worker holding a lease that is silent this long is declared lost and
  // its unfinished items return to the pool.
  double lease_seconds = 30;
  // A worker that has never reported this long after the start is declared
  // lost (its planned share goes to the others).
  double start_timeout_s = 120;
  // Resume from a checkpoint: its items are finished from the outset (never
  // leased again) and its result is the starting result.
  std::optional<Checkpoint> resume;
  // Names this session in every reply; workers echo the one of their lease's
  // reply in reports. Server::AddJob draws a fresh random one when it is
  // empty, so a coordinator that restarted tells the leases its earlier
  // incarnation granted from bad reports. "" here: no report is stale.
  std::string session;
  // Recompute a sample of the finished ranges on other workers (off by
  // default); Create refuses it with fewer than two workers.
  VerifyOptions verify;
  // How the job is named in its metrics (docs/metrics.md): the labels
  // `weightedjob` (empty: the id) and `job_namespace` of every series of the
  // job.
  std::string metric_name;
  std::string metric_namespace;
  // The label `workload` of its series, which Prometheus's history is read
  // by: what the job's history is kept under (the operator's HistoryKey:
  // the kind, for exec with its image). Empty: the workload kind.
  history::HistoryKey history_key;
  // The nodes' history the priors came from, and how a node is judged
  // against it (core/health/deviation.h): the speeds exported for
  // Prometheus's history enter winsorized as the operator's store enters
  // them (recorded_speeds.h, EnteredSpeeds). Empty: exported as measured.
  std::vector<fuzzy::NodeHistory> baseline;
  health::DeviationOptions deviation;
  // Release idle workers in the job's tail (idle_release.h): a worker that
  // asks for work when none is left to give it is told "done" instead of
  // "wait", so that it exits and its pod's resources go back (the operator
  // sets it for jobs queued by Kueue, whose quota returns early). Off: every
  // worker stays to the job's end, ready to steal, back up or take over.
  bool release_idle = false;
};

// What the coordinator knows about one worker; for tables and status.
struct WorkerView {
  std::string name;
  double prior_speed = 0;
  uint64_t items = 0;  // items whose results it delivered (merged)
  double cost = 0;     // their declared cost (an item of mean cost is 1)
  double busy_s = 0;   // computing seconds it reported (wall time)
  double cpu_s = 0;    // CPU seconds it reported: its work, in this machine's cores
  // The share of busy_s and cpu_s spent on completions another worker had
  // handed in first (a backup's copy, a step past a cut), by declared cost:
  // work done twice, which counts neither as work nor toward its speed.
  double dropped_busy_s = 0;
  double dropped_cpu_s = 0;
  // Seconds it computed, unreported, on items somebody else had handed in
  // when the job ended (a backup copy, or a run over items a thief finished
  // first, still under way): from its last measured report to the end
  // (JobSession::CountComputingCutShort). A report of its computing after
  // the end replaces it, its seconds counting in dropped_busy_s instead.
  double cut_short_s = 0;
  uint64_t reports = 0;
  uint64_t leases = 0;       // leases granted
  uint64_t cuts = 0;         // times its lease was shrunk (stolen from, rebalanced)
  uint64_t lost = 0;         // times it was declared lost
  bool contacted = false;    // it has reported at least once
  bool holds_lease = false;  // its last reply gave it work (a lease or a check)
  double first_contact = 0;
  double last_contact = 0;
  double joined_at = 0;  // when it joined the job: the job's start, or AddWorker's time
  // When it was last declared lost or left, unless it has reported since:
  // the end of its time in the job, as far as the coordinator knows.
  std::optional<double> left_at;
  // It was released in the job's tail (JobConfig::release_idle): told "done"
  // while the job ran, at left_at. It computes nothing more; its pod's exit
  // is its end, not a failure.
  bool released = false;
  double last_measured = 0;  // its last report of computing time (0: none yet)
  // Of JobView::sharing_sampled_s, the seconds a worker of another job on its
  // node held work (JobSession::SampleSharing).
  double shared_s = 0;
  double finished_at = 0;  // its last completion
  // Stretches it spent computing, [start, end), from its reports (the last
  // ones merged when there are more than kMaxSegments, job_session.h); for
  // Gantt charts.
  std::vector<std::pair<double, double>> busy;
  // Its reports that handed in finished items, each the declared cost merged
  // over the computing seconds since the previous one (the progress reports
  // between them included): how much its items' real costs scatter around
  // their declared costs (health::MeasurementNoise).
  std::vector<health::SpeedSample> speed_samples;

  // Computing seconds spent on items whose results were merged: what its
  // measured speed is taken over.
  double MergedBusySeconds() const { return std::max(0.0, busy_s - dropped_busy_s); }
  // Its busy seconds on work somebody else's result stands for.
  double DuplicateBusySeconds() const { return dropped_busy_s + cut_short_s; }
};

// A worker's measured speed, cost units per second of computing (its merged
// busy seconds); 0 before it has reported computing time.
double MeasuredSpeed(const WorkerView& worker);

// The cost model a job's policy splits by (balance::PolicyStats), in the
// job's own cost units.
struct CostModelFigures {
  double start_cost = 0;  // per item; 0 while the declared costs stand
  uint64_t samples = 0;   // reports the policy's latest fit took in
  // Over the job's nodes together: busy seconds per unit of the model's cost
  // (declared cost plus start_cost per item), and start_cost in those
  // seconds; unset before a node reported computing time on merged items.
  std::optional<double> seconds_per_cost;
  std::optional<double> start_seconds;
};

struct JobView {
  std::string id;
  uint64_t items = 0;
  uint64_t completed = 0;
  // The declared cost of the completed items, in units where the whole job
  // costs `items` (balance::CostModel): progress by cost, not count.
  double completed_cost = 0;
  bool done = false;
  double started_at = 0;
  double finished_at = 0;  // when the last item's result was merged
  workload::Result result = workload::Result::Empty(workload::WorkloadKind::kPrimes);
  balance::PolicyStats policy;
  uint64_t messages = 0;             // reports, replies and signals
  uint64_t refused_reports = 0;      // reports refused as a whole
  uint64_t dropped_completions = 0;  // completions overlapping finished items
  uint64_t clamped_reports = 0;      // reports whose calc or CPU seconds were cut
  std::vector<WorkerView> workers;
  // The seconds of the run JobSession::SampleSharing has covered.
  double sharing_sampled_s = 0;
  // Set when the job failed verification: verification.failure says why.
  VerificationView verification;
};

// The cost model of `view`'s policy, its costs in the job's units (`unit`:
// the mean item's declared cost, workload::MeanItemCost; the view counts in
// mean items); nullopt when the policy learns no costs. What status.costModel
// and the progress route (core/protocol/progress.h) say.
std::optional<CostModelFigures> CostModelOfView(const JobView& view, double unit);

}  // namespace ballast::coordinator
