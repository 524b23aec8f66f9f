#include "operator/runtime/executor.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <optional>

#include "core/common/json_read.h"
#include "net/kube/kubeconfig.h"
#include "operator/api/job_status.h"
#include "operator/api/kube_views.h"
#include "operator/runtime/resources.h"

namespace ballast::runtime {

using nlohmann::json;

namespace {

// How long a pod this operator created may take to show in the pod cache.
constexpr std::chrono::seconds kExpectCreated{30};

}  // namespace

// What a job's passes handed to the writer threads, shared with their tasks.
struct Executor::Writes {
  std::mutex mu;
  bool creating = false;  // a Secret-and-pods task is queued or running
  // Pods a task created that the pod cache may not show yet, by name.
  std::map<std::string, controller::SteadyTime> created;
  bool secret_exists = false;                // the token Secret was made or found (kept)
  std::optional<std::string> adopted_token;  // the Secret found holds another token
  bool workload_requested = false;           // a CreateWorkload was carried out (kept)
  bool pods_created = false;                 // a task made every pod it was given
  Status create_error;                       // the last create task's failure
  json acked;                                // the status the API server has, as far as we know
  json wanted;                               // the newest status a pass handed over
  bool writing_status = false;               // a status task is queued or running
  Status status_error;                       // the last status task's failure
  std::string ns, name;                      // of the job, for handing a status again
};

struct Executor::Pool {
  explicit Pool(int threads) : pool(static_cast<size_t>(std::max(1, threads))) {}
  ~Pool() { pool.join(); }  // runs what is queued
  boost::asio::thread_pool pool;
};

Executor::Executor(kube::KubeClient& client, coordinator::JobHost& coordinator,
                   EventRecorder& events, int write_threads,
                   std::function<void(const std::string&)> requeue)
    : client_(client),
      coordinator_(coordinator),
      events_(events),
      requeue_(std::move(requeue)),
      pool_(std::make_unique<Pool>(write_threads)) {}

Executor::~Executor() = default;

std::shared_ptr<Executor::Writes> Executor::WritesOf(const std::string& key) {
  std::lock_guard lock(mu_);
  auto& writes = writes_[key];
  if (!writes) writes = std::make_shared<Writes>();
  return writes;
}

void Executor::Seed(const std::string& key, const json& status) {
  auto writes = WritesOf(key);
  std::lock_guard lock(writes->mu);
  writes->acked = writes->wanted = status;
}

void Executor::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  writes_.erase(key);  // tasks in flight keep their Writes alive until they end
}

Collected Executor::Collect(const std::string& key, const std::set<std::string>& cached_pods,
                            controller::SteadyTime now) {
  auto writes = WritesOf(key);
  Collected out;
  bool hand_again = false;
  std::string ns, name;
  json wanted;
  {
    std::lock_guard lock(writes->mu);
    out.writes.creating = writes->creating;
    for (auto it = writes->created.begin(); it != writes->created.end();) {
      if (cached_pods.contains(it->first) || now - it->second >= kExpectCreated) {
        it = writes->created.erase(it);
      } else {
        out.writes.on_their_way.insert((it++)->first);
      }
    }
    out.writes.secret_exists = writes->secret_exists;
    out.writes.workload_requested = writes->workload_requested;
    out.writes.adopted_token = std::exchange(writes->adopted_token, std::nullopt);
    out.writes.pods_created = std::exchange(writes->pods_created, false);
    out.writes.status_written = !writes->writing_status && writes->wanted == writes->acked;
    out.create_error = std::exchange(writes->create_error, Status::Ok());
    out.status_error = std::exchange(writes->status_error, Status::Ok());
    const StatusCode code = out.status_error.code();
    hand_again =
        !out.status_error.ok() && code != StatusCode::kInvalid && code != StatusCode::kTerminal;
    ns = writes->ns;
    name = writes->name;
    wanted = writes->wanted;
  }
  // Again, paced by the backoff of the pass that reports this error; a write
  // the API server refuses as it is (Invalid) is not handed again.
  if (hand_again) SubmitStatus(key, ns, name, wanted, false);
  return out;
}

Status Executor::Execute(const JobRef& job, const std::vector<controller::Action>& actions) {
  for (const controller::Action& action : actions) {
    Status status = Status::Ok();
    if (const auto* a = std::get_if<controller::RegisterJob>(&action)) {
      status = Register(a->config);
    } else if (std::holds_alternative<controller::RemoveJob>(action)) {
      coordinator_.RemoveJob(job.id);
    } else if (const auto* a = std::get_if<controller::WorkerLost>(&action)) {
      (void)coordinator_.WorkerLost(job.id, a->node);  // NotFound: nothing to move
    } else if (const auto* a = std::get_if<controller::AddWorker>(&action)) {
      // NotFound: the session is gone (the next pass registers it again with
      // every eligible node); Invalid cannot come from a prior Decide made.
      if (Status added = coordinator_.AddWorker(job.id, a->prior, a->cores); !added.ok()) {
        spdlog::warn("cannot add a worker job={} node={} reason=\"{}\"", job.key, a->prior.name,
                     added.message());
      }
    } else if (const auto* a = std::get_if<controller::CreateObjects>(&action)) {
      SubmitCreates(job, *a);
    } else if (const auto* a = std::get_if<controller::DeletePod>(&action)) {
      status = DeleteObject(Pods().In(job.ns).Named(a->name), a->uid, false);
    } else if (const auto* a = std::get_if<controller::WriteStatus>(&action)) {
      SubmitStatus(job.key, job.ns, job.name, api::StatusToJson(a->status), a->restate_conditions);
    } else if (const auto* a = std::get_if<controller::DeleteJob>(&action)) {
      status = DeleteObject(WeightedJobs().In(job.ns).Named(job.name), a->uid, true);
      if (status.ok()) spdlog::info("deleted finished job job={} ttlSecondsAfterFinished", job.key);
    } else if (const auto* a = std::get_if<controller::RecordEvent>(&action)) {
      Record(job, *a);
    } else if (const auto* a = std::get_if<controller::CreateWorkload>(&action)) {
      status = CreateWorkloadOf(job, *a);
      auto writes = WritesOf(job.key);
      std::lock_guard lock(writes->mu);
      writes->workload_requested = true;  // asked for, whatever the answer
    } else if (const auto* a = std::get_if<controller::PatchWorkload>(&action)) {
      status = Patch(job, *a);
    }  // RecordSpeeds: the reconciler hands it to its HistorySource
    BALLAST_RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

void Executor::Record(const JobRef& job, const controller::RecordEvent& record) {
  if (record.node.empty()) {
    events_.Record(*job.job, record.warning, api::ReasonName(record.reason), record.message);
    return;
  }
  const nlohmann::json node = {{"apiVersion", "v1"},
                               {"kind", "Node"},
                               {"metadata", {{"name", record.node}, {"uid", record.node_uid}}}};
  events_.Record(node, record.warning, api::ReasonName(record.reason), record.message);
}

Status Executor::CreateWorkloadOf(const JobRef& job, const controller::CreateWorkload& create) {
  auto created = client_.Create(Workloads().In(job.ns), create.workload);
  // AlreadyExists: made by an earlier pass the Workload cache has not shown yet.
  if (!created.ok() && created.status().code() != StatusCode::kConflict) return created.status();
  return Status::Ok();
}

Status Executor::Patch(const JobRef& job, const controller::PatchWorkload& patch) {
  const auto ref = Workloads().In(job.ns).Named(patch.name);
  auto patched =
      patch.status ? client_.PatchStatus(ref, patch.patch) : client_.MergePatch(ref, patch.patch);
  // Conflict: Kueue changed the Workload since it was read; its change
  // comes through the cache and the next pass patches again from it.
  // NotFound: it is gone (the job's deletion took it).
  const StatusCode code = patched.status().code();
  if (!patched.ok() && code != StatusCode::kConflict && code != StatusCode::kNotFound) {
    return patched.status();
  }
  if (!patched.ok()) {
    spdlog::info("workload status not written job={} workload={} reason=\"{}\"", job.key,
                 patch.name, patched.status().message());
  }
  return Status::Ok();
}

Status Executor::Register(const coordinator::JobConfig& config) {
  Status added = coordinator_.AddJob(config);
  if (added.code() == StatusCode::kConflict) {  // a session the memory lost track of
    coordinator_.RemoveJob(config.id);
    added = coordinator_.AddJob(config);
  }
  return added;
}

Status Executor::DeleteObject(const kube::ResourceRef& ref, const std::string& uid,
                              bool background) {
  kube::DeleteOptions options;
  options.precondition_uid = uid;
  if (background) options.propagation_policy = "Background";
  const Status deleted = client_.Delete(ref, options);
  if (deleted.ok() || deleted.code() == StatusCode::kNotFound) return Status::Ok();
  // Conflict with a uid precondition: that incarnation is gone already.
  if (deleted.code() == StatusCode::kConflict && !uid.empty()) return Status::Ok();
  return deleted;
}

StatusOr<std::string> Executor::CreateOrReadSecret(const std::string& key, const std::string& ns,
                                                   const json& secret, const std::string& uid,
                                                   const std::string& token) {
  auto in_effect = MakeOrReadSecret(ns, secret, uid, token);
  if (in_effect.ok()) {
    auto writes = WritesOf(key);
    std::lock_guard lock(writes->mu);
    writes->secret_exists = true;
  }
  return in_effect;
}

StatusOr<std::string> Executor::MakeOrReadSecret(const std::string& ns, const json& secret,
                                                 const std::string& uid, const std::string& token) {
  auto created = client_.Create(Secrets().In(ns), secret);
  if (created.ok()) return token;
  if (created.status().code() != StatusCode::kConflict) return created.status();
  const auto ref = Secrets().In(ns).Named(secret["metadata"]["name"]);
  auto existing = client_.Get(ref);
  BALLAST_RETURN_IF_ERROR(existing.status());
  const api::ObjectMeta meta = api::ReadMeta(*existing);
  if (!meta.OwnedBy(uid)) {
    // An earlier job of this name left it and the garbage collector has not
    // come yet: delete it (that incarnation only) and make ours next time.
    BALLAST_RETURN_IF_ERROR(DeleteObject(ref, meta.uid, /*background=*/false));
    return Status::Unavailable(fmt::format(
        "Secret {}/{} belonged to an earlier job of this name; deleted it", ns, ref.name));
  }
  auto stored = kube::DecodeBase64(
      json_read::TextAt(json_read::At(*existing, "data"), controller::kTokenKey));
  if (!stored.ok() || stored->empty()) {
    return Status::Invalid(fmt::format("Secret {}/{} has no data.token", ns, ref.name));
  }
  return *stored;
}

Status Executor::CreatePods(const std::string& ns, const std::vector<json>& pods,
                            std::vector<bool>& made) {
  // A few at a time, each on its own connection: a new job's pods cost one
  // round trip to the API server, not one per node. A batch with a refusal
  // ends the task (as the Job controller's slow start does): the rest would
  // most likely be refused too, and the job's backoff paces the next try.
  constexpr size_t kAtOnce = 8;
  made.assign(pods.size(), false);
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
    for (size_t i = 0; i < creates.size(); ++i) {
      const Status status = creates[i].get();
      made[begin + i] = status.ok();
      if (first_error.ok() && !status.ok()) first_error = status;
    }
    if (!first_error.ok()) break;
  }
  return first_error;
}

void Executor::SubmitCreates(const JobRef& job, const controller::CreateObjects& create) {
  std::shared_ptr<Writes> writes = WritesOf(job.key);
  {
    std::lock_guard lock(writes->mu);
    writes->creating = true;
  }
  boost::asio::post(pool_->pool, [this, writes, key = job.key, ns = job.ns, uid = job.uid, create] {
    RunCreates(key, ns, uid, create, *writes);
  });
}

void Executor::RunCreates(const std::string& key, const std::string& ns, const std::string& uid,
                          const controller::CreateObjects& create, Writes& writes) {
  Status status = Status::Ok();
  std::optional<std::string> adopted;
  if (create.secret && create.restore) {
    // Made again only when gone; one that is there is the pods' as it is.
    auto made = client_.Create(Secrets().In(ns), *create.secret);
    if (!made.ok() && made.status().code() != StatusCode::kConflict) status = made.status();
  } else if (create.secret) {
    auto in_effect = MakeOrReadSecret(ns, *create.secret, uid, create.token);
    status = in_effect.status();
    if (in_effect.ok() && *in_effect != create.token) adopted = *in_effect;
  }
  // Made, found, or (a restore) there already.
  const bool secret_exists = create.secret && status.ok();
  // The pods only once their Secret exists (a worker started without it
  // fails), and only once the session holds the Secret's token: with another
  // one the next pass registers the session again first, then makes them.
  const bool create_pods = status.ok() && !adopted;
  std::vector<bool> made;
  if (create_pods) status = CreatePods(ns, create.pods, made);
  {
    std::lock_guard lock(writes.mu);
    writes.creating = false;
    writes.secret_exists |= secret_exists;
    if (adopted) writes.adopted_token = adopted;
    // Those made are on their way even when others were refused (a quota
    // that admits some): they are not created again before the cache has them.
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < made.size(); ++i) {
      if (made[i]) writes.created[create.pods[i]["metadata"]["name"]] = now;
    }
    if (create_pods && status.ok()) {
      writes.pods_created = !create.pods.empty();
    } else {
      writes.create_error = status;
    }
  }
  // Created pods come back through the pod cache, which queues the job; a
  // failure, or a token taken over, needs a pass of its own.
  if ((!status.ok() || adopted) && requeue_) requeue_(key);
}

void Executor::SubmitStatus(const std::string& key, const std::string& ns, const std::string& name,
                            const json& status, bool restate_conditions) {
  std::shared_ptr<Writes> writes = WritesOf(key);
  {
    std::lock_guard lock(writes->mu);
    writes->ns = ns;
    writes->name = name;
    writes->wanted = status;
    // Someone else changed the conditions: as if none were written, so
    // that the patch carries them whole.
    if (restate_conditions && writes->acked.is_object()) writes->acked.erase("conditions");
    if (writes->writing_status || writes->wanted == writes->acked) return;
    writes->writing_status = true;
  }
  boost::asio::post(pool_->pool, [this, writes, key, ref = WeightedJobs().In(ns).Named(name)] {
    WriteStatuses(key, ref, writes);
  });
}

void Executor::WriteStatuses(const std::string& key, const kube::ResourceRef& ref,
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
    auto written = client_.PatchStatus(ref, {{"status", api::StatusPatch(acked, wanted)}});
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
  if (requeue_) requeue_(key);
}

}  // namespace ballast::runtime
