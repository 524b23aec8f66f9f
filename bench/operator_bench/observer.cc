#include "bench/operator_bench/observer.h"

#include <algorithm>

namespace ballast::operator_bench {

void Observer::SawPod(const json& pod) {
  const std::string job = pod["metadata"].value("labels", json::object()).value(kJobLabel, "");
  Record(pods_, job, pod["metadata"].value("name", ""));
}

void Observer::SawSecret(const json& secret) {
  const std::string job = secret["metadata"].value("labels", json::object()).value(kJobLabel, "");
  Record(secrets_, job, secret["metadata"].value("name", ""));
}

void Observer::SawConfigMap(const json& cm) {
  Record(configmaps_, cm["metadata"].value("name", ""), "");
}

void Observer::SawJob(const json& job) {
  const std::string phase = job.value("/status/phase"_json_pointer, "");
  if (phase != "Succeeded" && phase != "Failed") return;
  std::lock_guard lock(mu_);
  finished_.try_emplace(job["metadata"].value("name", ""), Clock::now());
  cv_.notify_all();
}

std::optional<Clock::time_point> Observer::AllPods(const std::string& job, size_t count,
                                                   Clock::duration timeout) {
  return WaitFor(pods_, job, count, timeout);
}

std::optional<Clock::time_point> Observer::FirstPod(const std::string& job) {
  return WaitFor(pods_, job, 1, Clock::duration::zero());
}

std::optional<Clock::time_point> Observer::Secret(const std::string& job, Clock::duration timeout) {
  return WaitFor(secrets_, job, 1, timeout);
}

std::optional<Clock::time_point> Observer::ConfigMap(const std::string& name,
                                                     Clock::duration timeout) {
  return WaitFor(configmaps_, name, 1, timeout);
}

bool Observer::WaitFinished(const std::vector<std::string>& jobs, Clock::duration timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return std::all_of(jobs.begin(), jobs.end(), [&](const auto& j) { return finished_.count(j); });
  });
}

std::optional<Clock::time_point> Observer::Finished(const std::string& job) {
  std::lock_guard lock(mu_);
  const auto it = finished_.find(job);
  if (it == finished_.end()) return std::nullopt;
  return it->second;
}

// Under the lock, the map's entry too: the watch threads insert keys while
// the bench's thread looks them up (an insert outside it once crashed the
// bench in the map's rebalancing).
void Observer::Record(std::map<std::string, Seen>& map, const std::string& key,
                      const std::string& name) {
  std::lock_guard lock(mu_);
  Seen& seen = map[key];
  if (!seen.names.insert(name).second) return;
  seen.last = Clock::now();
  if (seen.names.size() == 1) seen.first = seen.last;
  cv_.notify_all();
}

// The time the count-th name under `key` was seen (the first when count is 1).
std::optional<Clock::time_point> Observer::WaitFor(std::map<std::string, Seen>& map,
                                                   const std::string& key, size_t count,
                                                   Clock::duration timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return map[key].names.size() >= count; })) {
    return std::nullopt;
  }
  return count == 1 ? map[key].first : map[key].last;
}

}  // namespace ballast::operator_bench
