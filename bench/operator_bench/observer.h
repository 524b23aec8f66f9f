// What the bench's watches saw of its jobs, their pods and token Secrets, and
// its probe ConfigMaps, with the time each thing was first seen; the phases
// wait on it for what they time.
//
// Thread-safety: the Saw* calls come from the watch threads, the rest from
// any thread; every call takes the one lock.
#pragma once
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/operator_bench/common.h"

namespace ballast::operator_bench {

class Observer {
 public:
  // A pod or Secret is filed under its ballast.io/job label, a ConfigMap
  // under its name, a job once its phase is Succeeded or Failed.
  void SawPod(const json& pod);
  void SawSecret(const json& secret);
  void SawConfigMap(const json& cm);
  void SawJob(const json& job);

  // When the `count`-th distinct pod of `job` was first seen; nullopt after `timeout`.
  std::optional<Clock::time_point> AllPods(const std::string& job, size_t count,
                                           Clock::duration timeout);
  // When the first pod of `job` was seen; nullopt when none has been.
  std::optional<Clock::time_point> FirstPod(const std::string& job);
  // When the first token Secret of `job` was seen; nullopt after `timeout`.
  std::optional<Clock::time_point> Secret(const std::string& job, Clock::duration timeout);
  // When ConfigMap `name` was seen; nullopt after `timeout`.
  std::optional<Clock::time_point> ConfigMap(const std::string& name, Clock::duration timeout);
  // Whether each of `jobs` has been seen Succeeded or Failed; false after `timeout`.
  bool WaitFinished(const std::vector<std::string>& jobs, Clock::duration timeout);
  // When `job` was first seen Succeeded or Failed; nullopt when it has not been.
  std::optional<Clock::time_point> Finished(const std::string& job);

 private:
  struct Seen {
    std::set<std::string> names;
    Clock::time_point first, last;
  };

  void Record(std::map<std::string, Seen>& map, const std::string& key, const std::string& name);
  std::optional<Clock::time_point> WaitFor(std::map<std::string, Seen>& map, const std::string& key,
                                           size_t count, Clock::duration timeout);

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Seen> pods_, secrets_, configmaps_;
  std::map<std::string, Clock::time_point> finished_;
};

}  // namespace ballast::operator_bench
