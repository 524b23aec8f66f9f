// What the history lookup adds to a job's start (issue 15: <= 50 ms at 100
// nodes): a real Prometheus (Debian's package, on loopback) holding a week of
// the coordinator's speed gauges — N nodes, 20 jobs of each of primes and
// exec, each job 5 minutes of 15 s samples, with the timestamp gauge beside
// them — and the throttled gauge of a fifth of the nodes;
// PrometheusHistory::Lookup (the one query for all nodes, the answer parsed)
// timed over repeated lookups at 100 and 1,000 nodes, side by side with the
// query whose age is a subquery over the speeds (the form before the
// timestamp gauge, and the fallback for an older coordinator's history),
// asked in turn so both see the same load. Then each of the four parts of
// each form alone, and Prometheus's CPU for each. Beside it the store's side
// without Prometheus: reading a full store's text and looking 100 nodes up
// (the ConfigMap's GET itself is one API round trip).
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
          samples +=
              ballast::testing::MeasuredSpeedSamples(fmt::format("{}-{}", workload, job), workload,
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
  std::vector<double> ms;
  double cpu_s = 0;  // Prometheus's CPU time over the lookups
  size_t nodes = 0;
  double p50() const { return At(0.5); }
  double p99() const { return At(0.99); }
  double cpu_ms() const { return ms.empty() ? 0 : cpu_s * 1000 / static_cast<double>(ms.size()); }
  double At(double q) const {
    if (ms.empty()) return 0;
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()))];
  }
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

// One timed lookup into `figures`: `lookup` returns the nodes answered.
template <typename Lookup>
void TimeOne(Figures& figures, pid_t server, Lookup&& lookup) {
  const double cpu_start = CpuSeconds(server);
  const auto start = Clock::now();
  figures.nodes = lookup();
  figures.ms.push_back(Ms(Clock::now() - start));
  figures.cpu_s += CpuSeconds(server) - cpu_start;
}

// The nodes in the answer to `query` (the query and its parsing, as Lookup
// does them).
size_t Ask(ballast::controller::PrometheusHistory& source, const std::string& query, double now) {
  auto body = source.Query(query, now);
  if (!body.ok()) {
    fmt::print("  query trouble: {}\n", body.status().ToString());
    return 0;
  }
  auto history = ballast::history::ParseHistoryAnswer(*body);
  if (!history.ok()) fmt::print("  answer trouble: {}\n", history.status().ToString());
  return history.ok() ? history->size() : 0;
}

// The parts of a history query ("speed", "samples", "age", "throttled"):
// its top-level alternatives.
std::vector<std::string> Parts(const std::string& query) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = query.find(" or ", from)) != std::string::npos; from = at + 4) {
    parts.push_back(query.substr(from, at - from));
  }
  parts.push_back(query.substr(from));
  return parts;
}

void Print(const char* what, const Figures& f, const char* target) {
  fmt::print("  {:<34} p50 {:6.1f} ms  p99 {:6.1f} ms  CPU {:5.1f} ms  {} nodes{}\n", what, f.p50(),
             f.p99(), f.cpu_ms(), f.nodes, target);
}

// The lookup (HistoryQuery, the timestamp gauge's age) and the query with the
// subquery's age, asked in turn; then each part of both alone.
void Compare(ballast::controller::PrometheusHistory& source, pid_t server, int nodes, double now) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) names.push_back(NodeName(i));
  const double window = ballast::controller::PrometheusHistoryOptions{}.window_seconds;
  const std::string before = ballast::history::HistoryQueryAgeBySubquery("primes", window);
  Figures now_form, old_form;
  for (int i = 0; i < kLookups; ++i) {
    TimeOne(now_form, server, [&] {
      const auto lookup = source.Lookup("primes", names, now);
      if (!lookup.trouble.empty()) fmt::print("  lookup trouble: {}\n", lookup.trouble);
      return lookup.nodes.size();
    });
    TimeOne(old_form, server, [&] { return Ask(source, before, now); });
  }
  const char* target = nodes == 100 ? "  (target <= 50 ms)" : "";
  Print("lookup, age from the gauge (now)", now_form, target);
  Print("before: age by subquery", old_form, target);
  const std::vector<std::string> now_parts =
      Parts(ballast::history::HistoryQuery("primes", window));
  const std::vector<std::string> old_parts = Parts(before);
  const char* names_of_parts[] = {"speed", "samples", "age", "throttled"};
  if (now_parts.size() != 4 || old_parts.size() != 4) return;
  for (int part = 0; part < 4; ++part) {
    for (const bool now_part : {true, false}) {
      if (part != 2 && !now_part) continue;  // the same text in both forms
      Figures figures;
      for (int i = 0; i < kLookups / 2; ++i) {
        TimeOne(figures, server, [&] {
          auto body = source.Query((now_part ? now_parts : old_parts)[part], now);
          return body.ok() ? body->size() : 0;
        });
      }
      const std::string what =
          part != 2 ? fmt::format("part {} alone", names_of_parts[part])
                    : fmt::format("part age alone, {}", now_part ? "gauge" : "subquery");
      fmt::print("  {:<34} p50 {:6.1f} ms  p99 {:6.1f} ms  CPU {:5.1f} ms\n", what, figures.p50(),
                 figures.p99(), figures.cpu_ms());
    }
  }
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
    fmt::print(
        "prometheus: {} nodes, 2 kinds x {} jobs in a 7-day window ({:.1f} s to set up), {} "
        "lookups of each form in turn ({}):\n",
        nodes, kJobs, Ms(Clock::now() - setup) / 1000, kLookups, Load());
    Compare(**source, server->pid(), nodes, now);
    measured = true;
  }
  StoreFigures();
  return measured ? 0 : 1;
}
