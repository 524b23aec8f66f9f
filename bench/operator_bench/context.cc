#include "bench/operator_bench/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <set>
#include <thread>
#include <utility>

namespace ballast::operator_bench {
namespace {

kube::InformerOptions ByJob() {
  kube::InformerOptions options;
  options.label_selector = kJobLabel;
  return options;
}

}  // namespace

Context::Context(kube::KubeClient& client, const Flags& flags)
    : client_(client),
      flags_(flags),
      pods_(client_, kPods.In(flags_.ns), ByJob(),
            {[this](const json& o) { seen_.SawPod(o); }, nullptr, nullptr}),
      secrets_(client_, kSecrets.In(flags_.ns), ByJob(),
               {[this](const json& o) { seen_.SawSecret(o); }, nullptr, nullptr}),
      configmaps_(client_, kConfigMaps.In(flags_.ns), {},
                  {[this](const json& o) { seen_.SawConfigMap(o); }, nullptr, nullptr}),
      jobs_(client_, kJobs.In(flags_.ns), {},
            {[this](const json& o) { seen_.SawJob(o); },
             [this](const json&, const json& o) { seen_.SawJob(o); }, nullptr}) {}

bool Context::StartWatches() {
  for (kube::Informer* informer : {&pods_, &secrets_, &configmaps_, &jobs_}) informer->Start();
  for (kube::Informer* informer : {&pods_, &secrets_, &configmaps_, &jobs_}) {
    if (!informer->WaitForSync(std::chrono::seconds(30))) {
      std::cerr << "operator_bench: the watch caches did not sync in 30 s\n";
      return false;
    }
  }
  return true;
}

kube::ObjectPtr Context::Job(const std::string& name) const {
  return jobs_.Get(flags_.ns + "/" + name);
}

int Context::EligibleNodes(const std::string& pool) {
  kube::ListOptions options;
  if (!pool.empty()) options.label_selector = fmt::format("{}={}", kPoolLabel, pool);
  auto list = client_.List(kNodes, options);
  if (!list.ok()) return 0;
  int eligible = 0;
  for (const auto& node : list->items) {
    bool ready = false;
    for (const auto& c : node.value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
    }
    bool tainted = false;
    for (const auto& t : node.value("/spec/taints"_json_pointer, json::array())) {
      const std::string effect = t.value("effect", "");
      tainted |= effect == "NoSchedule" || effect == "NoExecute";
    }
    if (ready && !tainted && !node.value("/spec/unschedulable"_json_pointer, false)) ++eligible;
  }
  return eligible;
}

bool Context::CreatePrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
                              const std::string& pool) {
  auto created = client_.Create(kJobs.In(flags_.ns), PrimesJob(name, limit, policy, pool));
  if (!created.ok()) {
    std::cerr << "create " << name << ": " << created.status().ToString() << "\n";
  }
  return created.ok();
}

void Context::DeleteJobs(const std::vector<std::string>& names) {
  const std::set<std::string> set(names.begin(), names.end());
  for (const auto& name : names) (void)client_.Delete(kJobs.In(flags_.ns).Named(name));
  const auto deadline = Clock::now() + std::chrono::seconds(90);
  auto last_change = Clock::now();
  size_t running = 0, finished = 0;
  size_t left = std::numeric_limits<size_t>::max();
  while (Clock::now() < deadline) {
    running = finished = 0;
    for (const auto& pod : pods_.List()) {
      if (!set.count(pod->at("metadata").at("labels").value(kJobLabel, ""))) continue;
      const std::string phase = pod->value("/status/phase"_json_pointer, "");
      ++(phase == "Succeeded" || phase == "Failed" ? finished : running);
    }
    if (running + finished == 0) return;
    if (running + finished != left) last_change = Clock::now();
    left = running + finished;
    if (running == 0 && Clock::now() - last_change > std::chrono::seconds(15)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::cout << fmt::format(
      "  ({} pods of the deleted jobs not removed after the wait: {} Pending or Running, {} "
      "finished)\n",
      running + finished, running, finished);
}

Metrics Context::SettledMetrics() {
  auto metrics = Scrape(flags_.metrics_url);
  const std::string key = "ballast_operator_reconciles_total{result=\"ok\"}";
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  auto stable_since = Clock::now();
  while (Clock::now() < deadline && Clock::now() - stable_since < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto next = Scrape(flags_.metrics_url);
    // Absent (NAN) in both before the first pass: settled too.
    const double was = Metric(metrics, key), now = Metric(next, key);
    if (was != now && !(std::isnan(was) && std::isnan(now))) stable_since = Clock::now();
    metrics = std::move(next);
  }
  return metrics;
}

void Context::Probe(std::vector<double>* rtt, std::vector<double>* watch) {
  const std::string name = fmt::format("probe-{}", probes_++);
  const json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
  const auto start = Clock::now();
  if (!client_.Create(kConfigMaps.In(flags_.ns), cm).ok()) return;
  const auto created = Clock::now();
  rtt->push_back(Ms(created - start));
  if (watch) {
    if (auto seen = seen_.ConfigMap(name, std::chrono::seconds(10))) {
      watch->push_back(Ms(*seen - start));
    }
  }
  (void)client_.Delete(kConfigMaps.In(flags_.ns).Named(name));
}

void Sampler::Stop(const Metrics& final_metrics) {
  if (!thread_.joinable()) return;
  running_ = false;
  thread_.join();
  Take(final_metrics);
}

void Sampler::Run() {
  while (running_) {
    Take(Scrape(context_.flags().metrics_url));
    peak_rss = std::max(peak_rss, ProcStatusMb(context_.flags().operator_pid, "VmRSS:"));
    context_.Probe(&api_rtt, nullptr);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void Sampler::Take(const Metrics& metrics) {
  const double p99 = Quantile(metrics, "0.99");
  if (!std::isnan(p99) && !(p99 <= worst_p99)) worst_p99 = p99;
  const double cpu_p99 = Quantile(metrics, "0.99", kReconcileCpuSeconds);
  if (!std::isnan(cpu_p99) && !(cpu_p99 <= worst_cpu_p99)) worst_cpu_p99 = cpu_p99;
}

}  // namespace ballast::operator_bench
