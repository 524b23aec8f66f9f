// Decide's pass (decide_internal.h): what it reads, what it emits, the
// phase transitions and the pacing of status writes; the job's memory
// (decide.h) and the small helpers the steps share.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <utility>

#include "operator/api/job_status.h"
#include "operator/controller/decide_internal.h"

namespace ballast::controller {

namespace decide {

std::string ListSome(const std::vector<std::string>& items, size_t shown, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < shown; ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  if (items.size() > shown) out += fmt::format("{}and {} more", separator, items.size() - shown);
  return out;
}

std::vector<std::string> GroupNodeWarnings(const std::vector<std::string>& warnings) {
  std::vector<std::string> order;  // each distinct what (or whole other warning), first seen
  std::map<std::string, std::vector<std::string>> nodes;
  for (const std::string& warning : warnings) {
    const size_t colon = warning.find(": ");
    const bool per_node = warning.rfind("node ", 0) == 0 && colon != std::string::npos;
    const std::string what = per_node ? warning.substr(colon + 2) : warning;
    auto [it, added] = nodes.try_emplace(what);
    if (added) order.push_back(what);
    if (per_node) it->second.push_back(warning.substr(5, colon - 5));
  }
  std::vector<std::string> out;
  for (const std::string& what : order) {
    const auto& names = nodes.at(what);
    if (names.empty()) {
      out.push_back(what);
    } else if (names.size() == 1) {
      out.push_back(fmt::format("node {}: {}", names[0], what));
    } else {
      out.push_back(
          fmt::format("{}, on {} nodes: {}", what, names.size(), ListSome(names, 10, ", ")));
    }
  }
  return out;
}

std::optional<double> ParseRfcTime(const std::string& text) {
  std::tm tm{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

api::StatusCondition Condition(api::ConditionType type, bool value, api::Reason reason,
                               const std::string& message) {
  return {type, value, reason, message, 0, ""};
}

uint32_t FailedPods(const api::WeightedJobStatus& status) {
  return static_cast<uint32_t>(std::clamp<int64_t>(status.failed_pods.value_or(0), 0, UINT32_MAX));
}

double Rounded(double value) { return std::round(value * 1000) / 1000; }

PassView::PassView(const DecideInput& input, const DecideOptions& decide_options,
                   const api::WeightedJobStatus& started_from)
    : in(input), options(decide_options), started(started_from), uid(input.job.meta.uid) {
  for (const api::PodView& pod : in.pods) pods_by_name_.emplace(pod.meta.name, &pod);
  for (const api::NodeView& node : in.nodes) nodes_by_name_.emplace(node.meta.name, &node);
  if (in.view) {
    for (const auto& worker : in.view->workers) workers_by_name_.emplace(worker.name, &worker);
  }
  for (const api::ExcludedNode& row : started.excluded_nodes) {
    if (!ArchitectureRow(row)) given_up_.emplace(row.name, &row);
  }
}

template <typename T>
static const T* Named(const std::unordered_map<std::string_view, const T*>& index,
                      std::string_view name) {
  const auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const api::PodView* PassView::PodNamed(std::string_view name) const {
  return Named(pods_by_name_, name);
}

const api::NodeView* PassView::NodeNamed(std::string_view name) const {
  return Named(nodes_by_name_, name);
}

const coordinator::WorkerView* PassView::WorkerNamed(std::string_view name) const {
  return Named(workers_by_name_, name);
}

const api::ExcludedNode* PassView::GivenUpRow(std::string_view node) const {
  return Named(given_up_, node);
}

const api::PodView* PassView::WorkerPod(const std::string& node) const {
  return PodNamed(WorkerPodName(in.name, node));
}

bool PassView::OwnedPodsLeft() const {
  return std::any_of(in.pods.begin(), in.pods.end(), [&](const api::PodView& pod) {
    return pod.meta.OwnedBy(uid) && pod.phase != api::PodPhase::kSucceeded;
  });
}

void PassOut::Event(bool warning, api::Reason reason, std::string message) {
  actions.push_back(RecordEvent{warning, reason, std::move(message), /*node=*/"", /*node_uid=*/""});
}

void PassOut::WakeBy(std::chrono::milliseconds wait) {
  if (!fault_deadline || wait < *fault_deadline) fault_deadline = wait;
}

void PassOut::DeletePods(const PassView& view) {
  for (const api::PodView& pod : view.in.pods) {
    if (!pod.meta.OwnedBy(view.uid) || pod.meta.deleting) continue;
    if (pod.phase == api::PodPhase::kSucceeded)
      continue;  // finished workers stay, as a Job's pods do
    actions.push_back(DeletePod{pod.meta.name, ""});
  }
}

std::chrono::milliseconds PassView::WorkerStartTimeout() const {
  const std::optional<int64_t> seconds =
      in.spec && in.spec->spec ? in.spec->spec->worker_start_timeout_s : std::nullopt;
  return seconds ? std::chrono::milliseconds(*seconds * 1000) : options.worker_start_timeout;
}

void JobSink::Transition(api::JobPhase phase, bool warning, api::Reason reason,
                         const std::string& message, bool announce) {
  const bool changed = !status.Is(phase);
  status.phase = phase;
  const bool running = phase == api::JobPhase::kRunning;
  const bool progressing = running || phase == api::JobPhase::kPending;
  const auto& now = view_.in.now.rfc3339;
  const int64_t generation = view_.in.job.generation;
  // A finished job is not "not ready": Complete or Failed says what it is
  // (as a Job's conditions do), so Ready goes. The conditions are written
  // within the status interval; the phase at once.
  if (status.Finished()) {
    api::RemoveCondition(status, api::ConditionType::kReady);
  } else {
    api::SetCondition(status, Condition(api::ConditionType::kReady, running, reason, message),
                      generation, now);
  }
  api::SetCondition(status,
                    Condition(api::ConditionType::kProgressing, progressing, reason, message),
                    generation, now);
  write_at_once |= changed;
  if (changed && announce) Event(warning, reason, message);
}

void JobSink::HandStatus(bool force) {
  const StatusChange change = ClassifyStatusChange(written_.status, status);
  const auto since =
      std::chrono::duration_cast<std::chrono::milliseconds>(view_.in.now.steady - written_.at);
  if (!StatusWriteDue(change, since, ProgressMoved(written_.status, status), force || write_at_once,
                      view_.options.pacing)) {
    return;
  }
  written_.status = status;
  written_.at = view_.in.now.steady;
  actions.push_back(WriteStatus{status, restate_conditions_});
  status_handed = true;
}

void JobSink::StartSession(coordinator::JobConfig config) {
  actions.push_back(RegisterJob{std::move(config)});
  registered_ = true;
}

void JobSink::EndSession() {
  actions.push_back(RemoveJob{});
  registered_ = false;
}

void JobSink::RequeueBy(std::chrono::milliseconds wait) {
  if (!requeue_after || wait < *requeue_after) requeue_after = wait;
}

void JobSink::RestateConditions() {
  written_.status.conditions.clear();  // so that the pass writes the status now
  restate_conditions_ = true;          // and the executor writes them whole
  write_at_once = true;
}

void FailInPass(const PassView& view, JobSink& sink, api::Reason reason,
                const std::string& message) {
  api::WeightedJobStatus& status = sink.status;
  status.completion_time = view.in.now.rfc3339;
  status.workers = 0;
  status.note.reset();  // what held a worker back is over; the condition says why it failed
  sink.Transition(api::JobPhase::kFailed, true, reason, message);
  api::SetCondition(status, Condition(api::ConditionType::kFailed, true, reason, message),
                    view.in.job.generation, view.in.now.rfc3339);
  sink.HandStatus(true);
}

void FailSession(const PassView& view, const CheckpointSlice& seal, JobSink& sink,
                 api::Reason reason, const std::string& message) {
  if (sink.Registered() && view.in.checkpoint) {
    KeepCheckpoint(view, seal, sink.status, sink, *view.in.checkpoint);
  }
  FailInPass(view, sink, reason, message);
}

}  // namespace decide

std::vector<std::string> SessionMemory::Nodes() const {
  std::vector<std::string> names;
  for (const SessionNode& node : nodes) {
    if (node.worker) names.push_back(node.name);
  }
  return names;
}

size_t SessionMemory::NodeCount() const {
  return std::count_if(nodes.begin(), nodes.end(),
                       [](const SessionNode& node) { return node.worker.has_value(); });
}

const SessionNode* SessionMemory::Find(std::string_view name) const {
  const auto it = std::find_if(nodes.begin(), nodes.end(),
                               [&](const SessionNode& node) { return node.name == name; });
  return it == nodes.end() ? nullptr : &*it;
}

SessionNode* SessionMemory::Find(std::string_view name) {
  return const_cast<SessionNode*>(std::as_const(*this).Find(name));
}

std::vector<fuzzy::NodeHistory> SessionMemory::Baseline() const {
  std::vector<fuzzy::NodeHistory> baseline;
  for (const SessionNode& node : nodes) {
    if (node.baseline) baseline.push_back(*node.baseline);
  }
  return baseline;
}

bool NodeFaults::Released(const std::string& node) const {
  const auto it = nodes.find(node);
  return it != nodes.end() && it->second.released;
}

std::vector<std::string> NodeFaults::ReleasedNodes() const {
  std::vector<std::string> names;
  for (const auto& [name, fault] : nodes) {
    if (fault.released) names.push_back(name);
  }
  return names;
}

void NodeFaults::Prune() {
  std::erase_if(nodes, [](const auto& entry) { return entry.second == NodeFault{}; });
}

JobMemory MemoryFromStatus(api::WeightedJobStatus status) {
  JobMemory memory;
  memory.written.status = std::move(status);
  return memory;
}
}  // namespace ballast::controller
