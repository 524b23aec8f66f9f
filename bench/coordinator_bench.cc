// The coordinator's capacity and footprint, printed beside their targets and
// beside a bare transport (cpprestsdk's listener answering a constant, the
// transport the coordinator used before its own hardened front):
//   - report round trips per second on loopback, 1..8 concurrent workers, each
//     report finishing a one-item lease and getting the next (selfsched,
//     chunk 1): target >= 5,000/s on 2 cores;
//   - RSS of an idle coordinator holding one registered job: target <= 30 MB;
//   - peak RSS of a real ballast-worker computing a job: target <= 15 MB;
//   - report latency of a 1,000-worker job while every worker holds a signal
//     long poll, reports paced at 1,000/s in all: target p99 <= 10 ms, beside
//     the same job with no poll held and beside the bare transport.
//
//   ballast_coordinator_bench [--seconds S] [--worker PATH] [--pool-threads N]
//                             [--wide-workers N] [--wide-rate R]
//
// --pool-threads sizes cpprestsdk's shared thread pool (default: one per core,
// as `ballast` does; cpprestsdk's own default is 40): the bare listener's and
// the worker's; the coordinator's front runs threads of its own, one per core
// (ServerOptions::threads).
#include <arpa/inet.h>
#include <cpprest/http_listener.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pplx/threadpool.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/server.h"
#include "core/common/utf8.h"

namespace {

using namespace ballast;
using Clock = std::chrono::steady_clock;

// VmRSS of a process in MB (0 when it is gone).
double RssMb(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      double kb = 0;
      in >> kb;
      return kb / 1024;
    }
    in.ignore(4096, '\n');
  }
  return 0;
}

coordinator::JobConfig BenchJob(int workers, const std::string& policy) {
  coordinator::JobConfig config;
  config.id = "bench";
  config.token = "bench-token";
  config.workload.kind = workload::WorkloadKind::kPrimes;
  config.workload.primes.limit = 2'000'000'000;
  config.workload.items = workload::DefaultItems(config.workload);
  config.workload.cost = workload::DefaultCost(config.workload);
  config.policy = policy == "selfsched"
                      ? *balance::PolicyFromJson({{"name", policy}, {"chunk", 1}}, "policy")
                      : *balance::PolicyFromJson(policy, "policy");  // a known name
  for (int i = 0; i < workers; ++i) config.workers.push_back({fmt::format("w{}", i), 1.0});
  config.lease_seconds = 600;
  return config;
}

// The result each client hands in for its one-item lease: no primes, which
// the coordinator's bounds (result_bounds.h) accept for any range, so every
// report is merged; a count the span cannot hold would be refused with 400
// and measure the refusal instead.
const workload::Result kPlausibleResult = workload::Result::Primes(0, 0);

// A minimal HTTP/1.1 keep-alive client on a blocking socket, so the load
// generator costs little beside the server it measures.
class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~RawClient() { close(fd_); }
  bool connected() const { return connected_; }
  // Sends a request without waiting for its answer (a long poll to hold).
  bool Send(const std::string& request) {
    return connected_ &&
           write(fd_, request.data(), request.size()) == static_cast<ssize_t>(request.size());
  }

  // POSTs `body`; returns the response body ("" on failure).
  std::string Post(const std::string& path, const std::string& body) {
    if (!connected_) return "";
    const std::string request = fmt::format(
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer bench-token\r\n"
        "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        path, body.size(), body);
    if (write(fd_, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
      return "";
    }
    std::string buffer;
    char chunk[4096];
    size_t header_end = std::string::npos;
    size_t length = 0;
    while (true) {
      const ssize_t got = read(fd_, chunk, sizeof(chunk));
      if (got <= 0) return "";
      buffer.append(chunk, got);
      if (header_end == std::string::npos) {
        header_end = buffer.find("\r\n\r\n");
        if (header_end == std::string::npos) continue;
        std::string lower = buffer.substr(0, header_end);
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        const size_t at = lower.find("content-length:");
        if (at != std::string::npos) length = std::stoul(lower.substr(at + 15));
      }
      if (buffer.size() >= header_end + 4 + length) return buffer.substr(header_end + 4, length);
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Each client thread plays one worker: report the lease just "finished" with
// a result, get the next. Returns round trips per second.
double Hammer(uint16_t port, const std::string& path, int clients, double seconds,
              bool report_leases) {
  std::atomic<uint64_t> trips{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      RawClient client(port);
      nlohmann::json lease;
      while (!stop) {
        nlohmann::json body = {{"worker", fmt::format("w{}", c)}, {"idle", true}};
        if (report_leases && lease.is_object()) {
          body["completed"] = {{{"range", lease}, {"result", kPlausibleResult.ToJson()}}};
        }
        const auto reply =
            nlohmann::json::parse(client.Post(path, ballast::DumpJson(body)), nullptr,
                                  /*allow_exceptions=*/false);
        if (!reply.is_object() || !reply.contains("kind")) return;  // refused: stop counting
        lease = reply.contains("lease") ? reply["lease"] : nlohmann::json();
        ++trips;
      }
    });
  }
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& thread : threads) thread.join();
  return trips / std::chrono::duration<double>(Clock::now() - start).count();
}

// The transport alone: a cpprestsdk listener that answers every POST with a
// constant lease, no parsing, no policy.
double BareTransport(int clients, double seconds) {
  const uint16_t port = 18931;
  const std::string url = fmt::format("http://127.0.0.1:{}", port);
  web::http::experimental::listener::http_listener listener(url);
  listener.support(web::http::methods::POST, [](web::http::http_request request) {
    request.reply(200, R"({"kind":"lease","lease":{"begin":0,"end":1}})", "application/json");
  });
  listener.open().wait();
  const double rate = Hammer(port, "/v1/jobs/bench/report", clients, seconds, false);
  listener.close().wait();
  return rate;
}

void RoundTrips(double seconds, size_t pool_threads) {
  fmt::print(
      "report round trips per second on loopback ({} s each, {} cpprestsdk pool threads; target "
      ">= 5,000)\n",
      seconds, pool_threads);
  fmt::print("{:>8} {:>14} {:>14} {:>16}\n", "workers", "coordinator", "bare transport",
             "coordinator/bare");
  for (int clients : {1, 2, 4, 8}) {
    auto server = coordinator::Server::Start({});
    if (!server.ok() || !(*server)->AddJob(BenchJob(clients, "selfsched")).ok()) {
      fmt::print("cannot start the coordinator\n");
      return;
    }
    const double ours = Hammer((*server)->port(), "/v1/jobs/bench/report", clients, seconds, true);
    const double bare = BareTransport(clients, seconds);
    fmt::print("{:>8} {:>14.0f} {:>14.0f} {:>16.2f}\n", clients, ours, bare, ours / bare);
  }
}

// p-th percentile (0..1) of `values`, sorted in place.
double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

struct Latency {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  size_t reports = 0, failed = 0;
};

// One signal long poll held open per worker, as idle workers hold them.
using HeldPolls = std::vector<std::unique_ptr<RawClient>>;
HeldPolls HoldSignalPolls(uint16_t port, int workers) {
  HeldPolls held;
  for (int w = 0; w < workers; ++w) {
    held.push_back(std::make_unique<RawClient>(port));
    held.back()->Send(
        fmt::format("GET /v1/jobs/bench/signal?worker=w{} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Authorization: Bearer bench-token\r\n\r\n",
                    w));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // all held
  return held;
}

// Every thread's round trips, in milliseconds, as one latency summary.
Latency Summarize(const std::vector<std::vector<double>>& trips, size_t failed) {
  std::vector<double> all;
  for (const auto& part : trips) all.insert(all.end(), part.begin(), part.end());
  Latency out;
  out.reports = all.size();
  out.failed = failed;
  out.p50_ms = Percentile(all, 0.50);
  out.p99_ms = Percentile(all, 0.99);
  out.max_ms = all.empty() ? 0 : all.back();
  return out;
}

// `workers` workers of one selfsched job (chunk 1) report at `rate` reports
// per second in all, spread over 8 client threads, each report finishing a
// one-item lease and taking the next; with `polls`, every worker first opens
// a connection of its own and holds a signal long poll on it for the whole
// run, as a computing worker does. Returns the reports' round trips.
Latency PacedReports(uint16_t port, int workers, double rate, double seconds, bool polls) {
  const auto held = polls ? HoldSignalPolls(port, workers) : HeldPolls{};
  constexpr int kThreads = 8;
  std::vector<std::vector<double>> trips(kThreads);
  std::atomic<size_t> failed{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RawClient client(port);
      std::vector<nlohmann::json> leases(workers);
      const auto period = std::chrono::duration<double>(kThreads / rate);
      auto due = start + std::chrono::duration_cast<Clock::duration>(period * t / kThreads);
      for (int w = t;; w = w + kThreads < workers ? w + kThreads : t) {
        std::this_thread::sleep_until(due);
        if (Clock::now() - start > std::chrono::duration<double>(seconds)) return;
        due += std::chrono::duration_cast<Clock::duration>(period);
        nlohmann::json body = {{"worker", fmt::format("w{}", w)}, {"idle", true}};
        if (leases[w].is_object()) {
          body["completed"] = {{{"range", leases[w]}, {"result", kPlausibleResult.ToJson()}}};
        }
        const auto sent = Clock::now();
        const auto reply = nlohmann::json::parse(
            client.Post("/v1/jobs/bench/report", ballast::DumpJson(body)), nullptr, false);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
        if (!reply.is_object() || !reply.contains("kind")) {
          ++failed;
          return;
        }
        trips[t].push_back(ms);
        leases[w] = reply.contains("lease") ? reply["lease"] : nlohmann::json();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return Summarize(trips, failed);
}

void WideJobLatency(int workers, double rate, double seconds) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  fmt::print(
      "\nreport latency, one job of {} workers, reports paced at {:.0f}/s in all ({} s each; "
      "target p99 <= 10 ms with every worker long-polling)\n",
      workers, rate, seconds);
  fmt::print("{:<44} {:>8} {:>8} {:>8} {:>9} {:>7}\n", "", "p50 ms", "p99 ms", "max ms", "reports",
             "failed");
  const auto row = [](const std::string& what, const Latency& latency) {
    fmt::print("{:<44} {:>8.2f} {:>8.2f} {:>8.2f} {:>9} {:>7}\n", what, latency.p50_ms,
               latency.p99_ms, latency.max_ms, latency.reports, latency.failed);
  };
  for (const bool polls : {false, true}) {
    coordinator::ServerOptions options;
    options.wait_timeout_s = seconds + 30;  // the polls stay held throughout
    auto server = coordinator::Server::Start(options);
    if (!server.ok() || !(*server)->AddJob(BenchJob(workers, "selfsched")).ok()) {
      fmt::print("cannot start the coordinator\n");
      return;
    }
    row(polls ? fmt::format("coordinator, {} signal polls held", workers)
              : "coordinator, no poll held",
        PacedReports((*server)->port(), workers, rate, seconds, polls));
  }
  // The floor: the same paced load on cpprestsdk's listener answering a
  // constant, no parsing, no policy, no poll held.
  const uint16_t port = 18932;
  web::http::experimental::listener::http_listener listener(
      fmt::format("http://127.0.0.1:{}", port));
  listener.support(web::http::methods::POST, [](web::http::http_request request) {
    request.reply(200, R"({"kind":"lease","lease":{"begin":0,"end":1}})", "application/json");
  });
  listener.open().wait();
  row("bare transport (constant answer), no poll",
      PacedReports(port, workers, rate, seconds, false));
  listener.close().wait();
}

void IdleRss() {
  const double before = RssMb(getpid());
  auto server = coordinator::Server::Start({});
  if (!server.ok() || !(*server)->AddJob(BenchJob(3, "adaptive")).ok()) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  fmt::print(
      "\nidle coordinator with one job: RSS {:.1f} MB (this process; {:.1f} MB before "
      "it started; target <= 30 MB)\n",
      RssMb(getpid()), before);
}

void WorkerRss(const std::string& worker_binary) {
  auto server = coordinator::Server::Start({});
  coordinator::JobConfig job = BenchJob(1, "adaptive");
  job.workload.primes.limit = 200000;  // trial division: a few seconds of work
  job.workload.items = workload::DefaultItems(job.workload);
  job.workload.cost = workload::DefaultCost(job.workload);
  if (!server.ok() || !(*server)->AddJob(job).ok()) return;
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("BALLAST_TOKEN", "bench-token", 1);
    execl(worker_binary.c_str(), worker_binary.c_str(), "--coordinator", (*server)->url().c_str(),
          "--job", "bench", "--name", "w0", "--threads", "1", nullptr);
    _exit(127);
  }
  double peak = 0;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    peak = std::max(peak, RssMb(pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const bool done = (*server)->View("bench")->done;
  fmt::print(
      "ballast-worker computing primes below 200000: peak RSS {:.1f} MB ({}; target <= 15 "
      "MB)\n",
      peak, done ? "job completed" : "JOB NOT COMPLETED");
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::string worker = BALLAST_WORKER_BINARY;
  // As `ballast` sizes it (cli/main.cc): one pool thread per core.
  // cpprestsdk's own default is 40.
  size_t pool_threads = std::max(2U, std::thread::hardware_concurrency());
  int wide_workers = 1000;
  double wide_rate = 1000;
  CLI::App app{
      "The coordinator's report round trips per second on loopback beside the bare cpprestsdk "
      "transport, its idle RSS, a computing worker's peak RSS and a wide job's report latency "
      "(bench/run-all runs it; docs/local-mode.md has its figures)."};
  app.add_option("--seconds", seconds, "how long each round-trip run lasts")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--worker", worker, "the ballast-worker binary to measure")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  app.add_option("--pool-threads", pool_threads, "cpprestsdk's thread pool")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--wide-workers", wide_workers, "workers of the wide job")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--wide-rate", wide_rate, "the wide job's reports a second, all workers")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  CLI11_PARSE(app, argc, argv);
  crossplat::threadpool::initialize_with_threads(pool_threads);
  RoundTrips(seconds, pool_threads);
  IdleRss();
  WorkerRss(worker);
  WideJobLatency(wide_workers, wide_rate, std::max(seconds, 5.0));
  return 0;
}
