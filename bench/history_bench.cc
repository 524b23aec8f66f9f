// What the history lookup adds to a job's start (issue 15: <= 50 ms at 100
// nodes): a real Prometheus (Debian's package, on loopback) holding a week of
// the coordinator's speed gauge — N nodes, 20 jobs of each of primes and exec,
// each job 5 minutes of 15 s samples — and the throttled gauge of a fifth of
// the nodes; PrometheusHistory::Lookup (the one query for all nodes, the
// answer parsed) timed over repeated lookups at 100 and 1,000 nodes. Beside
// it the store's side without Prometheus: reading a full store's text and
// looking 100 nodes up (the ConfigMap's GET itself is one API round trip).
//
// A plain program; figures only, it never fails on speed (exit 1 only when
// Prometheus cannot be started).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "history/speed_store.h"
#include "operator/controller/prometheus_history_source.h"
#include "support/real_prometheus.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kJobs = 20;
constexpr int kLookups = 30;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string NodeName(int i) { return fmt::format("node-{:04d}", i); }

// A week of jobs on `nodes` nodes, ending `now`.
std::string History(int nodes, double now) {
  std::string samples;
  for (const char* workload : {"primes", "exec"}) {
    for (int job = 0; job < kJobs; ++job) {
      const double end = now - 600 - job * (7 * 86400.0 / kJobs);
      for (int node = 0; node < nodes; ++node) {
        const double speed = 1 + node % 7;
        for (int k = 0; k < 20; ++k) {
          samples += ballast::testing::SpeedSample(fmt::format("{}-{}", workload, job), workload,
                                                   NodeName(node), speed, end - (19 - k) * 15);
        }
      }
    }
  }
  for (int node = 0; node < nodes; node += 5) {
    for (int k = 0; k < 7 * 24; ++k) {
      samples +=
          ballast::testing::ThrottledSample(NodeName(node), k % 2, now - 7 * 86400 + k * 3600);
    }
  }
  return samples;
}

struct Figures {
  double p50 = 0, p99 = 0, max = 0;
  double cpu_ms = 0;  // Prometheus's CPU time per lookup
  size_t nodes = 0;
};

// CPU seconds process `pid` has used (user + system), from /proc.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) {
      stime = std::stod(field);
      break;
    }
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Figures TimeLookups(ballast::controller::PrometheusHistory& source, pid_t server, int nodes,
                    double now) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) names.push_back(NodeName(i));
  std::vector<double> ms;
  Figures figures;
  const double cpu_start = CpuSeconds(server);
  for (int i = 0; i < kLookups; ++i) {
    const auto start = Clock::now();
    const auto lookup = source.Lookup("primes", names, now);
    ms.push_back(Ms(Clock::now() - start));
    if (!lookup.trouble.empty()) fmt::print("  lookup trouble: {}\n", lookup.trouble);
    figures.nodes = lookup.nodes.size();
  }
  figures.cpu_ms = (CpuSeconds(server) - cpu_start) * 1000 / kLookups;
  std::sort(ms.begin(), ms.end());
  figures.p50 = ms[ms.size() / 2];
  figures.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  figures.max = ms.back();
  return figures;
}

void StoreFigures() {
  ballast::history::SpeedStore store;
  const ballast::history::StoreLimits limits;
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back(NodeName(i));
  for (int job = 0; job < 16; ++job) {
    for (const char* workload : {"primes", "matmul", "exec"}) {
      std::map<std::string, double> speeds;
      for (int i = 0; i < 100; ++i) speeds[NodeName(i)] = 1 + (i + job) % 7;
      ballast::history::RecordJob(store, workload, speeds, 1.8e9 + job, limits);
    }
  }
  const std::string text = ballast::history::StoreToText(store, limits);
  const auto start = Clock::now();
  size_t found = 0;
  for (int i = 0; i < kLookups; ++i) {
    auto read = ballast::history::StoreFromText(text, limits);
    if (read.ok())
      found = ballast::history::LookupHistory(*read, "primes", names, 1.8e9 + 20).size();
  }
  fmt::print(
      "store (no Prometheus): 100 nodes x 3 kinds x 16 jobs, {} bytes of text: read + "
      "lookup {:.2f} ms per job start ({} nodes found), plus one ConfigMap GET\n",
      text.size(), Ms(Clock::now() - start) / kLookups, found);
}

}  // namespace

// The machine's 1-minute load average and its cores: figures of a loaded
// machine are slower by about load / cores.
std::string Load() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return fmt::format("load average {:.1f} on {} cores", load, std::thread::hardware_concurrency());
}

int main() {
  const double now = static_cast<double>(std::time(nullptr));
  fmt::print("history bench ({})\n", Load());
  bool measured = false;
  for (int nodes : {100, 1000}) {
    std::string why;
    const auto setup = Clock::now();
    auto server = ballast::testing::RealPrometheus::Start(History(nodes, now), &why);
    if (!server) {
      fmt::print("history bench: no Prometheus: {}\n", why);
      continue;
    }
    ballast::controller::PrometheusHistoryOptions options;
    options.url = server->url();
    options.timeout = std::chrono::milliseconds(10000);
    auto source = ballast::controller::PrometheusHistory::Create(options);
    if (!source.ok()) return 1;
    (void)(*source)->Lookup("primes", {}, now);  // first touch of the blocks
    const Figures figures = TimeLookups(**source, server->pid(), nodes, now);
    fmt::print(
        "prometheus: {} nodes, 2 kinds x {} jobs in a 7-day window ({:.1f} s to set up): "
        "lookup p50 {:.1f} ms, p99 {:.1f} ms, max {:.1f} ms over {} lookups{}; Prometheus's "
        "CPU {:.1f} ms per lookup; {} nodes answered\n",
        nodes, kJobs, Ms(Clock::now() - setup) / 1000, figures.p50, figures.p99, figures.max,
        kLookups, nodes == 100 ? " (target <= 50 ms)" : "", figures.cpu_ms, figures.nodes);
    measured = true;
  }
  StoreFigures();
  return measured ? 0 : 1;
}
