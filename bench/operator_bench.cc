// The operator against the test control plane (bench/operator-bench starts
// both and runs this): every figure of issue 5's targets beside its target,
// in one run.
//
//   apply -> pods    : from the Create of a WeightedJob returning to a pod
//                      watch having seen every worker pod of it (one per
//                      eligible node), jobs applied one at a time; p50 <= 300 ms
//   50 at once       : the operator's peak RSS (VmHWM, <= 60 MB), its
//                      reconcile p99 (its /metrics summary, <= 100 ms), API
//                      requests per job by verb (bounded: no polling), and the
//                      wall time until all are Succeeded
//   efficiency       : status.efficiency of one job per policy on seed 000's
//                      boards, pod start included, median of --repeat runs,
//                      beside the makespan and its physical limit; adaptive >= 0.85
//
// A plain program (it drives processes and an API server, not a loop
// Google Benchmark could time).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "operator/kube/http_client.h"
#include "operator/kube/informer.h"
#include "operator/kube/kubeconfig.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using ballast::kube::ResourceRef;

const ResourceRef kJobs{"ballast.io", "v1alpha1", "weightedjobs", true, "", ""};
const ResourceRef kPods{"", "v1", "pods", true, "", ""};

struct Flags {
  std::string kubeconfig;
  std::string ns;
  int operator_pid = 0;
  std::string metrics_url;
  int sequential = 20;
  int concurrent = 50;
  int repeat = 3;
  uint64_t limit = 400000;
  std::string policies = "equal,weighted,mms,adaptive";
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 0.5); }

// The output of `command`.
std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
}

// name{labels} -> value of the operator's /metrics.
std::map<std::string, double> Scrape(const std::string& url) {
  std::map<std::string, double> metrics;
  std::istringstream in(Run("curl -s " + url));
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

std::map<std::string, double> ApiRequests(const std::map<std::string, double>& metrics) {
  static const std::regex kVerb(R"re(ballast_operator_api_requests\{verb="([a-z]+)"\})re");
  std::map<std::string, double> out;
  for (const auto& [key, value] : metrics) {
    std::smatch match;
    if (std::regex_match(key, match, kVerb)) out[match[1]] = value;
  }
  return out;
}

double PeakRssMb(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  }
  return 0;
}

json PrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
               bool seed000) {
  json spec = {{"workload", {{"primes", {{"limit", limit}}}}}, {"policy", policy}};
  if (seed000) spec["nodeSelector"] = {{"ballast.io/pool", "seed000"}};
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

class Bench {
 public:
  Bench(ballast::kube::KubeClient& client, const Flags& flags) : client_(client), flags_(flags) {}

  int Main() {
    ballast::kube::InformerOptions pod_options;
    pod_options.label_selector = "ballast.io/job";
    ballast::kube::Informer pods(client_, kPods.In(flags_.ns), pod_options,
                                 {[this](const json& pod) { SawPod(pod); }, nullptr, nullptr});
    ballast::kube::Informer jobs(client_, kJobs.In(flags_.ns));
    pods.Start();
    jobs.Start();
    if (!pods.WaitForSync(std::chrono::seconds(30)) || !jobs.WaitForSync(std::chrono::seconds(30))) {
      std::cerr << "operator_bench: the caches did not sync\n";
      return 1;
    }
    jobs_ = &jobs;
    const int nodes = CountNodes();
    std::cout << fmt::format("operator bench: namespace {}, {} eligible nodes, operator pid {}\n\n",
                             flags_.ns, nodes, flags_.operator_pid);
    ApplyToPods(nodes);
    Concurrent();
    Efficiency();
    return 0;
  }

 private:
  int CountNodes() {
    auto list = client_.List({"", "v1", "nodes", false, "", ""});
    return list.ok() ? static_cast<int>(list->items.size()) : 0;
  }

  void SawPod(const json& pod) {
    const std::string job = pod["metadata"]["labels"].value("ballast.io/job", "");
    std::lock_guard lock(mu_);
    auto& seen = pods_seen_[job];
    seen.first += 1;
    seen.second = Clock::now();
    cv_.notify_all();
  }

  // Waits until `count` pods of `job` were seen; returns when the last was.
  std::optional<Clock::time_point> WaitPods(const std::string& job, int count,
                                            std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    const bool seen = cv_.wait_for(lock, timeout, [&] { return pods_seen_[job].first >= count; });
    if (!seen) return std::nullopt;
    return pods_seen_[job].second;
  }

  bool WaitPhase(const std::vector<std::string>& names, const std::string& phase,
                 std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      size_t done = 0;
      for (const auto& name : names) {
        auto job = jobs_->Get(flags_.ns + "/" + name);
        if (job && job->value("/status/phase"_json_pointer, "") == phase) ++done;
      }
      if (done == names.size()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  void DeleteAll(const std::vector<std::string>& names) {
    for (const auto& name : names) (void)client_.Delete(kJobs.In(flags_.ns).Named(name));
    // Let the garbage collector and the node agent clear the pods.
    for (int i = 0; i < 600; ++i) {
      auto list = client_.List(kPods.In(flags_.ns));
      if (list.ok() && list->items.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void ApplyToPods(int nodes) {
    std::vector<double> latencies;
    std::vector<std::string> names;
    for (int i = 0; i < flags_.sequential; ++i) {
      const std::string name = fmt::format("apply-{}", i);
      auto created = client_.Create(kJobs.In(flags_.ns), PrimesJob(name, 20000, "adaptive", false));
      const auto applied = Clock::now();
      if (!created.ok()) {
        std::cerr << "create " << name << ": " << created.status().ToString() << "\n";
        continue;
      }
      names.push_back(name);
      auto last = WaitPods(name, nodes, std::chrono::seconds(30));
      if (!last) {
        std::cerr << name << ": not every pod within 30 s\n";
        continue;
      }
      latencies.push_back(Seconds(*last - applied) * 1000);
      WaitPhase({name}, "Succeeded", std::chrono::seconds(60));
    }
    std::cout << "apply -> all worker pods created (" << latencies.size() << " jobs, one at a time, "
              << nodes << " pods each)\n";
    std::cout << fmt::format("  p50 {:7.1f} ms   (target <= 300 ms)\n", Percentile(latencies, 0.5));
    std::cout << fmt::format("  p90 {:7.1f} ms\n  max {:7.1f} ms\n\n", Percentile(latencies, 0.9),
                             Percentile(latencies, 1.0));
    DeleteAll(names);
  }

  void Concurrent() {
    const auto before = ApiRequests(Scrape(flags_.metrics_url));
    std::vector<std::string> names;
    const auto start = Clock::now();
    for (int i = 0; i < flags_.concurrent; ++i) {
      const std::string name = fmt::format("many-{}", i);
      if (client_.Create(kJobs.In(flags_.ns), PrimesJob(name, 20000, "adaptive", false)).ok()) {
        names.push_back(name);
      }
    }
    const bool all = WaitPhase(names, "Succeeded", std::chrono::seconds(600));
    const double wall = Seconds(Clock::now() - start);
    // Let the finished jobs' last passes (their pods exiting) settle.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    const auto metrics = Scrape(flags_.metrics_url);
    const auto after = ApiRequests(metrics);
    const double p99 = metrics.count("ballast_operator_reconcile_seconds{quantile=\"0.99\"}")
                           ? metrics.at("ballast_operator_reconcile_seconds{quantile=\"0.99\"}")
                           : -1;
    const double p50 = metrics.count("ballast_operator_reconcile_seconds{quantile=\"0.5\"}")
                           ? metrics.at("ballast_operator_reconcile_seconds{quantile=\"0.5\"}")
                           : -1;
    std::cout << fmt::format("{} jobs at once: {} in {:.1f} s\n", names.size(),
                             all ? "all Succeeded" : "NOT all Succeeded", wall);
    std::cout << fmt::format("  operator peak RSS   {:6.1f} MB   (target <= 60 MB)\n",
                             PeakRssMb(flags_.operator_pid));
    std::cout << fmt::format("  reconcile p99       {:6.1f} ms   (target <= 100 ms; p50 {:.1f} ms)\n",
                             p99 * 1000, p50 * 1000);
    double total = 0;
    std::string by_verb;
    for (const auto& [verb, count] : after) {
      const double delta = count - (before.count(verb) ? before.at(verb) : 0);
      total += delta;
      if (delta > 0) by_verb += fmt::format(" {} {:.1f}", verb, delta / names.size());
    }
    std::cout << fmt::format("  API requests / job  {:6.1f}      (by verb:{})\n\n",
                             total / names.size(), by_verb);
    DeleteAll(names);
  }

  void Efficiency() {
    std::cout << fmt::format(
        "end-to-end efficiency, primes < {} on seed 000's boards, pod start included "
        "(median of {})\n",
        flags_.limit, flags_.repeat);
    std::cout << "  policy     makespan s   ideal s   efficiency   (target: adaptive >= 0.85)\n";
    std::stringstream list(flags_.policies);
    std::string policy;
    int serial = 0;
    while (std::getline(list, policy, ',')) {
      std::vector<double> makespans, ideals, efficiencies;
      for (int r = 0; r < flags_.repeat; ++r) {
        const std::string name = fmt::format("eff-{}-{}", policy, serial++);
        if (!client_.Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.limit, policy, true)).ok()) {
          continue;
        }
        if (!WaitPhase({name}, "Succeeded", std::chrono::seconds(300))) {
          std::cerr << name << ": not Succeeded in 300 s\n";
          DeleteAll({name});
          continue;
        }
        const json status = jobs_->Get(flags_.ns + "/" + name)->value("status", json::object());
        makespans.push_back(status.value("makespanSeconds", 0.0));
        ideals.push_back(status.value("idealSeconds", 0.0));
        efficiencies.push_back(status.value("efficiency", 0.0));
        DeleteAll({name});
      }
      std::cout << fmt::format("  {:<10} {:10.2f} {:9.2f} {:12.3f}\n", policy, Median(makespans),
                               Median(ideals), Median(efficiencies));
    }
  }

  ballast::kube::KubeClient& client_;
  const Flags& flags_;
  const ballast::kube::Informer* jobs_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::pair<int, Clock::time_point>> pods_seen_;
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"The operator's figures against the test control plane (run bench/operator-bench)."};
  app.add_option("--kubeconfig", flags.kubeconfig)->required();
  app.add_option("--namespace", flags.ns)->required();
  app.add_option("--operator-pid", flags.operator_pid)->required();
  app.add_option("--metrics-url", flags.metrics_url, "the operator's /metrics")->required();
  app.add_option("--sequential", flags.sequential, "jobs applied one at a time")->capture_default_str();
  app.add_option("--concurrent", flags.concurrent, "jobs applied at once")->capture_default_str();
  app.add_option("--repeat", flags.repeat, "runs per policy")->capture_default_str();
  app.add_option("--limit", flags.limit, "primes limit of the efficiency job")->capture_default_str();
  app.add_option("--policies", flags.policies)->capture_default_str();
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
