// How `ballast run` and `ballast bench` show a local run: the weights, a live
// progress line, the per-node table and the result, the JSON document, and
// the HTML report (a Gantt chart and the per-node table as SVG).
//
// Thread-safety: ProgressPrinter is used from one thread; the rest are pure.
#pragma once

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/run/local_runner.h"
#include "coordinator/job_types.h"
#include "core/fuzzy/model.h"
#include "core/health/energy.h"
#include "core/job/job_spec.h"

namespace ballast::cli {

// Prints each node's fuzzy score and weight, and its emulated speed.
void PrintWeights(const job::ClusterSpec& cluster, const fuzzy::WeightResult& weights);

// The per-node table, the figures against the physical limit, and the result.
void PrintRunTable(const job::JobSpec& job, const LocalRunOutcome& outcome);

// {"job", "policy", "result", "makespan_s", "ideal_s", "work_s", "total_speed", "efficiency",
//  "efficiency_capped", "messages", "moved_items", "steals", "speed_method", "log_dir",
//  "verification", "processes", "nodes": [{..., "log": the file of its worker's log in
//  log_dir}]};
// "verification" is null when the job has none, else {"fraction", "ranges", "sampled",
// "checked", "items", "cpu_s", "finished_at_s", "failure"}; "processes" is
// ContainmentJson.
nlohmann::json RunJson(const job::JobSpec& job, const LocalRunOutcome& outcome);

// What the end of a run left of its processes, in one sentence that claims
// nothing it does not know: "the run's processes are stopped: 3 were still
// running at its end and were killed with its cgroup (cgroup.kill); none
// remain, and its cgroups are removed", with how many had left the cgroups
// and were found and killed; or, when something remains, how many processes
// and which cgroups could not be removed, and why; or, without cgroups, that
// a process that started a session of its own may still run.
std::string DescribeContainment(const ContainmentReport& report);

// {"contained_by": "cgroup" | "session", "where": the run's cgroup or why there is
//  none, "killed", "escaped", "remaining" (null without cgroups: not known),
//  "cgroups_left": how many, "left_cgroups": [{"cgroup", "why"}], "clean"}.
nlohmann::json ContainmentJson(const ContainmentReport& report);

// A self-contained HTML page: the Gantt chart of every node's busy and idle
// time and the per-node table, both as inline SVG, and the run's estimated
// `energy` (health::EstimateJobEnergy) per node, per item and in total.
std::string RenderRunReport(const job::JobSpec& job, const LocalRunOutcome& outcome,
                            const health::JobEnergy& energy);

// The energy section of that page: the total (health::DescribeEnergy) and a
// table of each node's watts, busy and idle seconds, joules, items and
// joules per item ("-" where a node has no power figure).
std::string EnergyHtml(const health::JobEnergy& energy);

// A progress bar with ETA, redrawn in place on a terminal; on anything else a
// plain line every few seconds.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::FILE* out);
  // Shows the job's state; call as often as you like.
  void Update(const coordinator::JobView& view);
  // Ends the line (terminal) after the last update.
  void Finish();

 private:
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
  bool finished_ = false;  // the last (100 %) line is out
};

}  // namespace ballast::cli
