#include "operator/runtime/job_reconciler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <limits>
#include <set>

#include "core/common/json_read.h"
#include "core/job/job_json.h"
#include "core/workload/workload.h"
#include "operator/api/kueue_views.h"
#include "operator/api/labels.h"
#include "operator/api/weighted_job.h"
#include "operator/runtime/resources.h"

namespace ballast::runtime {

using nlohmann::json;

namespace {

// The time of a pass in the forms Decide uses.
controller::PassTime Now() {
  controller::PassTime now;
  now.wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  now.steady = std::chrono::steady_clock::now();
  now.rfc3339 = RfcTimeNow();
  return now;
}

bool Permanent(const Status& status) {
  return status.code() == StatusCode::kInvalid || status.code() == StatusCode::kTerminal;
}

}  // namespace

// What the reconciler keeps of a job between passes.
struct JobReconciler::JobState {
  std::string uid;
  controller::JobMemory memory;
  int64_t spec_generation = -1;  // of `spec`
  api::ParsedSpec spec;
};

JobReconciler::JobReconciler(kube::KubeClient& client, coordinator::JobHost& coordinator,
                             Caches caches, EventRecorder& events, ReconcilerOptions options)
    : client_(client),
      coordinator_(coordinator),
      caches_(caches),
      options_(std::move(options)),
      executor_(client, coordinator, events, options_.write_threads, options_.requeue) {}

JobReconciler::~JobReconciler() = default;

std::string JobReconciler::CoordinatorJobId(const std::string& ns, const std::string& name) {
  return ::ballast::api::CoordinatorJobId(ns, name);
}

std::string JobReconciler::KeyOfCoordinatorJobId(const std::string& id) {
  std::string key = id;
  if (const size_t dot = key.find('.'); dot != std::string::npos) key[dot] = '/';
  return key;
}

size_t JobReconciler::TrackedJobs() const {
  std::lock_guard lock(mu_);
  return states_.size();
}

StatusOr<JobReconciler::JobState*> JobReconciler::StateFor(const std::string& key, const json& job,
                                                           const std::string& uid) {
  {
    std::lock_guard lock(mu_);
    auto it = states_.find(key);
    if (it != states_.end() && it->second->uid == uid) return it->second.get();
  }
  Forget(key);  // a job of the same name was deleted and created again
  // What an earlier pass (or operator) wrote: the checkpoint, failures, start.
  const json& written = json_read::At(job, "status");
  const json stored = written.is_null() ? json::object() : written;
  auto status = api::StatusFromJson(stored);
  if (!status.ok()) {
    return Status::Invalid(fmt::format("{}: {}", key, status.status().message()));
  }
  auto state = std::make_unique<JobState>();
  state->uid = uid;
  state->memory = controller::MemoryFromStatus(std::move(*status));
  executor_.Seed(key, stored);
  std::lock_guard lock(mu_);
  return (states_[key] = std::move(state)).get();
}

void JobReconciler::Forget(const std::string& key) {
  std::unique_ptr<JobState> state;
  {
    std::lock_guard lock(mu_);
    auto it = states_.find(key);
    if (it == states_.end()) return;
    state = std::move(it->second);
    states_.erase(it);
  }
  executor_.Forget(key);
  const auto slash = key.find('/');
  // Whatever session of it the coordinator runs (none: nothing to remove).
  coordinator_.RemoveJob(CoordinatorJobId(key.substr(0, slash), key.substr(slash + 1)));
}

StatusOr<ReconcileResult> JobReconciler::Reconcile(const std::string& key, bool flush_status) {
  const auto cached = caches_.jobs.Get(key);
  const api::JobView view = cached ? api::ReadJob(*cached) : api::JobView{};
  if (!cached || view.meta.deleting) {
    // The garbage collector deletes the pods and the Secret (owner references).
    Forget(key);
    return ReconcileResult{};
  }
  try {
    BALLAST_ASSIGN_OR_RETURN(JobState * state, StateFor(key, *cached, view.meta.uid));
    return RunPass(key, *cached, view, *state, flush_status);
  } catch (const std::exception& e) {
    // A malformed object from the API server (a field of an unexpected type).
    return Status::Invalid(fmt::format("{}: {}", key, e.what()));
  }
}

void JobReconciler::GatherWorld(const JobState& state, controller::DecideInput& input) const {
  for (const auto& pod : caches_.pods.ListIndexed(input.ns, input.name)) {
    input.pods.push_back(api::ReadPod(*pod));
  }
  for (const auto& node : caches_.nodes.List()) input.nodes.push_back(api::ReadNode(*node));
  if (state.spec.spec) {
    if (auto profile = caches_.profiles.Get(state.spec.spec->job.profile)) input.profile = *profile;
  }
  input.view = coordinator_.View(input.id);  // nullopt: no session
  if (input.view) {
    input.checkpoint = coordinator_.TakeCheckpoint(input.id);
    // Each pass of a running job samples which of its nodes another job's
    // workers share, for what it records as history (coordinator/
    // recorded_speeds.h); the next pass's view has the sample.
    if (!input.view->done) coordinator_.SampleSharing(input.id);
  }
}

Status JobReconciler::GatherQueue(const JobState& state, controller::DecideInput& input) const {
  if (!options_.kueue || !caches_.workloads || !caches_.flavors) return Status::Ok();
  const auto label = input.job.meta.labels.find(std::string(api::kQueueNameLabel));
  if (label == input.job.meta.labels.end()) return Status::Ok();
  controller::QueueInput queue;
  queue.queue = label->second;
  const std::string name = controller::WorkloadName(input.name, state.uid);
  for (const auto& object : caches_.workloads->ListIndexed(input.ns, input.name)) {
    api::WorkloadView workload = api::ReadWorkload(*object);
    if (workload.meta.name == name) queue.workload = std::move(workload);
  }
  if (queue.workload) {
    for (const std::string& flavor : queue.workload->flavors) {
      if (auto object = caches_.flavors->Get(flavor))
        queue.flavors.push_back(api::ReadFlavor(*object));
    }
  } else if (const auto priority =
                 input.job.meta.labels.find(std::string(api::kPriorityClassLabel));
             priority != input.job.meta.labels.end()) {
    queue.priority_class = priority->second;
    auto object = client_.Get(WorkloadPriorityClasses().Named(priority->second));
    if (object.ok()) {
      const auto value = json_read::IntegerAt(*object, "value", std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::max());
      if (value) queue.priority = static_cast<int32_t>(*value);
    } else if (object.status().code() != StatusCode::kNotFound) {
      return object.status();
    }
  }
  input.queue = std::move(queue);
  return Status::Ok();
}

void JobReconciler::LookUpHistory(const JobState& state, controller::DecideInput& input) const {
  if (!options_.history || !state.spec.spec || input.view) return;
  if (state.memory.written.status.Finished() || state.spec.spec->suspend || !input.profile) {
    return;
  }
  // A queued job starts only once admitted: its history is read then.
  if (input.queue && (!input.queue->workload || !input.queue->workload->Admitted())) return;
  std::vector<std::string> nodes;
  for (const api::NodeView& node : input.nodes) nodes.push_back(node.meta.name);
  input.history =
      options_.history->Lookup(api::HistoryKey(*state.spec.spec), nodes, input.now.wall);
  if (!input.history->trouble.empty()) {
    spdlog::info("no history job={}/{} source=\"{}\" error=\"{}\"", input.ns, input.name,
                 input.history->origin, input.history->trouble);
  }
}

void JobReconciler::RecordHistory(const std::string& key,
                                  const std::vector<controller::Action>& actions) const {
  if (!options_.history) return;
  for (const auto& action : actions) {
    const auto* record = std::get_if<controller::RecordSpeeds>(&action);
    if (!record) continue;
    const coordinator::RecordedSpeeds& kept = record->recorded;
    // A job with fewer than two nodes left records nothing (history_source.h).
    if (!kept.shared.empty() || !kept.brief.empty() || kept.speeds.empty()) {
      spdlog::info(
          "speeds not recorded job={} shared_with_other_jobs={} measured_under_{}s={} "
          "recorded={}",
          key, fmt::join(kept.shared, ","), history::kMinRecordedBusySeconds,
          fmt::join(kept.brief, ","), kept.speeds.size());
    }
    if (kept.speeds.empty()) continue;
    if (!record->winsorized.empty()) {
      spdlog::info("speeds recorded at the edge of their band job={} below_baseline={}", key,
                   fmt::join(record->winsorized, ","));
    }
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const Status recorded = options_.history->Record(record->history_key, kept.speeds, now);
    // The job has succeeded either way; its speeds are only lost to the next.
    if (!recorded.ok()) {
      spdlog::info("speeds not recorded job={} error=\"{}\"", key, recorded.ToString());
    }
  }
}

Status JobReconciler::ReadListedItems(const std::string& ns, JobState& state,
                                      controller::DecideInput& input) {
  if (!state.spec.spec || !state.spec.spec->job.item_source.pending()) return Status::Ok();
  job::JobSpec& job = state.spec.spec->job;
  if (job.item_source.config_map.empty()) {
    state.spec.error = {api::Reason::kInvalidSpec,
                        Status::InvalidAt("spec.itemsFrom.file",
                                          "a file is read by `ballast run`; on Kubernetes give "
                                          "spec.itemsFrom.configMap (kubectl create configmap "
                                          "NAME --from-file=FILE)")};
    state.spec.spec.reset();
    return Status::Ok();
  }
  const kube::ResourceRef ref{"", "v1", "configmaps", true, ns, job.item_source.config_map};
  const std::string where =
      fmt::format("ConfigMap {}/{} key {}", ns, job.item_source.config_map, job.item_source.key);
  auto invalid = [&](const std::string& message) {
    state.spec.error = {api::Reason::kInvalidSpec,
                        Status::InvalidAt("spec.itemsFrom.configMap", message)};
    state.spec.spec.reset();
    return Status::Ok();
  };
  // A ConfigMap or key that is not there yet may come (later in the same
  // apply): Decide waits for it, up to its bound.
  auto config_map = client_.Get(ref);
  if (config_map.status().code() == StatusCode::kNotFound) {
    input.items_missing =
        fmt::format("ConfigMap {}/{} does not exist", ns, job.item_source.config_map);
    return Status::Ok();
  }
  BALLAST_RETURN_IF_ERROR(config_map.status());
  const json* data = json_read::Find(*config_map, "data");
  const json* text = data != nullptr ? json_read::Find(*data, job.item_source.key) : nullptr;
  if (text == nullptr || !text->is_string()) {
    input.items_missing = fmt::format("{} does not exist (binaryData is not read)", where);
    return Status::Ok();
  }
  if (Status resolved = job::ResolveItems(&job, text->get_ref<const std::string&>(), where);
      !resolved.ok()) {
    return invalid(resolved.message());
  }
  return Status::Ok();
}

Status JobReconciler::ReadToken(const std::string& key, const JobState& state,
                                controller::DecideInput& input) {
  const controller::JobMemory& memory = state.memory;
  if (!memory.token.value.empty() || !memory.written.status.start_time ||
      memory.written.status.Finished()) {
    return Status::Ok();
  }
  // A job that ran before this operator started: its workers read the
  // Secret's token, so take that one (or make the Secret, when it is gone).
  const std::string token = controller::NewToken();
  auto in_effect = executor_.CreateOrReadSecret(
      key, input.ns, controller::BuildTokenSecret(input.job.meta, token), state.uid, token);
  if (in_effect.ok()) {
    input.secret_token = *in_effect;
  } else if (Permanent(in_effect.status())) {
    input.refusal_reason = api::Reason::kTokenSecretUnusable;
    input.refusal = in_effect.status().message();
  } else {
    return in_effect.status();
  }
  return Status::Ok();
}

Status JobReconciler::GatherWrites(const std::string& key, controller::DecideInput& input) {
  std::set<std::string> cached_pods;
  for (const auto& pod : caches_.pods.ListIndexed(input.ns, input.name)) {
    cached_pods.insert(api::ReadMeta(*pod).name);
  }
  Collected collected = executor_.Collect(key, cached_pods, input.now.steady);
  input.writes = collected.writes;
  BALLAST_RETURN_IF_ERROR(collected.status_error);
  if (!collected.create_error.ok()) {
    // Decide backs off, waits or fails the job (create_refusals.h); not an
    // error of the pass, which the work queue would retry at once.
    input.create_refusal = controller::ClassifyCreateRefusal(collected.create_error);
    spdlog::info("create refused job={} reason={} error=\"{}\"", key,
                 api::ReasonName(controller::RefusalReason(input.create_refusal->kind)),
                 input.create_refusal->message);
  }
  return Status::Ok();
}

StatusOr<ReconcileResult> JobReconciler::RunPass(const std::string& key, const json& job,
                                                 const api::JobView& view, JobState& state,
                                                 bool flush_status) {
  controller::DecideInput input;
  input.ns = key.substr(0, key.find('/'));
  input.name = key.substr(key.find('/') + 1);
  input.id = CoordinatorJobId(input.ns, input.name);
  input.job = view;
  input.now = Now();
  // The spec changes only with the generation: parse it once per generation.
  if (state.spec_generation != view.generation) {
    state.spec = api::ParseWeightedJobSpec(json_read::At(job, "spec"), input.name);
    state.spec_generation = view.generation;
  }
  input.spec = &state.spec;
  if (controller::NeedsAccept(state.memory)) {
    // Pending at once: the slow work (item lists, history) waits for the next pass.
    controller::Decision decision = controller::Accept(input, state.memory);
    state.memory = std::move(decision.memory);
    const JobRef ref{key, input.ns, input.name, state.uid, input.id, &job};
    BALLAST_RETURN_IF_ERROR(executor_.Execute(ref, decision.actions));
    return ReconcileResult{decision.requeue_after};
  }
  BALLAST_RETURN_IF_ERROR(ReadListedItems(input.ns, state, input));
  BALLAST_RETURN_IF_ERROR(GatherWrites(key, input));
  if (state.spec.spec) BALLAST_RETURN_IF_ERROR(ReadToken(key, state, input));
  input.fresh_token = state.memory.token.value.empty() ? controller::NewToken() : "";
  input.flush_status = flush_status;
  GatherWorld(state, input);
  BALLAST_RETURN_IF_ERROR(GatherQueue(state, input));
  LookUpHistory(state, input);

  controller::Decision decision = controller::Decide(input, state.memory, options_.decide);
  state.memory = std::move(decision.memory);
  const JobRef ref{key, input.ns, input.name, state.uid, input.id, &job};
  // A registration that failed leaves no session at the coordinator: the
  // next pass's Decide, seeing no view, registers it again.
  RecordHistory(key, decision.actions);
  if (Status executed = executor_.Execute(ref, decision.actions); !executed.ok()) {
    // A Workload status patch that did not land is made again next pass.
    state.memory.kueue.patched_version.clear();
    return executed;
  }
  return ReconcileResult{decision.requeue_after};
}

}  // namespace ballast::runtime
