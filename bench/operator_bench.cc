// The operator against the test control plane: issue 5's figures, each beside
// its target, in one run. bench/operator-bench starts the control plane and
// `ballast operator` and runs this with the operator's PID and /metrics URL.
//
//   apply -> pods  jobs applied one at a time: from the Create of a
//                  WeightedJob returning to a pod watch having seen every
//                  worker pod of it (one per eligible node); p50 <= 300 ms.
//                  Beside it where the time goes, all seen from outside: the
//                  API server's own floor (a ConfigMap's create round trip and
//                  watch delivery), create -> the job's token Secret seen (the
//                  operator's first write), -> its first pod, -> its last pod.
//   N at once      small primes jobs created back to back: the operator's peak
//                  RSS (VmHWM, <= 60 MB), reconcile p99 from its /metrics
//                  summary (<= 100 ms), API requests per job by verb (the
//                  ballast_operator_api_requests_total delta / N), wall time until
//                  every job is Succeeded.
//   efficiency     one primes job per policy on seed 000's boards
//                  (nodeSelector ballast.io/pool: seed000), status.efficiency
//                  (pod start included; against the nodes' declared speeds),
//                  median of --repeat runs, policies interleaved run by run;
//                  beside makespan, idealSeconds and the job's own estimate.
//   wide (--wide N, instead of the above) one adaptive primes job on N light
//                  nodes labelled ballast.io/pool: wide (bench/operator-bench
//                  --wide N registers them): apply -> every worker pod seen,
//                  -> every worker reporting (the coordinator's
//                  ballast_node_reports_total, scraped each second), -> done;
//                  the status's largest size as written (<= 256 KiB), the
//                  operator's peak RSS and reconcile p99 meanwhile.
//   churn (--churn N, instead of the others) N small primes jobs in waves of
//                  --churn-wave: each wave created, waited for until every
//                  job is finished, deleted and its pods gone. Every
//                  --churn-every jobs, once the operator's passes have
//                  settled, its VmRSS beside what it still holds (jobs
//                  tracked, jobs at the coordinator, /metrics series, threads,
//                  pods of deleted jobs left); then the growth over the first
//                  half of the run beside the last half: whether it levels off.
//
// A plain program: it drives processes and an API server, nothing Google
// Benchmark could time. Figures only; it never fails on speed (exit 1 only
// when it could not measure).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/common/stats.h"
#include "core/common/utf8.h"
#include "net/kube/http_client.h"
#include "net/kube/informer.h"
#include "net/kube/kubeconfig.h"

// cpprestsdk after the standard headers (DEVELOPERS.md).
#include <cpprest/http_client.h>

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using ballast::Median;
using ballast::kube::Informer;
using ballast::kube::InformerHandlers;
using ballast::kube::InformerOptions;
using ballast::kube::ResourceRef;

const ResourceRef kJobs{"ballast.io", "v1alpha1", "weightedjobs", true, "", ""};
const ResourceRef kPods{"", "v1", "pods", true, "", ""};
const ResourceRef kSecrets{"", "v1", "secrets", true, "", ""};
const ResourceRef kConfigMaps{"", "v1", "configmaps", true, "", ""};
const ResourceRef kNodes{"", "v1", "nodes", false, "", ""};
constexpr char kJobLabel[] = "ballast.io/job";
constexpr char kPoolLabel[] = "ballast.io/pool";

struct Flags {
  std::string kubeconfig;
  std::string ns;
  int operator_pid = 0;
  std::string metrics_url;
  int sequential = 20;
  int concurrent = 50;
  uint64_t small_limit = 20000;
  int repeat = 3;
  uint64_t limit = 400000;
  std::string policies = "equal,weighted,mms,adaptive";
  std::string pool = "seed000";
  int wide = 0;  // the wide phase on this many nodes, instead of the others
  uint64_t wide_limit = 20'000'000;
  int churn = 0;  // the churn phase with this many jobs, instead of the others
  int churn_wave = 10;
  int churn_every = 100;
  double churn_pause_s = 0;  // after each churn sample, for a profiler to look at the operator
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Nearest rank: the smallest value with at least p of the values at or below it.
double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

// A numeric field of /proc/<pid>/status ("Threads:", "VmRSS:" in kB); NAN when unreadable.
double ProcStatus(int pid, const std::string& field) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size()));
  }
  return NAN;
}

// A field of /proc/<pid>/status in MB ("VmHWM:", "VmRSS:"); NAN when unreadable.
double ProcStatusMb(int pid, const std::string& field) { return ProcStatus(pid, field) / 1024; }

// User + system CPU seconds a process has used; NAN when unreadable.
double CpuSeconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return NAN;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);  // utime (14), stime (15)
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The operator's /metrics as "name{labels}" -> value; empty when unreachable.
std::map<std::string, double> Scrape(const std::string& url) {
  std::map<std::string, double> metrics;
  std::string body;
  try {
    web::http::client::http_client client(url);
    body = client.request(web::http::methods::GET).get().extract_utf8string(true).get();
  } catch (const std::exception& e) {
    std::cerr << "operator_bench: scraping " << url << ": " << e.what() << "\n";
    return metrics;
  }
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      metrics[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return metrics;
}

double Metric(const std::map<std::string, double>& metrics, const std::string& key) {
  const auto it = metrics.find(key);
  return it == metrics.end() ? NAN : it->second;
}

// ballast_operator_api_requests_total by verb.
std::map<std::string, double> ApiRequests(const std::map<std::string, double>& metrics) {
  const std::string prefix = "ballast_operator_api_requests_total{verb=\"";
  std::map<std::string, double> out;
  for (const auto& [key, value] : metrics) {
    if (key.rfind(prefix, 0) != 0) continue;
    out[key.substr(prefix.size(), key.size() - prefix.size() - 2)] = value;
  }
  return out;
}

constexpr char kReconcileSeconds[] = "ballast_operator_reconcile_seconds";
// CPU time of the reconciling thread in a pass, when the operator exports it.
constexpr char kReconcileCpuSeconds[] = "ballast_operator_reconcile_cpu_seconds";

double Quantile(const std::map<std::string, double>& metrics, const char* q,
                const char* summary = kReconcileSeconds) {
  return Metric(metrics, fmt::format("{}{{quantile=\"{}\"}}", summary, q));
}

// A summary's mean between two scrapes: the _sum delta over the _count delta.
double MeanBetween(const std::map<std::string, double>& before,
                   const std::map<std::string, double>& after, const std::string& summary) {
  const double count = Metric(after, summary + "_count") - Metric(before, summary + "_count");
  const double sum = Metric(after, summary + "_sum") - Metric(before, summary + "_sum");
  return count > 0 ? sum / count : NAN;
}

// API requests between two scrapes, per job: the total and "create 9.00, patch 2.22".
std::pair<double, std::string> RequestsPerJob(const std::map<std::string, double>& before,
                                              const std::map<std::string, double>& after,
                                              double jobs) {
  const auto from = ApiRequests(before);
  double total = 0;
  std::string by_verb;
  for (const auto& [verb, value] : ApiRequests(after)) {
    const double delta = value - (from.count(verb) ? from.at(verb) : 0);
    total += delta;
    if (delta > 0) {
      by_verb += fmt::format("{}{} {:.2f}", by_verb.empty() ? "" : ", ", verb, delta / jobs);
    }
  }
  return {total / jobs, by_verb};
}

json PrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
               const std::string& pool) {
  json spec = {{"workload", {{"primes", {{"limit", limit}, {"method", "trial"}}}}},
               {"policy", policy}};
  if (!pool.empty()) spec["nodeSelector"] = {{kPoolLabel, pool}};
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

std::string Fixed(double value, int decimals) {
  return std::isnan(value) ? "n/a" : fmt::format("{:.{}f}", value, decimals);
}

// One figure of the closing table.
struct Figure {
  std::string name;
  double value;
  std::string unit;
  double target;
  bool at_most;  // target is a ceiling (else a floor)
  int decimals;
};

// What the watches saw, with the time each thing was first seen.
class Observer {
 public:
  void SawPod(const json& pod) {
    const std::string job = pod["metadata"].value("labels", json::object()).value(kJobLabel, "");
    Record(pods_, job, pod["metadata"].value("name", ""));
  }
  void SawSecret(const json& secret) {
    const std::string job = secret["metadata"].value("labels", json::object()).value(kJobLabel, "");
    Record(secrets_, job, secret["metadata"].value("name", ""));
  }
  void SawConfigMap(const json& cm) { Record(configmaps_, cm["metadata"].value("name", ""), ""); }
  void SawJob(const json& job) {
    const std::string phase = job.value("/status/phase"_json_pointer, "");
    if (phase != "Succeeded" && phase != "Failed") return;
    std::lock_guard lock(mu_);
    finished_.try_emplace(job["metadata"].value("name", ""), Clock::now());
    cv_.notify_all();
  }

  // When the `count`-th distinct pod of `job` was first seen; nullopt after `timeout`.
  std::optional<Clock::time_point> AllPods(const std::string& job, size_t count,
                                           Clock::duration timeout) {
    return WaitFor(pods_, job, count, timeout);
  }
  std::optional<Clock::time_point> FirstPod(const std::string& job) {
    return WaitFor(pods_, job, 1, Clock::duration::zero());
  }
  std::optional<Clock::time_point> Secret(const std::string& job, Clock::duration timeout) {
    return WaitFor(secrets_, job, 1, timeout);
  }
  std::optional<Clock::time_point> ConfigMap(const std::string& name, Clock::duration timeout) {
    return WaitFor(configmaps_, name, 1, timeout);
  }
  // When each of `jobs` was first seen Succeeded or Failed; false after `timeout`.
  bool WaitFinished(const std::vector<std::string>& jobs, Clock::duration timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      return std::all_of(jobs.begin(), jobs.end(),
                         [&](const auto& j) { return finished_.count(j); });
    });
  }
  std::optional<Clock::time_point> Finished(const std::string& job) {
    std::lock_guard lock(mu_);
    const auto it = finished_.find(job);
    if (it == finished_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Seen {
    std::set<std::string> names;
    Clock::time_point first, last;
  };

  // Under the lock, the map's entry too: the watch threads insert keys while
  // the bench's thread looks them up (an insert outside it once crashed the
  // bench in the map's rebalancing).
  void Record(std::map<std::string, Seen>& map, const std::string& key, const std::string& name) {
    std::lock_guard lock(mu_);
    Seen& seen = map[key];
    if (!seen.names.insert(name).second) return;
    seen.last = Clock::now();
    if (seen.names.size() == 1) seen.first = seen.last;
    cv_.notify_all();
  }

  // The time the count-th name under `key` was seen (the first when count is 1).
  std::optional<Clock::time_point> WaitFor(std::map<std::string, Seen>& map, const std::string& key,
                                           size_t count, Clock::duration timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return map[key].names.size() >= count; })) {
      return std::nullopt;
    }
    return count == 1 ? map[key].first : map[key].last;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Seen> pods_, secrets_, configmaps_;
  std::map<std::string, Clock::time_point> finished_;
};

class Bench {
 public:
  Bench(ballast::kube::KubeClient& client, const Flags& flags) : client_(client), flags_(flags) {}

  int Main() {
    InformerOptions by_job;
    by_job.label_selector = kJobLabel;
    Informer pods(client_, kPods.In(flags_.ns), by_job,
                  {[this](const json& o) { seen_.SawPod(o); }, nullptr, nullptr});
    Informer secrets(client_, kSecrets.In(flags_.ns), by_job,
                     {[this](const json& o) { seen_.SawSecret(o); }, nullptr, nullptr});
    Informer configmaps(client_, kConfigMaps.In(flags_.ns), {},
                        {[this](const json& o) { seen_.SawConfigMap(o); }, nullptr, nullptr});
    Informer jobs(client_, kJobs.In(flags_.ns), {},
                  {[this](const json& o) { seen_.SawJob(o); },
                   [this](const json&, const json& o) { seen_.SawJob(o); }, nullptr});
    for (Informer* informer : {&pods, &secrets, &configmaps, &jobs}) informer->Start();
    for (Informer* informer : {&pods, &secrets, &configmaps, &jobs}) {
      if (!informer->WaitForSync(std::chrono::seconds(30))) {
        std::cerr << "operator_bench: the watch caches did not sync in 30 s\n";
        return 1;
      }
    }
    pods_ = &pods;
    jobs_ = &jobs;
    const int nodes = EligibleNodes("");
    if (nodes == 0) {
      std::cerr << "operator_bench: no Ready, untainted node\n";
      return 1;
    }
    rss_idle_ = ProcStatusMb(flags_.operator_pid, "VmRSS:");
    std::cout << fmt::format(
                     "operator bench: namespace {}, {} eligible nodes, operator pid {} (VmRSS "
                     "{:.1f} MB idle)\n"
                     "\n",
                     flags_.ns, nodes, flags_.operator_pid, rss_idle_)
              << std::flush;
    if (flags_.wide > 0) return Wide();
    if (flags_.churn > 0) return Churn(nodes);
    ApplyToPods(nodes);
    Concurrent(nodes);
    Efficiency();
    PrintFigures();
    return 0;
  }

 private:
  // Ready nodes without NoSchedule/NoExecute taints, with label pool=`pool` when set.
  int EligibleNodes(const std::string& pool) {
    ballast::kube::ListOptions options;
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

  // Deletes the jobs and waits until the garbage collector and the node agent
  // have removed their pods, so that the next measurement does not share the
  // API server with that: at most 90 s, and not while only finished pods are
  // left and none has gone for 15 s (the node agent can leave a deleted pod
  // whose worker exited just then Terminating for good). Prints what is left.
  void DeleteJobs(const std::vector<std::string>& names) {
    const std::set<std::string> set(names.begin(), names.end());
    for (const auto& name : names) (void)client_.Delete(kJobs.In(flags_.ns).Named(name));
    const auto deadline = Clock::now() + std::chrono::seconds(90);
    auto last_change = Clock::now();
    size_t running = 0, finished = 0;
    size_t left = std::numeric_limits<size_t>::max();
    while (Clock::now() < deadline) {
      running = finished = 0;
      for (const auto& pod : pods_->List()) {
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

  // Nodes of job `name` in `ns` whose worker has reported to the coordinator,
  // from the operator's /metrics (ballast_node_reports_total{job,namespace,node};
  // `job` is the WeightedJob's name).
  static int NodesReporting(const std::map<std::string, double>& metrics, const std::string& ns,
                            const std::string& name) {
    const std::string prefix = "ballast_node_reports_total{";
    const std::string job = fmt::format("job=\"{}\"", name);
    const std::string in = fmt::format("namespace=\"{}\"", ns);
    int count = 0;
    for (auto it = metrics.lower_bound(prefix); it != metrics.end(); ++it) {
      if (it->first.rfind(prefix, 0) != 0) break;
      if (it->first.find(job) != std::string::npos && it->first.find(in) != std::string::npos &&
          it->second > 0) {
        ++count;
      }
    }
    return count;
  }

  // Primes below `limit`, by a sieve: what the job's result must say.
  static uint64_t PrimesBelow(uint64_t limit) {
    std::vector<bool> composite(limit, false);
    uint64_t count = 0;
    for (uint64_t n = 2; n < limit; ++n) {
      if (composite[n]) continue;
      ++count;
      for (uint64_t m = n * n; m < limit; m += n) composite[m] = true;
    }
    return count;
  }

  // What the operator holds at one point of the churn phase.
  struct ChurnSample {
    int jobs = 0;  // created, finished and deleted so far
    double seconds = 0, rss_mb = NAN, anon_mb = NAN, file_mb = NAN, threads = NAN, tracked = NAN,
           hosted = NAN;
    size_t series = 0, deleted_series = 0, pods_left = 0;
  };

  // Pods in the cache of the churn jobs (their names start with "churn-").
  size_t ChurnPodsLeft() const {
    size_t left = 0;
    for (const auto& pod : pods_->List()) {
      left += pod->at("metadata").at("labels").value(kJobLabel, "").rfind("churn-", 0) == 0;
    }
    return left;
  }

  ChurnSample TakeChurnSample(int jobs, Clock::time_point start) {
    const auto metrics = SettledMetrics();
    ChurnSample sample;
    sample.jobs = jobs;
    sample.seconds = Ms(Clock::now() - start) / 1000;
    sample.rss_mb = ProcStatusMb(flags_.operator_pid, "VmRSS:");
    sample.anon_mb = ProcStatusMb(flags_.operator_pid, "RssAnon:");
    sample.file_mb = ProcStatusMb(flags_.operator_pid, "RssFile:");
    sample.threads = ProcStatus(flags_.operator_pid, "Threads:");
    sample.tracked = Metric(metrics, "ballast_operator_jobs");
    sample.hosted = Metric(metrics, "ballast_coordinator_jobs");
    sample.series = metrics.size();
    for (const auto& [key, value] : metrics) {
      sample.deleted_series += key.find("job=\"churn-") != std::string::npos;
    }
    sample.pods_left = ChurnPodsLeft();
    std::cout << fmt::format(
                     "  {:>6} {:>9.1f} {:>7.1f} {:>7.1f} {:>8.0f} {:>8.0f} {:>12.0f} {:>7} {:>14} "
                     "{:>10} {:>7.0f}\n",
                     sample.jobs, sample.rss_mb, sample.anon_mb, sample.file_mb, sample.threads,
                     sample.tracked, sample.hosted, sample.series, sample.deleted_series,
                     sample.pods_left, sample.seconds)
              << std::flush;
    std::this_thread::sleep_for(std::chrono::duration<double>(flags_.churn_pause_s));
    return sample;
  }

  // Whether every cached pod of the jobs `wave` has finished (Succeeded or
  // Failed), and whether none is left.
  std::pair<bool, bool> WavePods(const std::set<std::string>& wave) const {
    bool finished = true, none = true;
    for (const auto& pod : pods_->List()) {
      if (!wave.count(pod->at("metadata").at("labels").value(kJobLabel, ""))) continue;
      none = false;
      const std::string phase = pod->value("/status/phase"_json_pointer, "");
      finished &= phase == "Succeeded" || phase == "Failed";
    }
    return {finished, none};
  }

  // Creates `names`, waits until each is finished (at most 300 s) and its
  // worker pods too (at most 30 s), deletes them, and waits (at most 30 s)
  // until their pods are gone. Returns how many Succeeded. The pods' exit is
  // awaited because the node agent can leave a pod deleted while its final
  // status is on its way Terminating for good (see DeleteJobs), and this
  // phase would pile those up in the operator's pod cache.
  int ChurnWave(const std::vector<std::string>& names) {
    std::vector<std::string> created;
    for (const auto& name : names) {
      auto job =
          client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.small_limit, "adaptive", ""));
      if (job.ok()) {
        created.push_back(name);
      } else {
        std::cerr << "create " << name << ": " << job.status().ToString() << "\n";
      }
    }
    if (!seen_.WaitFinished(created, std::chrono::seconds(300))) {
      std::cerr << "operator_bench: a job of " << created.front() << ".. not finished in 300 s\n";
    }
    const std::set<std::string> wave(created.begin(), created.end());
    const auto exited_by = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < exited_by && !WavePods(wave).first) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int succeeded = 0;
    for (const auto& name : created) {
      auto job = jobs_->Get(flags_.ns + "/" + name);
      succeeded += job && job->value("/status/phase"_json_pointer, "") == "Succeeded";
      (void)client_.Delete(kJobs.In(flags_.ns).Named(name));
    }
    const auto gone_by = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < gone_by && !WavePods(wave).second) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return succeeded;
  }

  // The churn phase (see the top of this file). Returns 0 when every job
  // Succeeded.
  int Churn(int nodes) {
    const int n = flags_.churn;
    const int wave = std::max(1, flags_.churn_wave);
    const int every = std::max(wave, flags_.churn_every);
    std::cout << fmt::format(
        "== {} jobs in waves of {} (primes < {}, {} worker pods each; each wave created, "
        "finished, deleted, its pods gone; load {}) ==\n"
        "  the operator after every {} jobs, its passes settled: VmRSS (of it anonymous: heap, "
        "stacks; and file pages: the program's and libraries' code as it runs), threads, jobs the "
        "reconciler tracks, jobs at the coordinator, /metrics series (of them of deleted "
        "jobs), pods of deleted jobs left in the cache, seconds since the first Create\n"
        "  {:>6} {:>9} {:>7} {:>7} {:>8} {:>8} {:>12} {:>7} {:>14} {:>10} {:>7}\n",
        n, wave, flags_.small_limit, nodes, LoadAverage(), every, "jobs", "VmRSS MB", "anon",
        "file", "threads", "tracked", "coordinator", "series", "deleted jobs'", "pods left", "s");
    const auto start = Clock::now();
    std::vector<ChurnSample> samples = {TakeChurnSample(0, start)};
    int done = 0, succeeded = 0;
    while (done < n) {
      std::vector<std::string> names;
      for (int i = 0; i < wave && done + i < n; ++i) {
        names.push_back(fmt::format("churn-{}", done + i));
      }
      succeeded += ChurnWave(names);
      const int before = done;
      done += static_cast<int>(names.size());
      if (done / every != before / every || done == n)
        samples.push_back(TakeChurnSample(done, start));
    }
    PrintLevelling(samples);
    std::cout << fmt::format("  {} of {} Succeeded; load {} at the end\n", succeeded, n,
                             LoadAverage());
    return succeeded == n ? 0 : 1;
  }

  // The growth over the first half of the jobs beside the last half, and the
  // last half's slope (least squares): whether the RSS levels off. It does
  // when the last half grew by at most a quarter of the first half's growth,
  // or by at most 1 MB.
  static void PrintLevelling(const std::vector<ChurnSample>& samples) {
    if (samples.size() < 3) return;
    const int half_jobs = samples.back().jobs / 2;
    size_t mid = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (std::abs(samples[i].jobs - half_jobs) < std::abs(samples[mid].jobs - half_jobs)) mid = i;
    }
    const ChurnSample& first = samples.front();
    const ChurnSample& middle = samples[mid];
    const ChurnSample& last = samples.back();
    const double first_growth = middle.rss_mb - first.rss_mb;
    const double last_growth = last.rss_mb - middle.rss_mb;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, count = 0;
    for (size_t i = mid; i < samples.size(); ++i) {
      const double x = samples[i].jobs / 100.0;
      sx += x;
      sy += samples[i].rss_mb;
      sxx += x * x;
      sxy += x * samples[i].rss_mb;
      ++count;
    }
    const double slope = (count * sxy - sx * sy) / (count * sxx - sx * sx);
    const bool levels = last_growth <= std::max(1.0, first_growth / 4);
    std::cout << fmt::format(
        "  VmRSS {:.1f} -> {:.1f} MB over jobs 0 -> {} ({:+.1f} MB), {:.1f} -> {:.1f} MB over jobs "
        "{} -> {} ({:+.1f} MB; {:+.2f} MB per 100 jobs, least squares): {}\n",
        first.rss_mb, middle.rss_mb, middle.jobs, first_growth, middle.rss_mb, last.rss_mb,
        middle.jobs, last.jobs, last_growth, slope,
        levels ? "levels off (the last half grew by at most a quarter of the first's, or 1 MB)"
               : "STILL GROWING (the last half grew by more than a quarter of the first's and "
                 "1 MB)");
    std::cout << fmt::format(
        "  of it anonymous {:+.1f} MB and {:+.1f} MB, file pages {:+.1f} MB and {:+.1f} MB\n",
        middle.anon_mb - first.anon_mb, last.anon_mb - middle.anon_mb,
        middle.file_mb - first.file_mb, last.file_mb - middle.file_mb);
  }

  int Wide() {
    const int n = flags_.wide;
    const auto ready_by = Clock::now() + std::chrono::minutes(10);
    int ready = 0;
    while ((ready = EligibleNodes("wide")) < n && Clock::now() < ready_by) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    if (ready < n) {
      std::cerr << fmt::format("operator_bench: {} of {} wide nodes Ready after 10 min\n", ready,
                               n);
      return 1;
    }
    std::cout << fmt::format(
                     "== one job on {} nodes (adaptive, primes < {} by trial division; load {}) "
                     "==\n",
                     n, flags_.wide_limit, LoadAverage())
              << std::flush;
    const std::string name = "wide";
    const auto before = SettledMetrics();
    Sampler sampler(*this);
    const auto start = Clock::now();
    auto created =
        client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.wide_limit, "adaptive", "wide"));
    if (!created.ok()) {
      std::cerr << "create " << name << ": " << created.status().ToString() << "\n";
      return 1;
    }
    const auto applied = Clock::now();
    // Seconds from the apply until half, 90 %, 99 % and all of the workers
    // had reported; a worker whose pod starts after the work ran out may
    // never report, so the largest count is printed too.
    const std::vector<double> shares = {0.5, 0.9, 0.99, 1.0};
    std::vector<std::optional<double>> to_reporting(shares.size());
    size_t status_bytes = 0, rows = 0;
    int reporting = 0;
    json summary;
    const auto deadline = applied + std::chrono::minutes(20);
    while (!seen_.Finished(name) && Clock::now() < deadline) {
      if (!to_reporting.back()) {
        reporting =
            std::max(reporting, NodesReporting(Scrape(flags_.metrics_url), flags_.ns, name));
        for (size_t i = 0; i < shares.size(); ++i) {
          if (!to_reporting[i] && reporting >= std::ceil(shares[i] * n)) {
            to_reporting[i] = Ms(Clock::now() - applied) / 1000;
          }
        }
      }
      if (auto job = jobs_->Get(flags_.ns + "/" + name)) {
        const json status = job->value("status", json::object());
        status_bytes = std::max(status_bytes, ballast::DumpJson(status).size());
        rows = std::max(rows, status.value("nodes", json::array()).size());
        if (status.contains("nodeSummary")) summary = status["nodeSummary"];
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const auto finished = seen_.Finished(name);
    const auto pods = seen_.AllPods(name, static_cast<size_t>(n), Clock::duration::zero());
    const auto job = jobs_->Get(flags_.ns + "/" + name);
    const json status = job ? job->value("status", json::object()) : json::object();
    status_bytes = std::max(status_bytes, ballast::DumpJson(status).size());
    const auto after = SettledMetrics();
    sampler.Stop(after);
    peak_rss_ = ProcStatusMb(flags_.operator_pid, "VmHWM:");
    reconcile_p99_ms_ = sampler.worst_p99 * 1000;
    const double wall_s = finished ? Ms(*finished - applied) / 1000 : NAN;
    const json count = status.value("/result/primes/count"_json_pointer, json());
    const uint64_t expected = PrimesBelow(flags_.wide_limit);
    std::cout << fmt::format(
        "  {} ({}), {} of {} items; result {} primes ({}: {} below {}); Create took {:.0f} ms\n",
        status.value("phase", "no phase"), finished ? "finished" : "gave up after 20 min",
        status.value("completedItems", 0), status.value("items", 0),
        count.is_number() ? count.dump() : "none",
        count.is_number() && count.get<uint64_t>() == expected ? "exact" : "WRONG", expected,
        flags_.wide_limit, Ms(applied - start));
    const double to_pods = pods ? Ms(*pods - applied) / 1000 : NAN;
    std::string reported;
    for (size_t i = 0; i < shares.size(); ++i) {
      reported += fmt::format("{}{:g} % {} s", i == 0 ? "" : ", ", shares[i] * 100,
                              Fixed(to_reporting[i].value_or(NAN), 1));
    }
    std::cout << fmt::format(
        "  apply -> all {} worker pods seen {} s; -> workers reporting: {} ({} of {} at most); "
        "-> Succeeded {} s\n",
        n, Fixed(to_pods, 1), reported, reporting, n, Fixed(wall_s, 1));
    std::cout << fmt::format(
        "  status: at most {:.1f} KiB as written (target <= 256 KiB; etcd's limit 1.5 MiB), {} "
        "rows "
        "of status.nodes; nodeSummary {}\n",
        static_cast<double>(status_bytes) / 1024, rows, ballast::DumpJson(summary));
    std::cout << fmt::format(
        "  operator peak RSS {:.1f} MB (VmHWM; {:.1f} MB idle at the start, {:.1f} MB the highest "
        "sampled); reconcile p99 {:.1f} ms (the summary's worst 60 s window; p50 {} ms at the "
        "end)\n",
        peak_rss_, rss_idle_, sampler.peak_rss, reconcile_p99_ms_,
        Fixed(Quantile(after, "0.5") * 1000, 1));
    std::string by_verb;
    double requests = 0;
    std::tie(requests, by_verb) = RequestsPerJob(before, after, 1);
    std::cout << fmt::format(
        "  API requests {:.0f} ({}); the API server's create round trip meanwhile p50 {} ms, p90 "
        "{} "
        "ms\n",
        requests, by_verb, Fixed(Percentile(sampler.api_rtt, 0.5), 0),
        Fixed(Percentile(sampler.api_rtt, 0.9), 0));
    DeleteJobs({name});
    return finished ? 0 : 1;
  }

  // Waits until the operator's reconciles_total has not moved for 3 s (at most 60 s).
  std::map<std::string, double> SettledMetrics() {
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

  void ApplyToPods(int nodes) {
    std::cout << fmt::format(
        "== apply -> all {} worker pods created ({} jobs applied one at a time, primes < {}; "
        "load {}) ==\n",
        nodes, flags_.sequential, flags_.small_limit, LoadAverage());
    std::vector<double> total, create_rtt, to_secret, to_first, to_last, cm_rtt, cm_watch;
    std::vector<std::string> names;
    const auto before = Scrape(flags_.metrics_url);
    const double cpu_before = CpuSeconds(flags_.operator_pid);
    for (int i = 0; i < flags_.sequential; ++i) {
      Probe(&cm_rtt, &cm_watch);
      const std::string name = fmt::format("apply-{}", i);
      const auto start = Clock::now();
      auto created =
          client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.small_limit, "adaptive", ""));
      const auto applied = Clock::now();
      if (!created.ok()) {
        std::cerr << "create " << name << ": " << created.status().ToString() << "\n";
        continue;
      }
      names.push_back(name);
      const auto last = seen_.AllPods(name, nodes, std::chrono::seconds(30));
      if (!last) {
        std::cerr << name << ": not every pod seen within 30 s\n";
        continue;
      }
      const auto secret = seen_.Secret(name, Clock::duration::zero());
      const auto first = seen_.FirstPod(name);
      total.push_back(Ms(*last - applied));
      create_rtt.push_back(Ms(applied - start));
      if (secret) to_secret.push_back(Ms(*secret - applied));
      if (secret && first) to_first.push_back(Ms(*first - *secret));
      if (first) to_last.push_back(Ms(*last - *first));
      // One at a time: the next job is applied once this one has finished.
      if (!seen_.WaitFinished({name}, std::chrono::seconds(120))) {
        std::cerr << name << ": not finished within 120 s\n";
      }
    }
    const auto after = SettledMetrics();
    const double cpu = CpuSeconds(flags_.operator_pid) - cpu_before;
    apply_p50_ = Percentile(total, 0.5);
    std::cout << fmt::format("  p50 {:6.1f} ms   (target <= 300 ms)\n", apply_p50_);
    std::cout << fmt::format("  p90 {:6.1f} ms\n  max {:6.1f} ms   ({} jobs measured)\n",
                             Percentile(total, 0.9), Percentile(total, 1.0), total.size());
    std::cout << "  where it goes (medians; every step seen from outside, on watches):\n";
    std::cout << fmt::format("    the job's Create call itself               {:6.1f} ms\n",
                             Median(create_rtt));
    std::cout << fmt::format(
        "    Create returned -> the job's token Secret  {:6.1f} ms   (the job's watch event to "
        "the operator, its queue, the Secret's create, our watch)\n",
        Median(to_secret));
    std::cout << fmt::format(
        "    token Secret -> the first pod              {:6.1f} ms   (weighing the nodes, "
        "registering the job, a pod create)\n",
        Median(to_first));
    std::cout << fmt::format("    first pod -> the last ({} pods)             {:6.1f} ms\n", nodes,
                             Median(to_last));
    std::cout << fmt::format(
        "    the API server's floor: a ConfigMap's create round trip {:.1f} ms; our watch has it "
        "{:.1f} ms after the create began\n",
        Median(cm_rtt), Median(cm_watch));
    const double reconciles = Metric(after, "ballast_operator_reconcile_seconds_count") -
                              Metric(before, "ballast_operator_reconcile_seconds_count");
    const double seconds = Metric(after, "ballast_operator_reconcile_seconds_sum") -
                           Metric(before, "ballast_operator_reconcile_seconds_sum");
    const double jobs = std::max<size_t>(1, names.size());
    std::cout << fmt::format(
        "    the operator, per job: {:.1f} reconcile passes of {:.1f} ms on average ({} ms of it "
        "the thread's CPU), {:.0f} ms of process CPU\n",
        reconciles / jobs, reconciles > 0 ? seconds / reconciles * 1000 : NAN,
        Fixed(MeanBetween(before, after, kReconcileCpuSeconds) * 1000, 1), cpu / jobs * 1000);
    DeleteJobs(names);
    std::cout << std::endl;
  }

  // A ConfigMap's create round trip and, when `watch` is given, how long
  // after the create began our watch saw it: the API server's share of any create-then-watch
  // chain. Thread-safe.
  void Probe(std::vector<double>* rtt, std::vector<double>* watch) {
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

  // While jobs run, every second: the reconcile summaries' p99 (each covers
  // a sliding window of 60 s, so the worst is kept), the operator's VmRSS,
  // and a ConfigMap's create round trip (the API server's latency meanwhile).
  class Sampler {
   public:
    explicit Sampler(Bench& bench) : bench_(bench), thread_([this] { Run(); }) {}
    ~Sampler() { Stop({}); }
    // Joins the thread and takes the last p99s from `final_metrics`.
    void Stop(const std::map<std::string, double>& final_metrics) {
      if (!thread_.joinable()) return;
      running_ = false;
      thread_.join();
      Take(final_metrics);
    }

    double worst_p99 = NAN, worst_cpu_p99 = NAN, peak_rss = 0;
    std::vector<double> api_rtt;  // ms

   private:
    void Run() {
      while (running_) {
        Take(Scrape(bench_.flags_.metrics_url));
        peak_rss = std::max(peak_rss, ProcStatusMb(bench_.flags_.operator_pid, "VmRSS:"));
        bench_.Probe(&api_rtt, nullptr);
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }
    void Take(const std::map<std::string, double>& metrics) {
      const double p99 = Quantile(metrics, "0.99");
      if (!std::isnan(p99) && !(p99 <= worst_p99)) worst_p99 = p99;
      const double cpu_p99 = Quantile(metrics, "0.99", kReconcileCpuSeconds);
      if (!std::isnan(cpu_p99) && !(cpu_p99 <= worst_cpu_p99)) worst_cpu_p99 = cpu_p99;
    }

    Bench& bench_;
    std::atomic<bool> running_{true};
    std::thread thread_;
  };

  void Concurrent(int nodes) {
    const int n = flags_.concurrent;
    std::cout << fmt::format(
        "== {} jobs at once (primes < {}, {} worker pods each, created back to back; load {}) "
        "==\n",
        n, flags_.small_limit, nodes, LoadAverage());
    const auto before = SettledMetrics();
    const double rss_before = ProcStatusMb(flags_.operator_pid, "VmRSS:");
    const double cpu_before = CpuSeconds(flags_.operator_pid);
    Sampler sampler(*this);
    std::vector<std::string> names;
    std::vector<Clock::time_point> applied;
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      const std::string name = fmt::format("many-{}", i);
      auto created =
          client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.small_limit, "adaptive", ""));
      if (!created.ok()) {
        std::cerr << "create " << name << ": " << created.status().ToString() << "\n";
        continue;
      }
      names.push_back(name);
      applied.push_back(Clock::now());
    }
    const double create_ms = Ms(Clock::now() - start);
    const bool all = seen_.WaitFinished(names, std::chrono::seconds(600));
    Clock::time_point end = start;
    int succeeded = 0;
    std::vector<double> to_pods, to_secret, to_first, to_last;
    for (size_t i = 0; i < names.size(); ++i) {
      if (auto at = seen_.Finished(names[i])) end = std::max(end, *at);
      auto job = jobs_->Get(flags_.ns + "/" + names[i]);
      if (job && job->value("/status/phase"_json_pointer, "") == "Succeeded") ++succeeded;
      const auto secret = seen_.Secret(names[i], Clock::duration::zero());
      const auto first = seen_.FirstPod(names[i]);
      const auto last = seen_.AllPods(names[i], nodes, Clock::duration::zero());
      if (last) to_pods.push_back(Ms(*last - applied[i]));
      if (secret) to_secret.push_back(Ms(*secret - applied[i]));
      if (secret && first) to_first.push_back(Ms(*first - *secret));
      if (first && last) to_last.push_back(Ms(*last - *first));
    }
    wall_s_ = Ms(end - start) / 1000;
    // Until the finished jobs' last passes (their workers exiting) are done.
    const auto after = SettledMetrics();
    sampler.Stop(after);
    const double cpu = CpuSeconds(flags_.operator_pid) - cpu_before;
    peak_rss_ = ProcStatusMb(flags_.operator_pid, "VmHWM:");
    reconcile_p99_ms_ = sampler.worst_p99 * 1000;
    const double count = Metric(after, "ballast_operator_reconcile_seconds_count") -
                         Metric(before, "ballast_operator_reconcile_seconds_count");
    const double jobs = std::max<size_t>(1, names.size());

    std::cout << fmt::format(
        "  {} of {} Succeeded{}, the last {:.1f} s after the first Create (the creates took {:.0f} "
        "ms)\n",
        succeeded, names.size(), all ? "" : " (gave up after 600 s)", wall_s_, create_ms);
    std::cout << fmt::format(
        "  operator peak RSS   {:6.1f} MB   (target <= 60 MB; VmHWM; VmRSS {:.1f} MB idle at the "
        "start, {:.1f} MB before these jobs, {:.1f} MB the highest sampled)\n",
        peak_rss_, rss_idle_, rss_before, sampler.peak_rss);
    std::cout << fmt::format(
        "  reconcile p99       {:6.1f} ms   (target <= 100 ms; the summary's worst 60 s window; "
        "at the end p50 {} ms, p90 {} ms; {:.0f} passes, {:.1f} per job, mean {:.1f} ms)\n",
        reconcile_p99_ms_, Fixed(Quantile(after, "0.5") * 1000, 1),
        Fixed(Quantile(after, "0.9") * 1000, 1), count, count / jobs,
        MeanBetween(before, after, kReconcileSeconds) * 1000);
    std::cout << fmt::format(
        "    of it the reconciling thread's CPU: p99 {} ms (worst window), mean {} ms; the rest is "
        "waiting for the API server and for a core\n",
        Fixed(sampler.worst_cpu_p99 * 1000, 1),
        Fixed(MeanBetween(before, after, kReconcileCpuSeconds) * 1000, 1));
    std::string by_verb;
    std::tie(requests_per_job_, by_verb) = RequestsPerJob(before, after, jobs);
    std::cout << fmt::format(
        "  API requests / job  {:6.2f}      ({}; {:.0f} in all, from apply to Succeeded and the "
        "workers' exit)\n",
        requests_per_job_, by_verb, requests_per_job_ * jobs);
    std::cout << fmt::format("  the operator's CPU  {:6.0f} ms / job\n", cpu / jobs * 1000);
    const auto p50_max = [](const std::vector<double>& values) {
      return fmt::format("{} / {}", Fixed(Percentile(values, 0.5), 0),
                         Fixed(Percentile(values, 1.0), 0));
    };
    std::cout << fmt::format(
        "  meanwhile, p50 / max in ms: apply -> all pods {} (Create returned -> token Secret {}, "
        "-> first pod {}, -> last pod {}); the API server's create round trip {} (p90 {})\n",
        p50_max(to_pods), p50_max(to_secret), p50_max(to_first), p50_max(to_last),
        p50_max(sampler.api_rtt), Fixed(Percentile(sampler.api_rtt, 0.9), 0));
    PrintCacheSize();
    DeleteJobs(names);
    std::cout << std::endl;
  }

  // What the operator's pod and job caches hold at the peak: this program
  // watches the same objects and keeps them whole (managedFields included),
  // the operator without managedFields. Their size as JSON text, and the
  // heap the pods take as nlohmann::json both ways.
  void PrintCacheSize() {
    double text = 0, managed = 0;
    const auto jobs = jobs_->List();
    const auto pods = pods_->List();
    for (const auto* list : {&pods, &jobs}) {
      for (const auto& object : *list) {
        text += static_cast<double>(object->dump().size());
        managed += static_cast<double>(
            ballast::DumpJson(object->at("metadata").value("managedFields", json())).size());
      }
    }
    auto heap_of_pods = [&](bool trimmed) {
      const size_t before = mallinfo2().uordblks;
      std::vector<json> copies;
      for (const auto& pod : pods) {
        copies.push_back(*pod);
        if (trimmed) ballast::kube::DropManagedFields(copies.back());
      }
      return static_cast<double>(mallinfo2().uordblks - before);
    };
    const double whole = heap_of_pods(false);
    const double trimmed = heap_of_pods(true);
    std::cout << fmt::format(
        "  the caches then: {} pods and {} jobs, {:.1f} MB as JSON text ({:.0f} % of it "
        "managedFields); the pods take {:.1f} MB of heap whole, {:.1f} MB as the operator keeps "
        "them\n",
        pods.size(), jobs.size(), text / 1e6, text > 0 ? managed / text * 100 : 0.0, whole / 1e6,
        trimmed / 1e6);
  }

  void Efficiency() {
    std::string pool = flags_.pool;
    const int nodes = pool.empty() ? 0 : EligibleNodes(pool);
    std::string where = fmt::format("nodeSelector {}: {} ({} nodes)", kPoolLabel, pool, nodes);
    if (nodes == 0) {
      where = fmt::format("every node (no node is labelled {}={} yet, so no nodeSelector)",
                          kPoolLabel, pool);
      pool.clear();
    }
    std::cout << fmt::format(
        "== end-to-end efficiency: primes < {} on {}; pod start included; {} runs per policy, "
        "interleaved; load {} ==\n",
        flags_.limit, where, flags_.repeat, LoadAverage());
    std::vector<std::string> policies;
    std::stringstream list(flags_.policies);
    for (std::string p; std::getline(list, p, ',');) policies.push_back(p);
    std::map<std::string, std::vector<json>> runs;
    for (int r = 0; r < flags_.repeat; ++r) {
      for (const auto& policy : policies) {
        const std::string name = fmt::format("eff-{}-{}", policy, r);
        WaitNoWorkersRunning();
        if (!client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.limit, policy, pool))
                 .ok()) {
          std::cerr << "create " << name << " failed\n";
          continue;
        }
        if (!seen_.WaitFinished({name}, std::chrono::seconds(300))) {
          std::cerr << name << ": not finished within 300 s\n";
        } else {
          const json status = jobs_->Get(flags_.ns + "/" + name)->value("status", json::object());
          if (status.value("phase", "") == "Succeeded") {
            runs[policy].push_back(status);
          } else {
            std::cerr << name << ": " << status.value("phase", "") << " "
                      << ballast::DumpJson(status) << "\n";
          }
        }
        DeleteJobs({name});
      }
    }
    std::cout << "  policy     efficiency   makespan s   ideal s   makespan / ideal   "
                 "job's estimate   efficiency of each run\n";
    std::set<std::string> references;
    for (const auto& policy : policies) {
      std::vector<double> eff, makespan, ideal, estimated;
      std::string each;
      for (const auto& status : runs[policy]) {
        eff.push_back(status.value("efficiency", NAN));
        makespan.push_back(status.value("makespanSeconds", NAN));
        ideal.push_back(status.value("idealSeconds", NAN));
        estimated.push_back(status.value("estimatedEfficiency", NAN));
        references.insert(status.value("efficiencyReference", "?") + ", " +
                          status.value("limitBound", "?") + "-bound");
        each += fmt::format("{}{:.3f}", each.empty() ? "" : " ", eff.back());
      }
      efficiency_.emplace_back(policy, Median(eff));
      std::cout << fmt::format("  {:<10} {:>10} {:>12} {:>9} {:>18} {:>16}   {}\n", policy,
                               Fixed(Median(eff), 3), Fixed(Median(makespan), 2),
                               Fixed(Median(ideal), 2), Fixed(Median(makespan) / Median(ideal), 2),
                               Fixed(Median(estimated), 3), each);
    }
    std::cout << fmt::format(
        "  (medians; efficiency against status.efficiencyReference: {}; the job's estimate "
        "is against the speeds it learned in the run)\n",
        fmt::join(references, "; "));
    // Where a policy's efficiency moved, its priors say why: what the first
    // run started from per node (the history of earlier jobs, or the
    // profile), and how far that was from the speed it measured.
    std::cout << "  priors of each policy's first run: node source value (samples) error\n";
    for (const auto& policy : policies) {
      if (runs[policy].empty()) continue;
      std::string line;
      for (const json& row : runs[policy].front().value("nodes", json::array())) {
        const json prior = row.value("prior", json::object());
        line +=
            fmt::format("  {} {} {} ({}) {}", row.value("name", ""), prior.value("source", "-"),
                        Fixed(prior.value("value", NAN), 3), Fixed(prior.value("samples", NAN), 0),
                        Fixed(row.value("priorError", NAN), 3));
      }
      std::cout << fmt::format("  {:<10}{}\n", policy, line);
    }
    std::cout << std::endl;
  }

  // The efficiency jobs need the CPU to themselves: wait (at most 60 s) until
  // no worker pod of an earlier job runs.
  void WaitNoWorkersRunning() {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      bool running = false;
      for (const auto& pod : pods_->List()) {
        const std::string phase = pod->value("/status/phase"_json_pointer, "");
        running |= phase == "Running" || phase == "Pending";
      }
      if (!running) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  void PrintFigures() {
    const std::string at_once = fmt::format("{} jobs at once: ", flags_.concurrent);
    std::vector<Figure> figures = {
        {"apply -> all worker pods, p50", apply_p50_, "ms", 300, true, 1},
        {at_once + "operator peak RSS", peak_rss_, "MB", 60, true, 1},
        {at_once + "reconcile p99", reconcile_p99_ms_, "ms", 100, true, 1},
        {at_once + "API requests / job", requests_per_job_, "", NAN, true, 1},
        {at_once + "wall time to all Succeeded", wall_s_, "s", NAN, true, 1},
    };
    for (const auto& [policy, eff] : efficiency_) {
      figures.push_back({"efficiency, " + policy, eff, "", NAN, false, 3});
    }
    std::cout << "== figures ==\n";
    for (const auto& f : figures) {
      std::string target = "-";
      std::string verdict;
      if (!std::isnan(f.target)) {
        target = fmt::format("{} {:g} {}", f.at_most ? "<=" : ">=", f.target, f.unit);
        if (std::isnan(f.value)) {
          verdict = "not measured";
        } else if (f.at_most ? f.value <= f.target : f.value >= f.target) {
          verdict = "met";
        } else {
          verdict = fmt::format("MISSED by {:.{}f} {} ({:.1f} %)", std::abs(f.value - f.target),
                                f.decimals, f.unit, std::abs(f.value - f.target) / f.target * 100);
        }
      }
      std::cout << fmt::format("  {:<44} {:>9} {:<3} {:<12} {}\n", f.name,
                               Fixed(f.value, f.decimals), f.unit, target, verdict);
    }
    std::cout << std::flush;
  }

  ballast::kube::KubeClient& client_;
  const Flags& flags_;
  Observer seen_;
  const Informer* pods_ = nullptr;
  const Informer* jobs_ = nullptr;
  double rss_idle_ = NAN, apply_p50_ = NAN, peak_rss_ = NAN, reconcile_p99_ms_ = NAN,
         requests_per_job_ = NAN, wall_s_ = NAN;
  std::vector<std::pair<std::string, double>> efficiency_;
  std::atomic<int> probes_{0};
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{
      "The operator's figures against the test control plane; run through bench/operator-bench, "
      "which starts both."};
  app.add_option("--kubeconfig", flags.kubeconfig)->required();
  app.add_option("--namespace", flags.ns, "the namespace the operator reconciles")->required();
  app.add_option("--operator-pid", flags.operator_pid, "for its VmHWM")->required();
  app.add_option("--metrics-url", flags.metrics_url, "the operator's /metrics")->required();
  app.add_option("--sequential", flags.sequential, "jobs applied one at a time")
      ->capture_default_str();
  app.add_option("--concurrent", flags.concurrent, "jobs applied at once")->capture_default_str();
  app.add_option("--small-limit", flags.small_limit, "primes limit of those jobs")
      ->capture_default_str();
  app.add_option("--repeat", flags.repeat, "efficiency runs per policy")->capture_default_str();
  app.add_option("--limit", flags.limit, "primes limit of the efficiency job")
      ->capture_default_str();
  app.add_option("--policies", flags.policies)->capture_default_str();
  app.add_option("--wide", flags.wide,
                 "instead of the other phases: one job on this many nodes labelled "
                 "ballast.io/pool=wide (bench/operator-bench --wide N registers them)");
  app.add_option("--wide-limit", flags.wide_limit, "primes limit of the wide job")
      ->capture_default_str();
  app.add_option("--churn", flags.churn,
                 "instead of the other phases: this many jobs created, finished and deleted in "
                 "waves, the operator's VmRSS sampled as they go");
  app.add_option("--churn-wave", flags.churn_wave, "jobs at once in the churn phase")
      ->capture_default_str();
  app.add_option("--churn-every", flags.churn_every, "jobs between two samples of the churn phase")
      ->capture_default_str();
  app.add_option("--churn-pause", flags.churn_pause_s,
                 "seconds to wait after each sample of the churn phase, with no job in the "
                 "namespace (for a look at the operator at rest, e.g. malloc_stats through gdb)")
      ->capture_default_str();
  app.add_option("--pool", flags.pool,
                 "the efficiency jobs' nodeSelector ballast.io/pool (none when no node has it)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto config = ballast::kube::LoadKubeconfig(flags.kubeconfig);
  if (!config.ok()) {
    std::cerr << config.status().ToString() << "\n";
    return 2;
  }
  auto client = ballast::kube::HttpKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << client.status().ToString() << "\n";
    return 2;
  }
  Bench bench(**client, flags);
  return bench.Main();
}
