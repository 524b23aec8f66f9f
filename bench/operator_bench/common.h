// What every phase of ballast_operator_bench shares that is not state: the
// resources it creates and watches, the job it applies, the operator's
// process as /proc shows it, and the formatting of figures. Functions only;
// each is safe to call from any thread.
#pragma once
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/kube/client.h"

namespace ballast::operator_bench {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

inline const kube::ResourceRef kJobs{"ballast.io", "v1alpha1", "weightedjobs", true, "", ""};
inline const kube::ResourceRef kPods{"", "v1", "pods", true, "", ""};
inline const kube::ResourceRef kSecrets{"", "v1", "secrets", true, "", ""};
inline const kube::ResourceRef kConfigMaps{"", "v1", "configmaps", true, "", ""};
inline const kube::ResourceRef kNodes{"", "v1", "nodes", false, "", ""};
inline constexpr char kJobLabel[] = "ballast.io/job";
inline constexpr char kPoolLabel[] = "ballast.io/pool";

// `d` in milliseconds.
double Ms(Clock::duration d);

// Nearest rank: the smallest value with at least p of the values at or below
// it; NAN when there are none.
double Percentile(std::vector<double> values, double p);

// /proc/loadavg's three averages, "1.00 0.50 0.25".
std::string LoadAverage();

// A numeric field of /proc/<pid>/status ("Threads:", "VmRSS:" in kB); NAN when unreadable.
double ProcStatus(int pid, const std::string& field);

// A field of /proc/<pid>/status in MB ("VmHWM:", "VmRSS:"); NAN when unreadable.
double ProcStatusMb(int pid, const std::string& field);

// User + system CPU seconds a process has used; NAN when unreadable.
double CpuSeconds(int pid);

// A WeightedJob `name` counting primes below `limit` by trial division under
// `policy`, on the nodes labelled ballast.io/pool=`pool` (every node when empty).
json PrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
               const std::string& pool);

// `value` with `decimals` decimals; "n/a" when it is NAN.
std::string Fixed(double value, int decimals);

}  // namespace ballast::operator_bench
