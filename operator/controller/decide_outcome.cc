// Decide's outcome of a running session (decide_internal.h): the status its
// view gives — per-node table, progress, result, checkpoint, the cost model —
// and the phase that follows: Succeeded with the efficiency figures and the
// timing, Failed when items, pods or every node's start failed, else
// Running or Pending.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/common/json_read.h"
#include "core/job/failure_policy.h"
#include "operator/api/job_status.h"
#include "operator/controller/decide_internal.h"
#include "operator/controller/job_efficiency.h"
#include "operator/controller/job_failures.h"
#include "operator/controller/job_timing.h"

namespace ballast::controller::decide {

namespace {

// The longest status.efficiencyNote (the CRD's maxLength is 1024).
constexpr size_t kMaxNoteBytes = 1000;

// `value` to four significant digits, as status shows speeds (seconds per
// cost unit may be far below a millisecond).
double FourDigits(double value) {
  return std::strtod(fmt::format("{:.4g}", value).c_str(), nullptr);  // never throws
}

// status.costModel of the session's view (weighted_job.h), its costs in the
// job's units (`unit`: the mean item's declared cost; the view's are in mean
// items), to four digits: nullopt when its policy learns no costs.
std::optional<api::CostModelStatus> CostModelOf(const coordinator::JobView& view, double unit) {
  const auto figures = coordinator::CostModelOfView(view, unit);
  if (!figures) return std::nullopt;
  api::CostModelStatus model;
  model.start_cost = FourDigits(figures->start_cost);
  model.learned = view.policy.start_cost > 0;
  model.samples = figures->samples;
  if (figures->seconds_per_cost) model.seconds_per_cost = FourDigits(*figures->seconds_per_cost);
  if (figures->start_seconds) model.start_seconds = FourDigits(*figures->start_seconds);
  return model;
}

// status.nodes: a row per worker of the session in the view, then the rows
// of workers an earlier session released.
void NodeTable(const PassView& pass_view, const SessionMemory& session, const NodeFaults& faults,
               api::WeightedJobStatus& status) {
  const coordinator::JobView& view = *pass_view.in.view;
  const double unit = workload::MeanItemCost(pass_view.spec().job.workload);
  std::map<std::string, const SessionNode*> workers;  // the session's, by name
  for (const SessionNode& node : session.nodes) {
    if (node.worker) workers[node.name] = &node;
  }
  std::vector<api::NodeRow> rows;
  for (const auto& worker : view.workers) {
    const auto found = workers.find(worker.name);
    if (found == workers.end()) continue;
    const fuzzy::NodeWeight& weight = found->second->worker->weight;
    api::NodeRow row;
    row.name = worker.name;
    row.weight = weight.weight;
    row.score = std::round(weight.score * 1e4) / 1e4;
    const double busy_s = worker.MergedBusySeconds();
    row.estimated_speed = busy_s > 0 ? std::round(worker.items / busy_s * 100) / 100 : 0.0;
    row.cost = Rounded(worker.cost * unit);
    if (busy_s > 0) row.cost_speed = Rounded(worker.cost * unit / busy_s);
    row.items = found->second->items_before + worker.items;
    row.steals = worker.cuts;
    if (worker.DuplicateBusySeconds() > 0) {
      row.duplicate_seconds = Rounded(worker.DuplicateBusySeconds());
    }
    row.pod = WorkerPodName(pass_view.in.name, worker.name);
    rows.push_back(std::move(row));
  }
  // A worker an earlier session released keeps its row as last written:
  // its items count in the job's.
  const std::vector<api::NodeRow> shown = status.nodes.value_or(std::vector<api::NodeRow>{});
  for (const api::NodeRow& row : shown) {
    if (faults.Released(row.name) && !workers.contains(row.name)) rows.push_back(row);
  }
  PriorColumns(session, shown, rows);
  status.nodes = std::move(rows);
}

// The moments of the session's first report, in unix seconds (decide.h's
// view times are the coordinator's: the session started at
// session.registered_wall).
TimingMoments Moments(const PassView& pass, const SessionMemory& session, const JobClock& clock) {
  const coordinator::JobView& view = *pass.in.view;
  const auto unix_time = [&](double t) { return session.registered_wall + (t - view.started_at); };
  TimingMoments moments;
  moments.created = ParseRfcTime(pass.in.job.meta.creation_timestamp);
  if (clock.accepted_wall > 0) moments.accepted = clock.accepted_wall;
  moments.started = session.registered_wall;
  moments.finished = unix_time(view.finished_at);
  moments.resumed = session.resumed;
  const coordinator::WorkerView* first = nullptr;
  for (const auto& worker : view.workers) {
    if (worker.contacted && (!first || worker.first_contact < first->first_contact)) {
      first = &worker;
    }
  }
  if (!first) return moments;
  moments.first_report = unix_time(first->first_contact);
  moments.first_node = first->name;
  const api::PodView* pod = pass.WorkerPod(first->name);
  if (!pod || !pod->meta.OwnedBy(pass.uid)) return moments;
  moments.scheduled = ParseRfcTime(pod->scheduled_at);
  moments.sandbox_ready = ParseRfcTime(pod->sandbox_ready_at);
  if (!pod->containers.empty()) {
    const api::ContainerView& worker = pod->containers[0];
    const std::string& started =
        worker.terminated ? worker.terminated->started_at : worker.started_at;
    moments.container_started = ParseRfcTime(started);
  }
  for (const api::ContainerView& init : pod->init_containers) {
    const auto finished =
        init.terminated ? ParseRfcTime(init.terminated->finished_at) : std::nullopt;
    if (finished) moments.init_finished = std::max(moments.init_finished.value_or(0), *finished);
  }
  return moments;
}

// The efficiency figures of the pass's finished session, which took `makespan_s`.
EfficiencyFigures JobEfficiency(const PassView& pass, const SessionMemory& session,
                                double makespan_s) {
  const auto& workload = pass.spec().job.workload;
  ItemBound items;
  items.largest_share = workload::LargestItemShare(workload);
  if (workload.kind == workload::WorkloadKind::kExec) items.concurrency = workload.exec.concurrency;
  std::map<std::string, NodeReference> references;  // of the session's workers
  for (const SessionNode& node : session.nodes) {
    if (node.worker) references[node.name] = node.worker->reference;
  }
  return ComputeEfficiency(*pass.in.view, makespan_s, references, items);
}

// status.timing and status.efficiencyNote of a finished session, from its
// first report's `moments`.
void TimingColumns(const TimingMoments& moments, api::WeightedJobStatus& status,
                   const EfficiencyFigures& figures) {
  const JobTiming timing = ComputeTiming(moments, figures.ideal_s);
  status.timing = TimingToJson(timing);
  status.efficiency_note = json_read::Cut(TimingSummary(timing), kMaxNoteBytes);
  status.note = status.efficiency_note;
}

// Whether the first reporter's pod is not in the pod cache as started yet
// (a job shorter than the cache's lag): the timing misses what the pod bounds.
bool TimingAwaitsPod(const TimingMoments& moments) {
  return !moments.first_node.empty() && !moments.container_started;
}

// The Completed event's and the Ready condition's message of a job that
// succeeded: its items, its makespan, its efficiency against the reference
// it was measured with, and the efficiency note (where the time went).
std::string CompletedMessage(const PassView& pass, const api::WeightedJobStatus& status,
                             const EfficiencyFigures& figures, double makespan) {
  const coordinator::JobView& view = *pass.in.view;
  const uint64_t failed = status.failed_items.value_or(0);
  const std::string against =
      figures.source == ReferenceSource::kEstimate
          ? fmt::format("the job's own estimate: {}", figures.missing)
          : fmt::format("against {}, {}-bound; the job's own estimate {:.3f}",
                        ReferenceSourceName(figures.source), balance::LimitBoundName(figures.bound),
                        status.estimated_efficiency.value_or(0));
  std::string message =
      failed == 0
          ? fmt::format("all {} items finished", view.items)
          : fmt::format("{} of {} items succeeded, {} failed ({})", view.items - failed, view.items,
                        failed, job::FailurePolicyName(pass.spec().job.max_failed_items));
  message +=
      fmt::format(" in {:.1f} s on {} nodes (efficiency {:.3f}, {}); {}",
                  status.makespan_seconds.value_or(makespan), view.workers.size(),
                  status.efficiency.value_or(0), against, status.efficiency_note.value_or(""));
  return message;
}

// The Complete condition's message of a job that succeeded with `failed`
// items failed: every result merged, or which items failed within the
// failure policy.
std::string CompleteMessage(const PassView& pass, uint64_t failed) {
  if (failed == 0) return "every item's result is merged";
  const auto& job = pass.spec().job;
  return fmt::format("{} item{} failed all attempts, within {}: {}", failed, failed == 1 ? "" : "s",
                     job::FailurePolicyName(job.max_failed_items),
                     NameFailedItems(pass.in.view->result, workload::NamesOf(job.workload)));
}

// The figures of the pass that saw the job finish (after `makespan`
// seconds): its completion time, makespan, efficiency, timing, each node's
// measured speed and energy. Later passes (while the pods exit) keep them.
void SuccessFigures(const PassView& pass, const SessionMemory& session, const JobClock& clock,
                    JobSink& sink, double makespan, const EfficiencyFigures& figures) {
  api::WeightedJobStatus& status = sink.status;
  status.completion_time = pass.in.now.rfc3339;
  status.makespan_seconds = Rounded(makespan);
  status.ideal_seconds = Rounded(figures.ideal_s);
  status.efficiency = Rounded(figures.efficiency);
  status.efficiency_reference = ReferenceSourceName(figures.source);
  status.limit_bound = balance::LimitBoundName(figures.bound);
  status.estimated_ideal_seconds = Rounded(figures.estimated_ideal_s);
  status.estimated_efficiency = Rounded(figures.estimated_efficiency);
  TimingColumns(Moments(pass, session, clock), status, figures);
  MeasuredColumns(pass, session, status, sink);
  EnergyColumns(pass, status, sink, makespan);
}

void Succeed(const PassView& pass, const SessionMemory& session, const JobClock& clock,
             Announced& announced, JobSink& sink) {
  const coordinator::JobView& view = *pass.in.view;
  api::WeightedJobStatus& status = sink.status;
  double makespan = view.finished_at - view.started_at;
  if (session.resumed) {
    const auto started = ParseRfcTime(status.start_time.value_or(""));
    if (started) makespan += session.registered_wall - *started;
  }
  const EfficiencyFigures figures = JobEfficiency(pass, session, makespan);
  const bool first_time = !status.Is(api::JobPhase::kSucceeded);
  if (first_time) SuccessFigures(pass, session, clock, sink, makespan, figures);
  status.workers = 0;
  status.checkpoint.reset();  // the result is final
  const uint64_t failed = status.failed_items.value_or(0);
  // The Completed Event names where the time went: held back while the pod
  // cache has not shown the pod that tells it (RefineTiming tells it).
  const bool hold =
      first_time && sink.Registered() && TimingAwaitsPod(Moments(pass, session, clock));
  if (hold) announced.completed_pending = true;
  sink.Transition(api::JobPhase::kSucceeded, failed > 0, api::Reason::kCompleted,
                  CompletedMessage(pass, status, figures, makespan), !hold);
  api::SetCondition(status,
                    Condition(api::ConditionType::kComplete, true,
                              failed == 0 ? api::Reason::kAllItemsFinished
                                          : api::Reason::kCompletedWithFailedItems,
                              CompleteMessage(pass, failed)),
                    pass.in.job.generation, pass.in.now.rfc3339);
}

}  // namespace

void RefineTiming(const PassView& view, const SessionMemory& session, const JobClock& clock,
                  Announced& announced, JobSink& sink, bool ending) {
  const bool lingering = sink.Registered() && view.in.view && view.in.view->done;
  if (!sink.status.Is(api::JobPhase::kSucceeded) || !lingering) return;
  const double makespan = sink.status.makespan_seconds.value_or(0);
  const EfficiencyFigures figures = JobEfficiency(view, session, makespan);
  TimingColumns(Moments(view, session, clock), sink.status, figures);
  const bool warning = sink.status.failed_items.value_or(0) > 0;
  const std::string message = CompletedMessage(view, sink.status, figures, makespan);
  sink.Transition(api::JobPhase::kSucceeded, warning, api::Reason::kCompleted, message, false);
  if (announced.completed_pending && (ending || !TimingAwaitsPod(Moments(view, session, clock)))) {
    announced.completed_pending = false;
    sink.Event(warning, api::Reason::kCompleted, message);
  }
  sink.HandStatus(true);
}

namespace {

// status.failedItems and failedItemValues from the view's result; an
// ItemsFailed Warning when more items failed since the last one; the job
// Failed as core/job/failure_policy.h says: at once (TooManyFailedItems) past
// spec.failurePolicy.maxFailedItems, or once every item was attempted
// (FailedItems) when it is unset. Returns true when it failed the job.
bool CountFailedItems(const PassView& pass, const CheckpointSlice& seal, JobSink& sink) {
  const workload::Result& result = pass.in.view->result;
  const uint64_t failed = result.FailedItems();
  const std::optional<uint64_t> max = pass.spec().job.max_failed_items;
  const std::vector<std::string>* values = pass.spec().job.workload.item_values.get();
  sink.status.failed_items = failed;
  sink.status.failed_item_values =
      values ? result.FailedValues(*values, workload::Result::kShownFailedValues)
             : std::vector<std::string>{};
  if (failed == 0) return false;
  const workload::ItemNames names = workload::NamesOf(pass.spec().job.workload);
  const std::string named = NameFailedItems(result, names);
  // The count the last ItemsFailed event said is the status's: written at
  // once, so that the next pass does not say it again.
  if (failed > pass.started.failed_items.value_or(0)) {
    sink.write_at_once = true;
    sink.Event(true, api::Reason::kItemsFailed,
               fmt::format("{} item{} failed all attempts so far ({}): {}", failed,
                           failed == 1 ? "" : "s", job::FailurePolicyName(max), named));
  }
  const auto failure = FailureByItems(result, pass.in.view->items, pass.in.view->done, max, names,
                                      "in status.result");
  if (!failure) return false;
  FailSession(pass, seal, sink, failure->reason, failure->message);
  return true;
}

// The status's note and the tail of the Pending / Running message while
// workers wait on what they need to start (WatchImage): "node pi3b-0: the
// Secret s3 does not exist; given up in 44 s", two named, then how many
// more; nullopt when none waits.
std::optional<std::string> StartBlockedNote(const PassOut& out) {
  if (out.start_blocked.empty()) return std::nullopt;
  return json_read::Cut(ListSome(out.start_blocked, 2), kMaxNoteBytes);
}

// "no node could start the job's worker: the Secret s3 does not exist
// (pi3b-0, pi4b-0); ...": the nodes given up, grouped by cause.
std::string NoWorkerCanStartMessage(const std::vector<api::ExcludedNode>& given_up) {
  std::map<std::string, std::vector<std::string>> nodes_by_cause;
  for (const api::ExcludedNode& excluded : given_up) {
    nodes_by_cause[excluded.cause.empty() ? excluded.reason : excluded.cause].push_back(
        excluded.name);
  }
  std::vector<std::string> why;
  for (const auto& [cause, names] : nodes_by_cause) {
    why.push_back(fmt::format("{} ({})", cause, ListSome(names, 10, ", ")));
  }
  return fmt::format("no node could start the job's worker: {}", fmt::join(why, "; "));
}

// Fails the running job, and returns true, when no node can start its
// worker (every one given up) or when more worker pods failed than
// spec.backoffLimit allows and none is left.
bool FailedOnPods(const PassView& pass, const SessionMemory& session, JobSink& sink,
                  const PodCount& count) {
  const size_t nodes = session.NodeCount();
  const uint32_t limit = pass.spec().job.backoff_limit;
  std::vector<api::ExcludedNode> given_up;
  for (const auto& row : sink.status.excluded_nodes) {
    if (!ArchitectureRow(row)) given_up.push_back(row);
  }
  if (nodes > 0 && given_up.size() >= nodes) {
    const std::string message = NoWorkerCanStartMessage(given_up);
    sink.status.completion_time = pass.in.now.rfc3339;
    sink.Transition(api::JobPhase::kFailed, true, api::Reason::kNoWorkerCanStart, message);
    api::SetCondition(
        sink.status,
        Condition(api::ConditionType::kFailed, true, api::Reason::kNoWorkerCanStart, message),
        pass.in.job.generation, pass.in.now.rfc3339);
    return true;
  }
  if (count.failed_pods > limit && count.alive == 0) {
    const std::string message = fmt::format(
        "{} worker pods failed (backoffLimit {}) and none is left", count.failed_pods, limit);
    sink.status.completion_time = pass.in.now.rfc3339;
    sink.Transition(api::JobPhase::kFailed, true, api::Reason::kBackoffLimitExceeded, message);
    api::SetCondition(sink.status,
                      Condition(api::ConditionType::kFailed, true,
                                api::Reason::kBackoffLimitExceeded, "worker pods failed"),
                      pass.in.job.generation, pass.in.now.rfc3339);
    return true;
  }
  return false;
}

void RunningStatus(const PassView& pass, const SessionMemory& session, const CheckpointSlice& seal,
                   JobSink& sink, const PodCount& count) {
  sink.status.note = StartBlockedNote(sink);
  if (pass.in.checkpoint) KeepCheckpoint(pass, seal, sink.status, sink, *pass.in.checkpoint);
  if (FailedOnPods(pass, session, sink, count)) return;
  const size_t nodes = session.NodeCount();
  const int released = count.released + count.released_before;
  std::string workers =
      fmt::format("{} of {} workers running", count.running, nodes + count.released_before);
  if (released > 0) {
    workers += fmt::format(", {} released (the job has no work left for {})", released,
                           released == 1 ? "it" : "them");
  }
  const bool was_running = sink.status.Is(api::JobPhase::kRunning);
  sink.Transition(
      count.running > 0 ? api::JobPhase::kRunning : api::JobPhase::kPending, false,
      count.running > 0 ? api::Reason::kWorkersRunning : api::Reason::kWaitingForWorkers,
      sink.status.note ? workers + "; " + *sink.status.note : workers);
  // The event of the move to Running counts the workers then; once every
  // worker runs, another says so (and again after one was replaced). What
  // was said is status.workers in the status the pass starts from, written
  // at once when it crosses "all".
  const auto every = [nodes](int64_t running) {
    return nodes > 0 && running >= static_cast<int64_t>(nodes);
  };
  const bool all = every(count.running);
  if (all != every(pass.started.workers.value_or(0))) {
    sink.write_at_once = true;
    if (all && was_running) sink.Event(false, api::Reason::kWorkersRunning, workers);
  }
  api::SetCondition(sink.status,
                    Condition(api::ConditionType::kSuspended, false, api::Reason::kNotSuspended,
                              "spec.suspend is false"),
                    pass.in.job.generation, pass.in.now.rfc3339);
}

}  // namespace

void SessionOutcome(const PassView& pass, const SessionMemory& session, const JobClock& clock,
                    const CheckpointSlice& seal, JobSink& sink, const PodCount& count) {
  const coordinator::JobView& view = *pass.in.view;
  sink.status.workers = count.running;
  sink.status.completed_items = view.completed;
  // The view counts costs in mean items; the status in the job's own units.
  const double unit = workload::MeanItemCost(pass.spec().job.workload);
  sink.status.completed_cost = Rounded(view.completed_cost * unit);
  sink.status.total_cost = Rounded(static_cast<double>(view.items) * unit);
  sink.status.cost_model = CostModelOf(view, unit);
  sink.status.progress = api::ProgressText(view.completed, view.items);
  sink.status.result = view.result.ToStatusJson(pass.spec().job.workload.item_values.get());
  NodeTable(pass, session, seal.faults, sink.status);
  // A failed verification also ends the session (view.done): it fails the job.
  if (!view.verification.failure.empty()) {
    return FailSession(pass, seal, sink, api::Reason::kVerificationFailed,
                       view.verification.failure);
  }
  if (CountFailedItems(pass, seal, sink)) return;
  if (view.done) return Succeed(pass, session, clock, seal.announced, sink);
  RunningStatus(pass, session, seal, sink, count);
}

}  // namespace ballast::controller::decide
