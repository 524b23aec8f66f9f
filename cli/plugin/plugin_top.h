// `kubectl ballast top JOB`: a per-node view of a WeightedJob, read from the
// object the API server holds (its status: progress, the per-node table the
// operator writes every --status-interval, status.nodeSummary when the table
// is cut to the nodes furthest from their predicted speed). TopViewFromJob
// reads the object, RenderTop draws it as plain text lines for a terminal of
// a given width; kubectl_plugin.cc only fetches and redraws.
//
// Progress is by declared cost (status.completedCost, where the whole job
// costs `items`), not by item count: with items of skewed sizes the count
// says little. A node's bar is its cost against its expected share of the
// job: the job's cost times the node's share of the summed cost speeds (its
// weight's share before it has a speed), which is what the adaptive policy
// steers every node toward. ETA: the cost left over the summed cost speeds
// when every node is in the table; otherwise the elapsed time scaled by the
// fraction left. A status from an operator that writes no cost is read by
// item count instead. Where the policy learned a start cost per item
// (status.costModel), the work is the declared cost plus that start cost per
// item: the bars, the shares and the ETAs follow it, and one line shows the
// model. Across redraws a TopTrail keeps every bar from going backwards (a
// node's expected share moves as its speed is learned).
//
// The status is what the operator last wrote: a running job's progress goes
// out at steps of the job or every --progress-interval (a minute by default;
// docs/operator.md), so what top shows may be that old. When the last
// status write (the newest managedFields entry of the status subresource)
// is kStaleStatusSeconds old or more, the progress line says how old. The
// ETA is counted from that write, not from the redraw: the time since comes
// off it, so the implied finish holds still between writes.
//
// Progress has one label, "% of the work": the declared cost, plus the
// learned start cost per item where the policy learned one.
//
// While the job runs, the figures may instead be the coordinator's at the
// redraw (plugin_live.h, WithLive): the progress line then says "live", and
// nothing comes off the ETA. When top asked for them and got none, one line
// says why the figures are the status's.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/workload/workload.h"
#include "operator/api/weighted_job.h"

namespace ballast::cli {

struct TopNode {
  std::string name;
  double weight = 0;
  double speed = 0;  // estimated items per busy second; 0 before the node reported
  uint64_t items = 0;
  uint64_t steals = 0;
  // Declared cost finished, and per busy second; items and `speed` where the
  // status has no cost.
  double cost = 0;
  double cost_speed = 0;
};

// Where a view's progress figures come from.
enum class TopSource {
  kStatus,  // the WeightedJob's status, as the operator last wrote it
  kLive,    // the coordinator, when the view was read (plugin_live.h)
};

struct TopView {
  std::string ns;
  std::string name;
  std::optional<api::JobPhase> phase;  // unset when the operator has written no status yet
  // What the spec runs; unset when its spec is not one this version runs.
  std::optional<workload::WorkloadKind> workload;
  std::string policy;  // spec.policy's name; "" for the default
  uint64_t completed = 0;
  uint64_t items = 0;
  // Declared cost finished and in all, in the job's cost units; `completed`
  // and `items` where the status has no cost (an older operator's counts
  // costs where the whole job costs `items`: no totalCost).
  double completed_cost = 0;
  double total_cost = 0;
  int64_t workers = 0;
  std::optional<double> elapsed_s;  // since status.startTime (to completionTime when done)
  std::vector<TopNode> nodes;       // status.nodes, as written
  uint64_t node_count = 0;          // all nodes of the job (status.nodeSummary.nodes)
  uint64_t steals = 0;              // of all nodes
  uint64_t excluded = 0;            // nodes the job selects that carry no worker
  std::string condition;            // "Reason: message" of the newest condition
  std::optional<double> makespan_s;
  std::optional<double> efficiency;
  std::string efficiency_reference;  // what it is measured against ("" unknown)
  std::string limit_bound;
  std::string result;  // status.result as `ballast run` sums it up, once the job is finished
  // status.costModel: the start cost per item the policy splits by; absent
  // when its policy learns no costs.
  std::optional<api::CostModelStatus> cost_model;
  // Since the status was last written (metadata.managedFields' newest entry
  // of the status subresource); unset when the object does not say.
  std::optional<double> status_age_s;
  double now = 0;  // unix seconds the view was read at
  TopSource source = TopSource::kStatus;
  // Why the figures are the status's although the live view was asked (one
  // line); "" when they are live or it was not asked.
  std::string live_note;
};

// From this age on, a running job's progress line says how old its status is.
constexpr double kStaleStatusSeconds = 10;

// The view of a WeightedJob read already (api::WeightedJobFromJson);
// without its managedFields, so status_age_s is unset.
TopView TopViewOf(const api::WeightedJobObject& object, double now);
// The view of `job` (a WeightedJob as the API server returns it) at unix
// time `now`. Invalid naming the field when the object is not a
// WeightedJob or its status has a field of the wrong type.
StatusOr<TopView> TopViewFromJob(const nlohmann::json& job, double now);
// Whether the job is Succeeded or Failed.
bool Finished(const TopView& view);
// The phase as status.phase writes it; "" when unset.
std::string PhaseText(const TopView& view);

// "1h02m", "3m05s", "42s"; "--" for a negative or non-finite value.
std::string FormatSeconds(double seconds);

// The view as text lines for a terminal `width` columns wide (at least 60
// is used): a header with the job's phase, progress bar, elapsed time and
// ETA, and the cost model when the status has one; one row per node with its weight, speed, items,
// steals and bar; a note when the table shows only some nodes; the result once finished. Names are
// cut to fit; every line is at most max(width, 60) columns. With `trail` (kept by the caller from
// one redraw to the next), no bar is drawn shorter than it was.
// The trail also keeps the job's implied finish (the time of the redraw plus
// its ETA) and the figures it came from: an ETA that puts the finish later
// than the last redraw did, by more than kEtaSlack, says by how much and why
// (the figures came from another source than at the last redraw — the
// coordinator's live view, or the status —, the nodes' summed speed fell, the
// work grew as a start cost per item was learned, or less was done than the
// speeds foretold).
struct TopTrail {
  double job = 0;
  std::map<std::string, double> nodes;
  std::optional<double> finish_at;  // unix seconds
  double speed = 0;                 // the summed speed it came from
  double work = 0;                  // the job's work it came from
  std::optional<TopSource> source;  // where the figures came from
};
// How much later an implied finish may move without a word: 2 s, or 5 % of
// the ETA when more.
constexpr double kEtaSlackSeconds = 2;
constexpr double kEtaSlackFraction = 0.05;
std::string RenderTop(const TopView& view, int width, TopTrail* trail = nullptr);

}  // namespace ballast::cli
