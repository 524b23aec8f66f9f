#include "operator/controller/job_reconciler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <ctime>
#include <future>
#include <set>
#include <vector>

#include "common/json_read.h"
#include "fuzzy/model.h"
#include "fuzzy/profile.h"
#include "fuzzy/profile_json.h"
#include "job/job_spec.h"
#include "operator/controller/job_efficiency.h"
#include "operator/controller/job_status.h"
#include "operator/controller/node_selection.h"
#include "operator/controller/resources.h"
#include "operator/controller/weighted_job.h"
#include "operator/kube/kubeconfig.h"

namespace ballast::controller {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kNoNodesRetry{10000};
constexpr milliseconds kPodsLeavingRetry{500};
// How long a pod this operator created may take to show in the pod cache.
constexpr std::chrono::seconds kExpectCreated{30};

// Seconds since the epoch of an RFC 3339 UTC time ("2026-11-22T10:00:00Z");
// nullopt when it does not parse.
std::optional<double> ParseRfcTime(const std::string& text) {
  std::tm tm{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// True for the codes that retrying cannot help (common/status.h).
bool Permanent(const Status& status) {
  return status.code() == StatusCode::kInvalid || status.code() == StatusCode::kTerminal;
}

// `value` to three decimals, as status shows seconds and ratios.
double Rounded(double value) { return std::round(value * 1000) / 1000; }

bool OwnedBy(const json& object, const std::string& uid) {
  for (const auto& owner : object["metadata"].value("ownerReferences", json::array())) {
    if (owner.value("uid", "") == uid) return true;
  }
  return false;
}

bool Deleting(const json& object) { return object["metadata"].contains("deletionTimestamp"); }

std::string PodPhase(const json& pod) { return pod.value("/status/phase"_json_pointer, ""); }

// "exit code 3: <message>" of a failed pod's worker container, for events.
std::string PodFailure(const json& pod) {
  for (const auto& container : pod.value("/status/containerStatuses"_json_pointer, json::array())) {
    const json terminated = container.value("/state/terminated"_json_pointer, json::object());
    if (terminated.empty()) continue;
    std::string text = fmt::format("exit code {}", terminated.value("exitCode", -1));
    const std::string message = terminated.value("message", "");
    if (!message.empty()) text += ": " + message.substr(0, 300);
    return text;
  }
  return pod.value("/status/reason"_json_pointer, std::string("no container status"));
}

}  // namespace

// What a job's passes handed to the writer threads, shared with their tasks.
struct JobReconciler::Writes {
  std::mutex mu;
  bool creating = false;  // a Secret-and-pods task is queued or running
  // Pods a task created that the pod cache may not show yet, by name: not
  // created again meanwhile (up to kExpectCreated).
  std::map<std::string, Clock::time_point> created;
  bool secret_created = false;  // a task created the token Secret (or found this job's)
  std::optional<std::string> adopted_token;  // the Secret found holds another token
  Status create_error;                       // the last create task's failure
  json acked;                                // the status the API server has, as far as we know
  json wanted;                               // the newest status a pass handed over
  bool writing_status = false;               // a status task is queued or running
  Status status_error;                       // the last status task's failure
};

struct JobReconciler::WritePool {
  explicit WritePool(int threads) : pool(static_cast<size_t>(std::max(1, threads))) {}
  ~WritePool() { pool.join(); }  // runs what is queued
  boost::asio::thread_pool pool;
};

struct JobReconciler::JobState {
  std::string uid;
  std::string token;
  bool secret_pending = false;  // the Secret holding `token` is still to be created
  std::shared_ptr<Writes> writes = std::make_shared<Writes>();
  bool registered = false;         // the coordinator runs a session of this job
  std::vector<std::string> nodes;  // the session's workers, one per node
  fuzzy::WeightResult weights;
  std::map<std::string, double> declared_speeds;  // ballast.io/emulated-speed of its nodes
  std::map<std::string, uint64_t> base_items;     // items per node before this session
  std::set<std::string> lost_nodes;               // not Ready: worker lost, pod deleted
  std::set<std::string> counted_failures;         // uids of failed pods already counted
  uint32_t failures = 0;
  bool resumed = false;          // the session started from a checkpoint
  double registered_wall = 0;    // when the session started, seconds since the epoch
  json status;                   // as last written (or read at start)
  int64_t spec_generation = -1;  // of `spec`
  WeightedJobSpec spec;
  Clock::time_point last_write{};
  std::optional<Clock::time_point> done_at;
};

struct JobReconciler::Pass {
  Pass(std::string key_, std::string ns_, std::string name_, json job_, JobState& state_)
      : key(std::move(key_)),
        ns(std::move(ns_)),
        name(std::move(name_)),
        id(CoordinatorJobId(ns, name)),
        job(std::move(job_)),
        state(state_) {}

  std::string key, ns, name, id;
  json job;
  JobState& state;
  job::JobSpec spec;          // the parts `ballast run` shares
  WeightedJobSpec kube_spec;  // all of it
  json status;                // the status this pass wants
  int64_t generation = 0;
  std::string now;
  std::optional<coordinator::JobView> view;
  bool transition = false;  // phase or a condition moved: write at once
  std::string fail_reason;  // set by Register with an Invalid status
};

JobReconciler::JobReconciler(kube::KubeClient& client, coordinator::JobHost& coordinator,
                             Caches caches, EventRecorder& events, ReconcilerOptions options)
    : client_(client),
      coordinator_(coordinator),
      caches_(caches),
      events_(events),
      options_(std::move(options)),
      writers_(std::make_unique<WritePool>(options_.write_threads)) {}

JobReconciler::~JobReconciler() = default;

std::string JobReconciler::CoordinatorJobId(const std::string& ns, const std::string& name) {
  return ns + "." + name;
}

size_t JobReconciler::TrackedJobs() const {
  std::lock_guard lock(mu_);
  return states_.size();
}

JobReconciler::JobState& JobReconciler::StateFor(const std::string& key, const json& job) {
  const std::string uid = job["metadata"].value("uid", "");
  {
    std::lock_guard lock(mu_);
    auto it = states_.find(key);
    if (it != states_.end() && it->second->uid == uid) return *it->second;
  }
  Forget(key);  // a job of the same name was deleted and created again
  auto state = std::make_unique<JobState>();
  state->uid = uid;
  state->status = job.value("status", json::object());
  state->writes->acked = state->writes->wanted = state->status;
  state->failures = state->status.value("failedPods", 0u);
  std::lock_guard lock(mu_);
  return *(states_[key] = std::move(state));
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
  const auto slash = key.find('/');
  if (state->registered)
    coordinator_.RemoveJob(CoordinatorJobId(key.substr(0, slash), key.substr(slash + 1)));
}

StatusOr<ReconcileResult> JobReconciler::Reconcile(const std::string& key) {
  const auto cached = caches_.jobs.Get(key);
  if (!cached || Deleting(*cached)) {
    // The garbage collector deletes the pods and the Secret (owner references).
    Forget(key);
    return ReconcileResult{};
  }
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  JobState& state = StateFor(key, *cached);
  Pass pass(key, ns, name, *cached, state);
  pass.status = state.status;
  pass.generation = cached->value("/metadata/generation"_json_pointer, int64_t{0});
  pass.now = RfcTimeNow();
  pass.status["observedGeneration"] = pass.generation;
  try {
    return Run(pass);
  } catch (const std::exception& e) {
    // A malformed object from the API server (a field of an unexpected type).
    return Status::Invalid(fmt::format("{}: {}", key, e.what()));
  }
}

StatusOr<ReconcileResult> JobReconciler::Run(Pass& pass) {
  const Status written = TakeWriteResults(pass);
  if (!written.ok() && !pass.fail_reason.empty()) {
    return Fail(pass, pass.fail_reason, written.message());
  }
  BALLAST_RETURN_IF_ERROR(written);
  const std::string phase = pass.status.value("phase", "");
  if (phase == "Succeeded" || phase == "Failed") return AfterFinish(pass);

  // The spec changes only with the generation: parse it once per generation.
  if (pass.state.spec_generation != pass.generation) {
    ParsedSpec parsed = ParseWeightedJobSpec(pass.job.value("spec", json::object()), pass.name);
    if (!parsed.spec) return Fail(pass, parsed.error.reason, parsed.error.status.message());
    pass.state.spec = std::move(*parsed.spec);
    pass.state.spec_generation = pass.generation;
  }
  pass.spec = pass.state.spec.job;
  pass.kube_spec = pass.state.spec;
  pass.status["items"] = pass.spec.workload.items;

  const auto deadline = pass.spec.active_deadline_s;
  const auto started = ParseRfcTime(pass.status.value("startTime", ""));
  if (deadline && started && WallNow() - *started > *deadline) {
    BALLAST_RETURN_IF_ERROR(DeletePods(pass));
    return Fail(pass, "DeadlineExceeded",
                fmt::format("the job ran longer than activeDeadlineSeconds ({:.0f} s)", *deadline));
  }
  // The profile matters when the job is weighed, before it registers.
  std::optional<fuzzy::Profile> profile;
  if (!pass.state.registered) {
    auto resolved = ResolveProfile(pass);
    if (!resolved.ok()) return Fail(pass, pass.fail_reason, resolved.status().message());
    profile = std::move(*resolved);
  }
  const Status token = EnsureToken(pass);
  if (Permanent(token)) return Fail(pass, "TokenSecretUnusable", token.message());
  BALLAST_RETURN_IF_ERROR(token);
  if (pass.kube_spec.suspend) return Suspend(pass);

  if (!pass.state.registered) {
    const Status registered = Register(pass, *profile);
    if (registered.code() == StatusCode::kInvalid) {
      return Fail(pass, pass.fail_reason, registered.message());
    }
    if (registered.code() == StatusCode::kNotFound) {  // no node fits yet
      pass.status["phase"] = "Pending";
      pass.transition |=
          SetCondition(pass.status, {"Ready", false, "NoEligibleNodes", registered.message()},
                       pass.generation, pass.now);
      BALLAST_RETURN_IF_ERROR(WriteStatus(pass, false));
      return ReconcileResult{kNoNodesRetry};
    }
    BALLAST_RETURN_IF_ERROR(registered);
  }
  pass.view = coordinator_.View(pass.id);
  if (!pass.view) return Status::Unavailable("the coordinator lost job " + pass.id);
  BALLAST_RETURN_IF_ERROR(ManagePods(pass));
  BALLAST_RETURN_IF_ERROR(WriteStatus(pass, false));
  if (pass.status.value("phase", "") == "Failed") return AfterFinish(pass);
  if (pass.view->done) return AfterFinish(pass);
  milliseconds next = options_.status_interval;
  if (deadline && started) {
    const double left = *started + *deadline - WallNow();
    next = std::min(next, milliseconds(static_cast<int64_t>(std::max(0.0, left) * 1000) + 1));
  }
  return ReconcileResult{next};
}

Status JobReconciler::EnsureToken(Pass& pass) {
  JobState& state = pass.state;
  if (!state.token.empty()) return Status::Ok();
  if (!pass.status.contains("startTime")) {
    // A new job: its Secret goes to the API server with its pods.
    state.token = NewToken();
    state.secret_pending = true;
    return Status::Ok();
  }
  // A job that ran before this operator started: its workers read the
  // Secret's token, so take that one (or make the Secret, when it is gone).
  const std::string token = NewToken();
  BALLAST_ASSIGN_OR_RETURN(
      state.token,
      CreateOrReadSecret(pass.ns, BuildTokenSecret(pass.job, token), state.uid, token));
  return Status::Ok();
}

StatusOr<std::string> JobReconciler::CreateOrReadSecret(const std::string& ns, const json& secret,
                                                        const std::string& uid,
                                                        const std::string& token) {
  auto created = client_.Create(Secrets().In(ns), secret);
  if (created.ok()) return token;
  if (created.status().code() != StatusCode::kConflict) return created.status();
  const auto ref = Secrets().In(ns).Named(secret["metadata"]["name"]);
  auto existing = client_.Get(ref);
  BALLAST_RETURN_IF_ERROR(existing.status());
  if (!OwnedBy(*existing, uid)) {
    // An earlier job of this name left it and the garbage collector has not
    // come yet: delete it (that incarnation only) and make ours next time.
    kube::DeleteOptions options;
    options.precondition_uid = existing->at("metadata").value("uid", "");
    const Status deleted = client_.Delete(ref, options);
    if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
    return Status::Unavailable(fmt::format(
        "Secret {}/{} belonged to an earlier job of this name; deleted it", ns, ref.name));
  }
  auto stored = kube::DecodeBase64(existing->value("/data/token"_json_pointer, ""));
  if (!stored.ok() || stored->empty()) {
    return Status::Invalid(fmt::format("Secret {}/{} has no data.token", ns, ref.name));
  }
  return *stored;
}

Status JobReconciler::TakeWriteResults(Pass& pass) {
  JobState& state = pass.state;
  Status create_error;
  Status status_error;
  std::optional<std::string> adopted;
  {
    Writes& writes = *state.writes;
    std::lock_guard lock(writes.mu);
    if (writes.secret_created) state.secret_pending = false;
    adopted = std::exchange(writes.adopted_token, std::nullopt);
    create_error = std::exchange(writes.create_error, Status::Ok());
    status_error = std::exchange(writes.status_error, Status::Ok());
  }
  if (adopted && *adopted != state.token) {
    // An earlier operator made this job's Secret before it could record the
    // job's start: the workers read that token, so the session takes it.
    state.token = *adopted;
    if (state.registered) {
      coordinator_.RemoveJob(pass.id);
      state.registered = false;
    }
  }
  if (!status_error.ok()) {
    // Again, paced by the backoff of this failed pass; a write the API
    // server refuses (Invalid) is not retried by the driver.
    if (!Permanent(status_error)) SubmitStatus(pass);
    return status_error;
  }
  // The API server refused the job's pods or Secret as they are built from
  // its spec: trying again cannot help, the job fails.
  if (Permanent(create_error)) pass.fail_reason = "WorkerPodRefused";
  return create_error;
}

StatusOr<fuzzy::Profile> JobReconciler::ResolveProfile(Pass& pass) {
  const auto profile_object = caches_.profiles.Get(pass.spec.profile);
  if (!profile_object) {
    pass.fail_reason = "ProfileNotFound";
    return Status::Invalid(fmt::format(
        "WeightProfile '{}' does not exist (spec.profile); `kubectl get weightprofiles` lists "
        "those that do, and crds/profiles/ holds the shipped ones",
        pass.spec.profile));
  }
  auto profile = fuzzy::ProfileFromJson(*profile_object);
  if (!profile.ok()) {
    pass.fail_reason = "InvalidProfile";
    return Status::Invalid(fmt::format("WeightProfile '{}' is invalid: {}", pass.spec.profile,
                                       profile.status().message()));
  }
  return profile;
}

Status JobReconciler::Register(Pass& pass, const fuzzy::Profile& profile) {
  const json selector = pass.kube_spec.node_selector;
  const json& tolerations = pass.kube_spec.tolerations;
  std::vector<fuzzy::NodeFacts> facts;
  std::map<std::string, double> declared_speeds;  // of the nodes that declare one
  std::vector<std::string> excluded;
  for (const auto& node_object : caches_.nodes.List()) {
    const json& node = *node_object;
    const std::string why = Ineligibility(node, selector, tolerations);
    if (!why.empty()) {
      excluded.push_back(why);
      continue;
    }
    fuzzy::NodeFacts fact{node["metadata"]["name"], {}};
    if (auto speed = DeclaredSpeed(node)) declared_speeds[fact.name] = *speed;
    const json labels = node["metadata"].value("labels", json::object());
    for (const auto& [key, value] : labels.items()) {
      fact.labels[key] = value.get<std::string>();
    }
    facts.push_back(std::move(fact));
  }
  if (facts.empty()) {
    std::string message = "no node can run a worker";
    if (!excluded.empty()) message += ": " + fmt::format("{}", fmt::join(excluded, "; "));
    return Status::NotFound(message);
  }
  std::sort(facts.begin(), facts.end(), [](auto& a, auto& b) { return a.name < b.name; });
  pass.fail_reason = "InvalidProfile";
  BALLAST_ASSIGN_OR_RETURN(auto weights, fuzzy::ComputeWeights(profile, facts));
  for (const auto& warning : weights.warnings) {
    events_.Record(pass.job, true, "NodeLabelDefaulted", warning);
  }

  coordinator::JobConfig config;
  config.id = pass.id;
  config.token = pass.state.token;
  config.workload = pass.spec.workload;
  config.policy = pass.spec.policy;
  config.lease_seconds = pass.spec.lease_seconds;
  config.start_timeout_s = options_.start_timeout_s;
  for (const auto& node : weights.nodes) config.workers.push_back({node.name, node.weight});
  if (pass.status.contains("checkpoint")) {
    auto checkpoint =
        coordinator::CheckpointFromJson(pass.spec.workload.kind, pass.status["checkpoint"]);
    if (!checkpoint.ok()) {
      pass.fail_reason = "InvalidCheckpoint";
      return Status::Invalid("status.checkpoint cannot be resumed: " +
                             checkpoint.status().message());
    }
    config.resume = std::move(*checkpoint);
  }
  Status added = coordinator_.AddJob(config);
  if (added.code() == StatusCode::kConflict) {  // a session this state lost track of
    coordinator_.RemoveJob(pass.id);
    added = coordinator_.AddJob(config);
  }
  BALLAST_RETURN_IF_ERROR(added);

  JobState& state = pass.state;
  state.registered = true;
  state.resumed = config.resume.has_value();
  state.registered_wall = WallNow();
  state.done_at.reset();
  state.nodes.clear();
  for (const auto& node : weights.nodes) state.nodes.push_back(node.name);
  state.base_items.clear();
  for (const auto& row : pass.status.value("nodes", json::array())) {
    state.base_items[row.value("name", "")] = row.value("items", uint64_t{0});
  }
  state.weights = std::move(weights);
  state.declared_speeds = std::move(declared_speeds);
  if (!pass.status.contains("startTime")) pass.status["startTime"] = pass.now;

  std::vector<std::string> listed;
  for (const auto& node : state.weights.nodes) {
    listed.push_back(fmt::format("{} {:g}", node.name, node.weight));
  }
  const std::string message =
      state.resumed ? fmt::format("resumed from the checkpoint at {} of {} items; weights {}",
                                  config.resume->completed.size(), pass.spec.workload.items,
                                  fmt::join(listed, ", "))
                    : fmt::format("started on {} nodes with policy {}; weights {}", listed.size(),
                                  pass.spec.policy.name, fmt::join(listed, ", "));
  events_.Record(pass.job, false, state.resumed ? "Resumed" : "Started", message);
  return Status::Ok();
}

kube::ObjectPtr JobReconciler::PodOf(const Pass& pass, const std::string& node) const {
  return caches_.pods.Get(pass.ns + "/" + WorkerPodName(pass.name, node));
}

Status JobReconciler::ManagePods(Pass& pass) {
  JobState& state = pass.state;
  const coordinator::JobView& view = *pass.view;
  WorkerPodSettings settings = options_.pods;
  settings.coordinator_job = pass.id;
  int running = 0;
  int alive = 0;              // pods that may still compute (Pending or Running)
  std::vector<json> missing;  // pods to create
  bool creating = false;      // the last pods handed over are still being created
  // Pods created but not in the cache yet: on their way, not missing.
  std::set<std::string> on_its_way;
  {
    std::lock_guard lock(state.writes->mu);
    creating = state.writes->creating;
    auto& created = state.writes->created;
    for (auto it = created.begin(); it != created.end();) {
      const bool cached = caches_.pods.Get(pass.ns + "/" + it->first) != nullptr;
      if (cached || Clock::now() - it->second >= kExpectCreated) {
        it = created.erase(it);
      } else {
        on_its_way.insert((it++)->first);
      }
    }
  }
  for (const auto& node : state.nodes) {
    const auto pod = PodOf(pass, node);
    const auto node_object = caches_.nodes.Get(node);
    const bool owned = pod && OwnedBy(*pod, state.uid);
    if (!node_object || !NodeReady(*node_object)) {
      if (state.lost_nodes.insert(node).second && !view.done) {
        (void)coordinator_.WorkerLost(pass.id, node);
        events_.Record(pass.job, true, "NodeNotReady",
                       fmt::format("node {} is not Ready; its unfinished items go to the other "
                                   "workers",
                                   node));
      }
      if (owned && !Deleting(*pod)) {
        Status deleted = client_.Delete(Pods().In(pass.ns).Named(pod->at("metadata").at("name")));
        if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
      }
      continue;
    }
    if (state.lost_nodes.erase(node) && !view.done) {
      events_.Record(pass.job, false, "NodeReady",
                     fmt::format("node {} is Ready again; its worker starts again", node));
    }
    if (!pod) {
      if (view.done || state.failures > pass.spec.backoff_limit) continue;
      if (!creating && !on_its_way.contains(WorkerPodName(pass.name, node))) {
        missing.push_back(BuildWorkerPod(pass.job, node, settings));
      }
      ++alive;
      continue;
    }
    if (!owned) continue;  // an earlier job's pod of this name, on its way out
    const std::string phase = PodPhase(*pod);
    if (phase == "Running") ++running;
    if ((phase == "Running" || phase == "Pending") && !Deleting(*pod)) ++alive;
    const bool failed = phase == "Failed" || (phase == "Succeeded" && !view.done);
    if (!failed) continue;
    const std::string uid = pod->at("metadata").value("uid", "");
    if (state.counted_failures.insert(uid).second) {
      ++state.failures;
      (void)coordinator_.WorkerLost(pass.id, node);
      const bool replace = state.failures <= pass.spec.backoff_limit;
      events_.Record(
          pass.job, true, "WorkerFailed",
          fmt::format("pod {} on {} failed ({}); failure {} of backoffLimit {}{}",
                      pod->at("metadata").value("name", ""), node, PodFailure(*pod), state.failures,
                      pass.spec.backoff_limit, replace ? ", replacing it" : ", not replaced"));
    }
    if (!Deleting(*pod)) {
      kube::DeleteOptions options;
      options.precondition_uid = uid;
      Status deleted =
          client_.Delete(Pods().In(pass.ns).Named(pod->at("metadata").at("name")), options);
      if (!deleted.ok() && deleted.code() != StatusCode::kNotFound &&
          deleted.code() != StatusCode::kConflict) {
        return deleted;
      }
    }
  }

  if (!missing.empty()) SubmitCreates(pass, std::move(missing));

  // The status this pass wants.
  json& status = pass.status;
  status["failedPods"] = state.failures;
  status["workers"] = running;
  const uint64_t completed = view.completed;
  status["completedItems"] = completed;
  status["progress"] = ProgressText(completed, view.items);
  status["result"] = view.result.ToJson();
  json rows = json::array();
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const auto& worker = view.workers[i];
    const auto& weight = state.weights.nodes[i];
    rows.push_back(
        {{"name", worker.name},
         {"weight", weight.weight},
         {"score", std::round(weight.score * 1e4) / 1e4},
         {"estimatedSpeed",
          worker.busy_s > 0 ? std::round(worker.items / worker.busy_s * 100) / 100 : 0.0},
         {"items", state.base_items[worker.name] + worker.items},
         {"steals", worker.cuts},
         {"pod", WorkerPodName(pass.name, worker.name)}});
  }
  status["nodes"] = rows;

  if (view.done) {
    if (!state.done_at) state.done_at = Clock::now();
    double makespan = view.finished_at - view.started_at;
    if (state.resumed) {
      const auto started = ParseRfcTime(status.value("startTime", ""));
      if (started) makespan += state.registered_wall - *started;
    }
    const EfficiencyFigures figures = ComputeEfficiency(view, makespan, state.declared_speeds);
    status["completionTime"] = pass.now;
    status["makespanSeconds"] = Rounded(makespan);
    status["idealSeconds"] = Rounded(figures.ideal_s);
    status["efficiency"] = Rounded(figures.efficiency);
    std::string nominal;
    if (figures.nominal_efficiency) {
      status["nominalIdealSeconds"] = Rounded(*figures.nominal_ideal_s);
      status["nominalEfficiency"] = Rounded(*figures.nominal_efficiency);
      nominal = fmt::format(", nominal {:.3f}", *figures.nominal_efficiency);
    }
    status["workers"] = 0;
    status.erase("checkpoint");  // the result is final
    Transition(pass, "Succeeded", false, "Completed",
               fmt::format("all {} items finished in {:.1f} s on {} nodes (efficiency {:.3f}{})",
                           view.items, makespan, view.workers.size(),
                           status["efficiency"].get<double>(), nominal));
    SetCondition(status, {"Complete", true, "AllItemsFinished", "every item's result is merged"},
                 pass.generation, pass.now);
    return Status::Ok();
  }
  if (state.failures > pass.spec.backoff_limit && alive == 0) {
    if (auto checkpoint = coordinator_.TakeCheckpoint(pass.id)) {
      status["checkpoint"] = coordinator::CheckpointToJson(*checkpoint);
    }
    Transition(pass, "Failed", true, "BackoffLimitExceeded",
               fmt::format("{} worker pods failed (backoffLimit {}) and none is left",
                           state.failures, pass.spec.backoff_limit));
    SetCondition(status, {"Failed", true, "BackoffLimitExceeded", "worker pods failed"},
                 pass.generation, pass.now);
    return Status::Ok();
  }
  const auto checkpoint = coordinator_.TakeCheckpoint(pass.id);
  if (checkpoint) status["checkpoint"] = coordinator::CheckpointToJson(*checkpoint);
  const std::string workers = fmt::format("{} of {} workers running", running, state.nodes.size());
  Transition(pass, running > 0 ? "Running" : "Pending", false,
             running > 0 ? "WorkersRunning" : "WaitingForWorkers", workers);
  pass.transition |=
      SetCondition(status, {"Suspended", false, "NotSuspended", "spec.suspend is false"},
                   pass.generation, pass.now);
  return Status::Ok();
}

Status JobReconciler::CreatePods(const std::string& ns, const std::vector<json>& pods) {
  // A few at a time, each on its own connection: a new job's pods cost one
  // round trip to the API server, not one per node.
  constexpr size_t kAtOnce = 8;
  Status first_error = Status::Ok();
  for (size_t begin = 0; begin < pods.size(); begin += kAtOnce) {
    std::vector<std::future<Status>> creates;
    for (size_t i = begin; i < std::min(pods.size(), begin + kAtOnce); ++i) {
      creates.push_back(std::async(std::launch::async, [&, i] {
        auto created = client_.Create(Pods().In(ns), pods[i]);
        // Conflict: the pod exists and the cache has not seen it yet.
        if (created.ok() || created.status().code() == StatusCode::kConflict) return Status::Ok();
        return created.status();
      }));
    }
    for (auto& create : creates) {
      const Status status = create.get();
      if (first_error.ok() && !status.ok()) first_error = status;
    }
  }
  return first_error;
}

void JobReconciler::SubmitCreates(Pass& pass, std::vector<json> pods) {
  std::optional<json> secret;
  if (pass.state.secret_pending) secret = BuildTokenSecret(pass.job, pass.state.token);
  std::shared_ptr<Writes> writes = pass.state.writes;
  {
    std::lock_guard lock(writes->mu);
    writes->creating = true;
  }
  boost::asio::post(writers_->pool,
                    [this, writes, key = pass.key, ns = pass.ns, uid = pass.state.uid,
                     token = pass.state.token, secret = std::move(secret), pods = std::move(pods)] {
                      RunCreates(key, ns, uid, token, secret, pods, *writes);
                    });
}

void JobReconciler::RunCreates(const std::string& key, const std::string& ns,
                               const std::string& uid, const std::string& token,
                               const std::optional<json>& secret, const std::vector<json>& pods,
                               Writes& writes) {
  Status status = Status::Ok();
  std::optional<std::string> adopted;
  if (secret) {
    auto in_effect = CreateOrReadSecret(ns, *secret, uid, token);
    status = in_effect.status();
    if (in_effect.ok() && *in_effect != token) adopted = *in_effect;
  }
  const bool secret_made = secret && status.ok();
  // The pods only once their Secret exists (a worker started without it
  // fails), and only once the session holds the Secret's token: with another
  // one the next pass registers the session again first, then makes them.
  const bool create_pods = status.ok() && !adopted;
  if (create_pods) status = CreatePods(ns, pods);
  {
    std::lock_guard lock(writes.mu);
    writes.creating = false;
    writes.secret_created |= secret_made;
    if (adopted) writes.adopted_token = adopted;
    if (create_pods && status.ok()) {
      const auto now = Clock::now();
      for (const auto& pod : pods) writes.created[pod["metadata"]["name"]] = now;
    } else {
      writes.create_error = status;
    }
  }
  // Created pods come back through the pod cache, which queues the job; a
  // failure, or a token taken over, needs a pass of its own.
  if ((!status.ok() || adopted) && options_.requeue) options_.requeue(key);
}

// Sets the phase and the Ready / Progressing conditions that go with it, and
// posts an Event when the phase changes.
void JobReconciler::Transition(Pass& pass, const std::string& phase, bool warning,
                               const std::string& reason, const std::string& message) {
  json& status = pass.status;
  const bool changed = status.value("phase", "") != phase;
  status["phase"] = phase;
  const bool running = phase == "Running";
  const bool progressing = running || phase == "Pending";
  bool moved = SetCondition(status, {"Ready", running, reason, message}, pass.generation, pass.now);
  moved |= SetCondition(status, {"Progressing", progressing, reason, message}, pass.generation,
                        pass.now);
  pass.transition |= changed || moved;
  if (changed) events_.Record(pass.job, warning, reason, message);
}

StatusOr<ReconcileResult> JobReconciler::Fail(Pass& pass, const std::string& reason,
                                              const std::string& message) {
  if (pass.state.registered) {
    if (auto checkpoint = coordinator_.TakeCheckpoint(pass.id)) {
      pass.status["checkpoint"] = coordinator::CheckpointToJson(*checkpoint);
    }
  }
  pass.status["completionTime"] = pass.now;
  pass.status["workers"] = 0;
  Transition(pass, "Failed", true, reason, message);
  SetCondition(pass.status, {"Failed", true, reason, message}, pass.generation, pass.now);
  BALLAST_RETURN_IF_ERROR(WriteStatus(pass, true));
  return AfterFinish(pass);
}

StatusOr<ReconcileResult> JobReconciler::AfterFinish(Pass& pass) {
  JobState& state = pass.state;
  const bool failed = pass.status.value("phase", "") == "Failed";
  if (failed) BALLAST_RETURN_IF_ERROR(DeletePods(pass));
  if (state.registered) {
    // A finished job stays registered while its workers hear "done" and exit.
    bool pods_running = false;
    for (const auto& pod : caches_.pods.ListIndexed(pass.ns, pass.name)) {
      if (!OwnedBy(*pod, state.uid)) continue;
      const std::string phase = PodPhase(*pod);
      pods_running |= phase == "Running" || phase == "Pending";
    }
    const bool lingered = state.done_at && Clock::now() - *state.done_at > options_.linger;
    if (failed || !pods_running || lingered) {
      coordinator_.RemoveJob(pass.id);
      state.registered = false;
    } else {
      return ReconcileResult{kPodsLeavingRetry};
    }
  }
  // Read on its own: a job whose spec failed to parse may still have a TTL.
  const json* ttl_field =
      json_read::Find(pass.job.value("spec", json::object()), "ttlSecondsAfterFinished");
  if (!ttl_field) return ReconcileResult{};
  const auto ttl = json_read::Int(*ttl_field, "spec.ttlSecondsAfterFinished", 0, INT32_MAX);
  if (!ttl.ok()) return ReconcileResult{};  // the API server's schema refuses it already
  const auto finished = ParseRfcTime(pass.status.value("completionTime", ""));
  if (!finished) return ReconcileResult{};
  const double left = *finished + static_cast<double>(*ttl) - WallNow();
  if (left > 0) return ReconcileResult{milliseconds(static_cast<int64_t>(left * 1000) + 1)};
  {
    // The final status first: whoever watches the job sees it finish.
    std::lock_guard lock(state.writes->mu);
    if (state.writes->wanted != state.writes->acked) return ReconcileResult{kPodsLeavingRetry};
  }
  kube::DeleteOptions options;
  options.propagation_policy = "Background";
  options.precondition_uid = state.uid;
  Status deleted = client_.Delete(WeightedJobs().In(pass.ns).Named(pass.name), options);
  if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
  spdlog::info("deleted finished job job={} ttlSecondsAfterFinished={}", pass.key, *ttl);
  return ReconcileResult{};
}

StatusOr<ReconcileResult> JobReconciler::Suspend(Pass& pass) {
  JobState& state = pass.state;
  BALLAST_RETURN_IF_ERROR(DeletePods(pass));
  bool pods_left = false;
  for (const auto& pod : caches_.pods.ListIndexed(pass.ns, pass.name)) {
    pods_left |= OwnedBy(*pod, state.uid);
  }
  if (state.registered) {
    // Workers hand back their leases as they stop; save what they finished
    // once they are gone.
    if (pods_left) return ReconcileResult{kPodsLeavingRetry};
    const auto checkpoint = coordinator_.TakeCheckpoint(pass.id);
    if (checkpoint) {
      pass.status["checkpoint"] = coordinator::CheckpointToJson(*checkpoint);
      pass.status["completedItems"] = checkpoint->completed.size();
      pass.status["progress"] =
          ProgressText(checkpoint->completed.size(), pass.spec.workload.items);
      pass.status["result"] = checkpoint->result.ToJson();
    }
    coordinator_.RemoveJob(pass.id);
    state.registered = false;
  }
  pass.status["workers"] = 0;
  const std::string message =
      fmt::format("spec.suspend is true; {} of {} items kept",
                  pass.status.value("completedItems", uint64_t{0}), pass.spec.workload.items);
  Transition(pass, "Suspended", false, "Suspended", message);
  pass.transition |= SetCondition(pass.status, {"Suspended", true, "SuspendedByUser", message},
                                  pass.generation, pass.now);
  BALLAST_RETURN_IF_ERROR(WriteStatus(pass, false));
  return ReconcileResult{pods_left ? std::optional(kPodsLeavingRetry) : std::nullopt};
}

Status JobReconciler::DeletePods(Pass& pass) {
  for (const auto& pod : caches_.pods.ListIndexed(pass.ns, pass.name)) {
    if (!OwnedBy(*pod, pass.state.uid) || Deleting(*pod)) continue;
    if (PodPhase(*pod) == "Succeeded") continue;  // finished workers stay, as a Job's pods do
    Status deleted = client_.Delete(Pods().In(pass.ns).Named(pod->at("metadata").at("name")));
    if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
  }
  return Status::Ok();
}

Status JobReconciler::WriteStatus(Pass& pass, bool force) {
  JobState& state = pass.state;
  if (state.status == pass.status) return Status::Ok();
  const bool due = Clock::now() - state.last_write >= options_.status_interval;
  if (!force && !pass.transition && !due) return Status::Ok();
  state.status = pass.status;
  state.last_write = Clock::now();
  SubmitStatus(pass);
  return Status::Ok();
}

void JobReconciler::SubmitStatus(Pass& pass) {
  std::shared_ptr<Writes> writes = pass.state.writes;
  {
    std::lock_guard lock(writes->mu);
    writes->wanted = pass.state.status;
    if (writes->writing_status || writes->wanted == writes->acked) return;
    writes->writing_status = true;
  }
  boost::asio::post(writers_->pool, [this, writes, key = pass.key,
                                     ref = WeightedJobs().In(pass.ns).Named(pass.name)] {
    WriteStatuses(key, ref, writes);
  });
}

void JobReconciler::WriteStatuses(const std::string& key, const kube::ResourceRef& ref,
                                  std::shared_ptr<Writes> writes) {
  // Until the API server has the newest status handed over: a pass that
  // hands one over while this writes the one before finds this task running.
  while (true) {
    json acked;
    json wanted;
    {
      std::lock_guard lock(writes->mu);
      if (writes->wanted == writes->acked) {
        writes->writing_status = false;
        return;
      }
      acked = writes->acked;
      wanted = writes->wanted;
    }
    auto written = client_.PatchStatus(ref, {{"status", StatusPatch(acked, wanted)}});
    std::lock_guard lock(writes->mu);
    if (written.ok()) {
      writes->acked = std::move(wanted);
      continue;
    }
    writes->writing_status = false;
    if (written.status().code() == StatusCode::kNotFound) {  // deleted meanwhile
      writes->acked = writes->wanted;
      return;
    }
    writes->status_error = written.status();
    break;
  }
  if (options_.requeue) options_.requeue(key);
}

}  // namespace ballast::controller
