#include "operator/runtime/watch_caches.h"

#include "core/common/json_read.h"
#include "operator/api/kube_views.h"
#include "operator/runtime/resources.h"

namespace ballast::runtime {
namespace {

using nlohmann::json;

// What of a Node decides where jobs run: its labels, readiness, taints and
// cordon. Heartbeat-only updates change none of it and wake no job.
json Placement(const json& node) {
  const json& spec = json_read::At(node, "spec");
  json taints = json::array();
  for (const json* taint : json_read::ObjectsAt(spec, "taints")) taints.push_back(*taint);
  return {{"labels", json_read::StringMapAt(json_read::At(node, "metadata"), "labels")},
          {"ready", api::ReadNode(node).ready},
          {"taints", std::move(taints)},
          {"unschedulable", json_read::FlagAt(spec, "unschedulable")}};
}

// The same handler for an add, an update (the new object) and a delete.
kube::InformerHandlers OnEveryChange(const std::function<void(const json&)>& handle) {
  return {handle, [handle](const json&, const json& object) { handle(object); }, handle};
}

}  // namespace

WatchCaches::WatchCaches(kube::KubeClient& client, const std::string& ns, bool kueue,
                         kube::WorkQueue& queue) {
  kube::InformerOptions trimmed;
  trimmed.transform = kube::DropManagedFields;
  jobs_ = std::make_unique<kube::Informer>(
      client, WeightedJobs().In(ns), trimmed,
      OnEveryChange([&queue](const json& job) { queue.Add(kube::ObjectKey(job)); }));
  // A pod's or a Workload's job, by the label it carries.
  auto enqueue_owner = [&queue](const json& object) {
    const json& metadata = json_read::At(object, "metadata");
    const std::string job = json_read::TextAt(json_read::At(metadata, "labels"), api::kJobLabel);
    if (!job.empty()) queue.Add(json_read::TextAt(metadata, "namespace") + "/" + job);
  };
  kube::InformerOptions by_job = trimmed;
  by_job.label_selector = std::string(api::kJobLabel);
  by_job.index_label = std::string(api::kJobLabel);
  pods_ =
      std::make_unique<kube::Informer>(client, Pods().In(ns), by_job, OnEveryChange(enqueue_owner));
  auto enqueue_all = [this, &queue](const json&) {
    if (!jobs_) return;
    for (const auto& job : jobs_->List()) queue.Add(kube::ObjectKey(*job));
  };
  nodes_ = std::make_unique<kube::Informer>(
      client, Nodes(), trimmed,
      kube::InformerHandlers{enqueue_all,
                             [enqueue_all](const json& old_node, const json& node) {
                               if (Placement(old_node) != Placement(node)) enqueue_all(node);
                             },
                             enqueue_all});
  profiles_ = std::make_unique<kube::Informer>(client, WeightProfiles(), kube::InformerOptions{},
                                               OnEveryChange(enqueue_all));
  if (kueue) {
    workloads_ = std::make_unique<kube::Informer>(client, Workloads().In(ns), by_job,
                                                  OnEveryChange(enqueue_owner));
    flavors_ = std::make_unique<kube::Informer>(client, ResourceFlavors(), trimmed,
                                                OnEveryChange(enqueue_all));
    flavors_->Start();
    workloads_->Start();
  }
  nodes_->Start();
  profiles_->Start();
  pods_->Start();
  jobs_->Start();
}

std::vector<std::pair<const char*, kube::Informer*>> WatchCaches::Started() const {
  std::vector<std::pair<const char*, kube::Informer*>> started;
  const std::pair<const char*, kube::Informer*> all[] = {
      {"weightedjobs", jobs_.get()},   {"pods", pods_.get()},
      {"nodes", nodes_.get()},         {"weightprofiles", profiles_.get()},
      {"workloads", workloads_.get()}, {"resourceflavors", flavors_.get()}};
  for (const auto& entry : all) {
    if (entry.second) started.push_back(entry);  // Kueue's only with --kueue
  }
  return started;
}

Caches WatchCaches::ForReconciler() const {
  return {*jobs_, *pods_, *nodes_, *profiles_, workloads_.get(), flavors_.get()};
}

void WatchCaches::Stop() {
  for (const auto& [resource, informer] : Started()) informer->Stop();
}

}  // namespace ballast::runtime
