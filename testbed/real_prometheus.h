// A real Prometheus server (Debian's package) for tests and benchmarks: the
// history it holds is written as OpenMetrics text, turned into TSDB blocks by
// `promtool tsdb create-blocks-from openmetrics` in a temporary data
// directory, and served on a free loopback port. Also the OpenMetrics lines
// of the coordinator's speed gauges and the probe's throttled gauge.
//
// Thread-safety: one owner; the destructor stops the server and removes the
// directory.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/metric_labels.h"
#include "process/child_start.h"
#include "testbed/child_process.h"
#include "testbed/free_port.h"

extern char** environ;

namespace ballast::testing {

// The status line of GET `path` on 127.0.0.1:`port` ("" when nothing answers).
inline std::string HttpStatusLine(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  std::string line;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[256] = {};
      const ssize_t got = read(fd, buffer, sizeof(buffer) - 1);
      if (got > 0) line = std::string(buffer, static_cast<size_t>(got)).substr(0, 15);
    }
  }
  close(fd);
  return line;
}

// Runs `argv` (its program found in PATH) with stdout and stderr appended
// to `log` (process/child_start.h); its pid, or -1 when the program is not
// found or the log cannot be opened.
inline pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> words = argv;
  const std::vector<char*> args = process::PointersTo(words);
  const std::string file = process::ResolveCommand(words.front());
  if (file.empty()) return -1;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  process::ChildSpec child;
  child.file = file.c_str();
  child.argv = args.data();
  child.envp = environ;
  child.output = fd;
  child.share_memory = true;  // as posix_spawn does
  const pid_t pid = process::StartChild(child);
  close(fd);
  return pid;
}

// One sample line of a per-node series of the coordinator's (job_metrics.h),
// of a job in namespace default, with the labels `weightedjob` and
// `job_namespace` (core/common/metric_labels.h).
inline std::string JobNodeSample(const std::string& metric, const std::string& job,
                                 const std::string& workload, const std::string& node, double value,
                                 double time) {
  std::ostringstream line;
  line.precision(17);
  line << metric << "{" << kWeightedJobLabel << "=\"" << job << "\"," << kJobNamespaceLabel
       << "=\"default\",workload=\"" << workload << "\",node=\"" << node << "\"} " << value << " "
       << static_cast<int64_t>(time) << "\n";
  return line.str();
}

// One sample line of the coordinator's speed gauge.
inline std::string SpeedSample(const std::string& job, const std::string& workload,
                               const std::string& node, double speed, double time) {
  return JobNodeSample("ballast_node_speed_cost_units_per_second", job, workload, node, speed,
                       time);
}

// Three earlier primes jobs ("earlier-0" to "earlier-2", one, two and three
// hours before `now`) as the coordinator's speed gauge was scraped: ten
// samples 15 s apart of each node's `speeds`.
inline std::string EarlierPrimesJobs(const std::map<std::string, double>& speeds, double now) {
  std::string samples;
  for (int job = 0; job < 3; ++job) {
    for (const auto& [node, speed] : speeds) {
      for (int k = 0; k < 10; ++k) {
        samples += SpeedSample("earlier-" + std::to_string(job), "primes", node, speed,
                               now - 3600 * (job + 1) - (9 - k) * 15);
      }
    }
  }
  return samples;
}

// One sample line of the coordinator's recorded speed: the measured speed, or
// 0 where history leaves the node out.
inline std::string RecordedSpeedSample(const std::string& job, const std::string& workload,
                                       const std::string& node, double speed, double time) {
  return JobNodeSample("ballast_node_recorded_speed_cost_units_per_second", job, workload, node,
                       speed, time);
}

// One sample line of the coordinator's ballast_node_speed_timestamp_seconds
// (per workload kind and node): at `time`, the node was last measured at
// `measured_at`. A coordinator older than that gauge wrote none.
inline std::string SpeedTimestampSample(const std::string& workload, const std::string& node,
                                        double measured_at, double time) {
  std::ostringstream line;
  line.precision(17);
  line << "ballast_node_speed_timestamp_seconds{workload=\"" << workload << "\",node=\"" << node
       << "\"} " << static_cast<int64_t>(measured_at) << " " << static_cast<int64_t>(time) << "\n";
  return line.str();
}

// The speed a coordinator measured at `time` and history counts (recorded
// gauge, coordinator/recorded_speeds.h), with the timestamp gauge beside it,
// as a scrape at that time sees them.
inline std::string MeasuredSpeedSamples(const std::string& job, const std::string& workload,
                                        const std::string& node, double speed, double time) {
  return SpeedSample(job, workload, node, speed, time) +
         RecordedSpeedSample(job, workload, node, speed, time) +
         SpeedTimestampSample(workload, node, time, time);
}

// `samples` (lines ending in their timestamp) in the order of time, as
// promtool needs each series' samples.
inline std::string InTimeOrder(const std::string& samples) {
  std::vector<std::pair<int64_t, std::string>> lines;
  std::istringstream in(samples);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto space = line.rfind(' ');
    const int64_t time = space == std::string::npos ? 0 : std::atoll(line.c_str() + space + 1);
    lines.emplace_back(time, std::move(line));
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  out.reserve(samples.size() + 1);
  for (const auto& [time, line] : lines) out += line + "\n";
  return out;
}

inline std::string ThrottledSample(const std::string& node, int value, double time) {
  return "ballast_node_throttled{node=\"" + node + "\"} " + std::to_string(value) + " " +
         std::to_string(static_cast<int64_t>(time)) + "\n";
}

class RealPrometheus {
 public:
  // A server holding `openmetrics` (sample lines in any order, the TYPE lines
  // and # EOF are added). nullptr, with `why` set, when promtool or prometheus is
  // missing or the server is not ready within 30 s.
  static std::unique_ptr<RealPrometheus> Start(const std::string& samples, std::string* why) {
    auto server = std::unique_ptr<RealPrometheus>(new RealPrometheus());
    namespace fs = std::filesystem;
    char pattern[] = "/tmp/ballast-prometheus-XXXXXX";
    server->dir_ = mkdtemp(pattern) ? pattern : "";
    if (server->dir_.empty()) return *why = "mkdtemp failed", nullptr;
    const std::string log = server->dir_ + "/log";
    {
      std::ofstream om(server->dir_ + "/history.om");
      om << "# TYPE ballast_node_speed_cost_units_per_second gauge\n"
         << "# TYPE ballast_node_speed_timestamp_seconds gauge\n"
         << "# TYPE ballast_node_throttled gauge\n"
         << "# TYPE ballast_node_recorded_speed_cost_units_per_second gauge\n"
         << InTimeOrder(samples) << "# EOF\n";
      std::ofstream config(server->dir_ + "/prometheus.yml");
      config << "global:\n  scrape_interval: 15s\n";
    }
    // Blocks of up to 9 days, as a Prometheus that has run a while compacts
    // them (promtool's default, 2 h, makes 84 blocks of a week).
    const pid_t promtool =
        Spawn({"promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=216h",
               server->dir_ + "/history.om", server->dir_ + "/data"},
              log);
    if (promtool < 0 || WaitExit(promtool, std::chrono::seconds(300)) != 0) {
      return *why = "promtool tsdb create-blocks-from failed: " + server->Log(), nullptr;
    }
    server->port_ = FreePort();
    server->pid_ = Spawn(
        {"prometheus", "--config.file=" + server->dir_ + "/prometheus.yml",
         "--storage.tsdb.path=" + server->dir_ + "/data", "--storage.tsdb.retention.time=100y",
         "--web.listen-address=127.0.0.1:" + std::to_string(server->port_), "--log.level=warn"},
        log);
    if (server->pid_ < 0) return *why = "prometheus did not start", nullptr;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (HttpStatusLine(server->port_, "/-/ready").find("200") == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) {
        return *why = "prometheus not ready within 30 s: " + server->Log(), nullptr;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return server;
  }

  ~RealPrometheus() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      WaitExit(pid_, std::chrono::seconds(10));
    }
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }

  std::string Log() const {
    std::ifstream in(dir_ + "/log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  RealPrometheus() = default;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace ballast::testing
