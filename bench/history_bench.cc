// What the history lookup adds to a job's start (issue 15: <= 50 ms at 100
// nodes): a real Prometheus (Debian's package, on loopback) holding a week of
// the coordinator's speed gauges — N nodes, 20 jobs of each of primes and
// exec, each job 5 minutes of 15 s samples, with the timestamp gauge beside
// them and the recorded speed (what history counts) — and the throttled
// gauge of a fifth of the nodes;
// PrometheusHistory::Lookup (the one query for all nodes, the answer parsed)
// timed over repeated lookups at 100 and 1,000 nodes, side by side with the
// legacy query (the speed gauge of jobs without a recorded speed, its age a
// subquery over the speeds: the operator's second query, for the history of
// coordinators older than the recorded gauge) and with the alternative of
// asking each job's estimates once and forming the ratios in the operator,
// all asked in turn so they see the same load. Then each part alone, and
// Prometheus's CPU for each. Beside it the store's side without Prometheus:
// reading a full store's text and looking 100 nodes up (the ConfigMap's GET
// itself is one API round trip).
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

#include "core/history/history_key.h"
#include "core/history/speed_store.h"
#include "net/prometheus_history_source.h"
#include "testbed/real_prometheus.h"

namespace {

using Clock = std::chrono::steady_clock;
using ballast::history::HistoryKey;
using ballast::workload::WorkloadKind;
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
size_t Ask(ballast::net::PrometheusHistory& source, const std::string& query, double now) {
  auto body = source.Query(query, now);
  if (!body.ok()) {
    fmt::print("  query trouble: {}\n", body.status().ToString());
    return 0;
  }
  auto history = ballast::history::ParseHistoryAnswer(*body);
  if (!history.ok()) fmt::print("  answer trouble: {}\n", history.status().ToString());
  return history.ok() ? history->size() : 0;
}

// The alternative weighed on 24 November 2026 and not taken: each job's
// last estimate of each node asked once, one series per job and node, the
// ratios, means and counts to be formed in the operator. Prometheus reads
// the speed gauge once instead of three times, but the answer grows with
// the jobs in the window (a job every ten minutes for a week at 100 nodes:
// 100,000 series, over 20 MB), where today's stays at four series a node.
// Only asked here; its answer is not today's form.
std::string JobEstimatesOnce(const std::string& workload, double window_seconds) {
  return fmt::format(
      "max by (weightedjob, job_namespace, job, exported_job, namespace, exported_namespace, node) "
      "(last_over_time(ballast_node_speed_cost_units_per_second{{workload=\"{}\"}}[{:.0f}s]))",
      workload, window_seconds);
}

// The parts of a query: its top-level alternatives.
std::vector<std::string> Parts(const std::string& query) {
  // At the top level only: a part may hold an `or` of its own (the legacy
  // form's age does).
  std::vector<std::string> parts;
  size_t from = 0;
  int depth = 0;
  for (size_t at = 0; at < query.size(); ++at) {
    if (query[at] == '(') ++depth;
    if (query[at] == ')') --depth;
    if (depth == 0 && query.compare(at, 4, " or ") == 0) {
      parts.push_back(query.substr(from, at - from));
      from = at + 4;
    }
  }
  parts.push_back(query.substr(from));
  return parts;
}

void Print(const std::string& what, const Figures& f, const char* target) {
  fmt::print("  {:<44} p50 {:6.1f} ms  p99 {:6.1f} ms  CPU {:5.1f} ms  {}{}\n", what, f.p50(),
             f.p99(), f.cpu_ms(), f.nodes, target);
}

// Each of `queries` asked alone, in turn, kLookups / 2 times.
void TimeParts(ballast::net::PrometheusHistory& source, pid_t server, double now,
               const std::vector<std::pair<std::string, std::string>>& queries) {
  std::vector<Figures> figures(queries.size());
  for (int i = 0; i < kLookups / 2; ++i) {
    for (size_t q = 0; q < queries.size(); ++q) {
      TimeOne(figures[q], server, [&] {
        auto body = source.Query(queries[q].second, now);
        return body.ok() ? body->size() : 0;
      });
    }
  }
  for (size_t q = 0; q < queries.size(); ++q) {
    Print("part " + queries[q].first + " alone", figures[q], " bytes");
  }
}

// The lookup (HistoryQuery: the ratios and counts in PromQL, the age from
// the timestamp gauge), the legacy query (the operator's second query, for
// older coordinators' history; it reads as much here though every job has a
// recorded speed), and the alternative of
// JobEstimatesOnce with today's age and throttled parts, asked in turn so
// all see the same load; then each part alone (the figure after the CPU:
// the answer's bytes).
void Compare(ballast::net::PrometheusHistory& source, pid_t server, int nodes, double now) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) names.push_back(NodeName(i));
  const double window = ballast::net::PrometheusHistoryOptions{}.window_seconds;
  const HistoryKey primes(WorkloadKind::kPrimes);
  const std::vector<std::string> now_parts = Parts(ballast::history::HistoryQuery(primes, window));
  const std::string subquery = ballast::history::LegacyHistoryQuery(primes, window);
  const std::vector<std::string> subquery_parts = Parts(subquery);
  if (now_parts.size() != 4 || subquery_parts.size() != 4) {
    fmt::print("  the queries have {} and {} parts, not 4 each: not compared\n", now_parts.size(),
               subquery_parts.size());
    return;
  }
  const std::string once = JobEstimatesOnce("primes", window);
  const std::string alternative = fmt::format("{} or {} or {}", once, now_parts[2], now_parts[3]);
  Figures now_form, subquery_form, alternative_form;
  for (int i = 0; i < kLookups; ++i) {
    TimeOne(now_form, server, [&] {
      const auto lookup = source.Lookup(primes, names, now);
      if (!lookup.trouble.empty()) fmt::print("  lookup trouble: {}\n", lookup.trouble);
      return lookup.nodes.size();
    });
    TimeOne(subquery_form, server, [&] { return Ask(source, subquery, now); });
    TimeOne(alternative_form, server, [&] {
      auto body = source.Query(alternative, now);
      return body.ok() ? body->size() : 0;
    });
  }
  const char* target = nodes == 100 ? " nodes  (target <= 50 ms)" : " nodes";
  Print("lookup (ratios in PromQL, age from gauge)", now_form, target);
  Print("legacy, age by subquery (older coordinators)", subquery_form, target);
  Print("not taken: job estimates once, unparsed", alternative_form, " bytes");
  TimeParts(source, server, now,
            {{"speed", now_parts[0]},
             {"samples", now_parts[1]},
             {"age, gauge", now_parts[2]},
             {"age, subquery", subquery_parts[2]},
             {"throttled", now_parts[3]},
             {"job estimates once (not taken)", once}});
}

void StoreFigures() {
  ballast::history::SpeedStore store;
  const ballast::history::StoreLimits limits;
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back(NodeName(i));
  for (int job = 0; job < 16; ++job) {
    for (WorkloadKind kind : {WorkloadKind::kPrimes, WorkloadKind::kMatmul, WorkloadKind::kExec}) {
      std::map<std::string, double> speeds;
      for (int i = 0; i < 100; ++i) speeds[NodeName(i)] = 1 + (i + job) % 7;
      ballast::history::RecordJob(store, HistoryKey(kind), speeds, 1.8e9 + job, limits);
    }
  }
  const std::string text = ballast::history::StoreToText(store, limits);
  const auto start = Clock::now();
  size_t found = 0;
  for (int i = 0; i < kLookups; ++i) {
    auto read = ballast::history::StoreFromText(text, limits);
    if (read.ok())
      found = ballast::history::LookupHistory(*read, HistoryKey(WorkloadKind::kPrimes), names,
                                              1.8e9 + 20)
                  .size();
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
    ballast::net::PrometheusHistoryOptions options;
    options.url = server->url();
    options.timeout = std::chrono::milliseconds(10000);
    auto source = ballast::net::PrometheusHistory::Create(options);
    if (!source.ok()) return 1;
    // The first touch of the blocks.
    (void)(*source)->Lookup(HistoryKey(WorkloadKind::kPrimes), {}, now);
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
