#include "cli/run/run_outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "core/balance/efficiency.h"
#include "core/job/failure_policy.h"

namespace ballast::cli {
namespace {

using WorkerIds = std::map<std::string, size_t>;

// The coordinator's id of each worker, by name.
WorkerIds IdsByName(const coordinator::JobView& view) {
  WorkerIds ids;
  for (size_t id = 0; id < view.workers.size(); ++id) ids[view.workers[id].name] = id;
  return ids;
}

// The id of the node's worker; none for a node that never joined.
std::optional<size_t> WorkerOf(const NodeRecord& record, const WorkerIds& ids) {
  const auto id = ids.find(record.node.name);
  if (!record.joined || id == ids.end()) return std::nullopt;
  return id->second;
}

// The speed of one item's run on the node that runs one fastest: its cores
// over the items it runs at once (exec.concurrency, else one per started core).
double FastestItemSpeed(const workload::WorkloadSpec& workload,
                        const std::vector<NodeRecord>& nodes) {
  const uint32_t concurrency =
      workload.kind == workload::WorkloadKind::kExec ? workload.exec.concurrency : 0;
  double fastest = 0;
  for (const NodeRecord& record : nodes) {
    if (!record.joined) continue;
    const double speed = record.node.speed;
    fastest = std::max(fastest, speed / balance::ItemsAtOnce(speed, concurrency));
  }
  return fastest;
}

// The node's row: its weights and what the coordinator saw of its worker.
NodeOutcome NodeRow(const NodeRecord& record, const fuzzy::NodeWeight& weight,
                    const coordinator::JobView& view, std::optional<size_t> id,
                    double seconds_per_cost, double makespan_s) {
  NodeOutcome node;
  node.name = record.node.name;
  node.score = weight.score;
  node.weight = weight.weight;
  node.speed = record.node.speed;
  node.restarts = record.restarts;
  node.log_file = record.log_file;
  if (record.node.join_at) node.joined_s = record.joined ? record.joined_s : -1;
  node.left_s = record.left_s;
  if (!id) return node;
  const coordinator::WorkerView& worker = view.workers[*id];
  const double job_busy_s = worker.MergedBusySeconds() - view.verification.worker_busy_s[*id];
  node.measured_speed = job_busy_s > 0 ? worker.cost * seconds_per_cost / job_busy_s : 0;
  node.items = worker.items;
  node.busy_s = worker.busy_s;
  // Idle while it was in the job.
  const double until = std::min(makespan_s, record.left_s.value_or(makespan_s));
  node.idle_s = std::max(0.0, until - record.joined_s - worker.busy_s);
  node.leases = worker.leases;
  node.reports = worker.reports;
  node.cuts = worker.cuts;
  return node;
}

}  // namespace

LocalRunOutcome RunOutcome(coordinator::JobView view, fuzzy::WeightResult weights,
                           const workload::WorkloadSpec& workload,
                           const std::vector<NodeRecord>& nodes) {
  LocalRunOutcome out;
  out.view = std::move(view);
  out.weights = std::move(weights);
  out.makespan_s = out.view.finished_at;
  // W: the CPU seconds the workers used on the job's items, without
  // verification's recomputations; s_i: the emulated cores, while each
  // node was in the job (balance/efficiency.h, docs/efficiency.md).
  const WorkerIds ids = IdsByName(out.view);
  double cost = 0;
  std::vector<balance::Capacity> spans;
  for (const NodeRecord& record : nodes) {
    const std::optional<size_t> id = WorkerOf(record, ids);
    if (!id) continue;
    const coordinator::WorkerView& worker = out.view.workers[*id];
    out.total_speed += record.node.speed;
    out.work_s += worker.cpu_s - worker.dropped_cpu_s - out.view.verification.worker_cpu_s[*id];
    cost += worker.cost;
    spans.push_back({record.joined_s,
                     record.left_s.value_or(std::numeric_limits<double>::infinity()),
                     record.node.speed});
  }
  const balance::Limit limit = balance::JobLimit(
      out.work_s, spans, workload::LargestItemShare(workload), FastestItemSpeed(workload, nodes));
  out.ideal_s = limit.seconds;
  out.ideal_bound = limit.bound;
  out.efficiency = balance::Efficiency(out.ideal_s, out.makespan_s);
  out.efficiency_capped = balance::EfficiencyCapped(out.ideal_s, out.makespan_s);
  const double seconds_per_cost = cost > 0 ? out.work_s / cost : 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.nodes.push_back(NodeRow(nodes[i], out.weights.nodes[i], out.view, WorkerOf(nodes[i], ids),
                                seconds_per_cost, out.makespan_s));
  }
  return out;
}

bool PastFailurePolicy(const coordinator::JobView& view, const job::JobSpec& job) {
  return job::JudgeFailedItems(view.result.FailedItems(), job.max_failed_items) ==
         job::FailedItemsVerdict::kFailNow;
}

std::optional<controller::FailedItemsFailure> RunFailure(const job::JobSpec& job,
                                                         const LocalRunOutcome& outcome) {
  const coordinator::JobView& view = outcome.view;
  auto failure =
      controller::FailureByItems(view.result, view.items, view.done, job.max_failed_items,
                                 workload::NamesOf(job.workload), "printed above");
  if (failure && outcome.failed_items_stopped) {
    failure->message += fmt::format("; the job was stopped there, {} of {} items not computed",
                                    view.items - view.completed, view.items);
  }
  return failure;
}

}  // namespace ballast::cli
