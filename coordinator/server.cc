#include "coordinator/server.h"

#include <cpprest/base_uri.h>
#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "coordinator/held_requests.h"
#include "coordinator/job_metrics.h"
#include "coordinator/job_progress.h"
#include "coordinator/job_registry.h"
#include "core/common/names.h"
#include "core/common/utf8.h"
#include "net/http_front.h"

namespace ballast::coordinator {
namespace {

using net::HttpExchange;
using net::HttpFront;
using net::HttpFrontOptions;
using net::HttpRequest;
using net::HttpResponse;
using Exchange = std::shared_ptr<HttpExchange>;
using Clock = std::chrono::steady_clock;
using held::ReplyJson;

// A route that does not exist: not counted as a refusal.
void ReplyNoRoute(const Exchange& exchange) {
  ReplyJson(exchange, 404, protocol::RefusalJson("no_route", "no such route"));
}

unsigned HttpCode(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 400;
  }
}

// A request's target split as the routes need it.
struct Target {
  std::vector<std::string> path;
  std::map<std::string, std::string> query;
};

// Invalid when the target is not a URI reference.
StatusOr<Target> ParseTarget(const std::string& target) {
  try {
    const web::uri uri(target);
    return Target{web::uri::split_path(uri.path()), web::uri::split_query(uri.query())};
  } catch (const std::exception& e) {
    return Status::Invalid(fmt::format("the request target is not a URI: {}", e.what()));
  }
}

// Constant-time comparison, so a token cannot be guessed byte by byte.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// The metric's and the body's reason for a report JobSession refused.
const char* RefusedReportReason(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return "unknown_worker";
    case StatusCode::kConflict:
      return protocol::kReasonStale;
    default:
      return "invalid_report";
  }
}

// The worker a signal poll names (?worker=<name>, URI-encoded); Invalid
// saying what is wrong.
StatusOr<std::string> PolledWorker(const std::map<std::string, std::string>& query) {
  auto it = query.find("worker");
  if (it == query.end() || it->second.empty()) return Status::Invalid("missing ?worker=<name>");
  try {
    return web::uri::decode(it->second);
  } catch (const std::exception& e) {
    return Status::Invalid(fmt::format("worker: not a URI component: {}", e.what()));
  }
}

// GET /v1/jobs/{job}/progress (core/protocol/progress.h), which asks for no
// token, as /healthz and /metrics ask for none.
bool IsProgressRoute(const HttpRequest& request, const std::vector<std::string>& path) {
  return request.method == "GET" && path.size() == 4 && path[0] == "v1" && path[1] == "jobs" &&
         path[3] == "progress";
}

// The job's progress now, to anyone (no token: progress.h says why); a job
// not hosted (not registered yet, or removed) is a 404 not counted as a
// refusal, as a viewer asks it again and again.
void ReplyProgress(const Exchange& exchange, const JobEntry* entry, const std::string& id) {
  if (!entry) {
    ReplyJson(exchange, 404,
              protocol::RefusalJson(protocol::kReasonUnknownJob,
                                    fmt::format("no job {}", QuoteForMessage(id))));
    return;
  }
  std::lock_guard lock(entry->mutex);
  const JobConfig& config = entry->session->config();
  ReplyJson(exchange, 200,
            protocol::ToJson(
                ProgressOf(entry->session->View(false), workload::MeanItemCost(config.workload))));
}

}  // namespace

class Server::Impl {
 public:
  explicit Impl(const ServerOptions& options)
      : options_(options),
        registry_(std::make_shared<prometheus::Registry>()),
        reports_(prometheus::BuildCounter()
                     .Name("ballast_coordinator_reports_total")
                     .Help("Worker reports accepted")
                     .Register(*registry_)
                     .Add({})),
        refused_family_(prometheus::BuildCounter()
                            .Name("ballast_coordinator_refused_total")
                            .Help("Requests refused, by reason")
                            .Register(*registry_)),
        items_(prometheus::BuildCounter()
                   .Name("ballast_coordinator_items_completed_total")
                   .Help("Items whose results were merged")
                   .Register(*registry_)
                   .Add({})),
        jobs_gauge_(prometheus::BuildGauge()
                        .Name("ballast_coordinator_jobs")
                        .Help("Jobs registered")
                        .Register(*registry_)
                        .Add({})),
        connections_gauge_(prometheus::BuildGauge()
                               .Name("ballast_coordinator_connections")
                               .Help("HTTP connections open")
                               .Register(*registry_)
                               .Add({})) {}

  Status Open() {
    HttpFrontOptions http;
    http.address = options_.address;
    http.port = options_.port;
    http.max_connections = options_.max_connections;
    http.max_body_bytes = options_.max_body_bytes;
    http.idle_timeout_s = options_.idle_timeout_s;
    http.header_timeout_s = options_.header_timeout_s;
    http.body_timeout_s = options_.body_timeout_s;
    http.threads = options_.threads;
    auto front = HttpFront::Start(
        http, [this](HttpRequest request, Exchange exchange) { Route(request, exchange); },
        [this](const std::string& reason) {
          refused_family_.Add({{"reason", reason}}).Increment();
        });
    if (!front.ok()) return front.status();
    front_ = std::move(front).value();
    front_raw_ = front_.get();
    port_ = front_->port();
    url_ = fmt::format("http://{}:{}", options_.address, port_);
    timer_ = std::thread([this] { TimerLoop(); });
    return Status::Ok();
  }

  ~Impl() {
    {
      std::lock_guard lock(timer_mutex_);
      stopping_ = true;
    }
    timer_cv_.notify_all();
    if (timer_.joinable()) timer_.join();
    // The jobs are not over: held requests are told to retry (a restarted
    // coordinator takes them up again), never "done".
    for (const auto& [id, entry] : jobs_.RemoveAll()) {
      std::lock_guard lock(entry->mutex);
      held::AnswerAllStopping(*entry);
    }
    // The front lets those 503s reach their workers before it closes.
    front_raw_ = nullptr;
    front_.reset();
  }

  const std::string& url() const { return url_; }
  uint16_t port() const { return port_; }

  Status AddJob(JobConfig config) {
    BALLAST_ASSIGN_OR_RETURN(auto entry, jobs_.Add(std::move(config)));
    jobs_gauge_.Set(static_cast<double>(jobs_.size()));
    CountWorkers(static_cast<ptrdiff_t>(entry->workers));
    RequestRescan();
    return Status::Ok();
  }

  void RemoveJob(const std::string& id) {
    std::shared_ptr<JobEntry> entry = jobs_.Remove(id);
    if (!entry) return;
    jobs_gauge_.Set(static_cast<double>(jobs_.size()));
    std::lock_guard lock(entry->mutex);
    held::AnswerAllHeld(*entry, held::DoneReply());
    CountWorkers(-static_cast<ptrdiff_t>(entry->workers));
  }

  Status WorkerLost(const std::string& id, const std::string& worker) {
    auto entry = Find(id);
    if (!entry) return Status::NotFound(fmt::format("no job '{}'", id));
    std::lock_guard lock(entry->mutex);
    BALLAST_RETURN_IF_ERROR(entry->session->WorkerLost(worker, entry->Now()));
    AfterChange(*entry);
    return Status::Ok();
  }

  Status AddWorker(const std::string& id, const balance::WorkerPrior& prior,
                   std::optional<double> cores) {
    auto entry = Find(id);
    if (!entry) return Status::NotFound(fmt::format("no job '{}'", id));
    std::lock_guard lock(entry->mutex);
    BALLAST_RETURN_IF_ERROR(entry->session->AddWorker(prior, cores, entry->Now()));
    ++entry->workers;
    CountWorkers(1);
    AfterChange(*entry);
    return Status::Ok();
  }

  std::optional<JobView> View(const std::string& id) const {
    auto entry = Find(id);
    if (!entry) return std::nullopt;
    std::lock_guard lock(entry->mutex);
    return entry->session->View();
  }

  std::optional<Checkpoint> TakeCheckpoint(const std::string& id) const {
    auto entry = Find(id);
    if (!entry) return std::nullopt;
    std::lock_guard lock(entry->mutex);
    return entry->session->TakeCheckpoint();
  }

  std::set<std::string> SharedNodes(const std::string& id) const { return jobs_.SharedNodes(id); }

  void SampleSharing(const std::string& id) {
    const std::set<std::string> shared = SharedNodes(id);
    auto entry = Find(id);
    if (!entry) return;
    std::lock_guard lock(entry->mutex);
    entry->session->SampleSharing(shared, entry->Now());
  }

  bool WaitFinished(const std::string& id, std::chrono::milliseconds timeout) const {
    auto entry = Find(id);
    if (!entry) return false;
    std::unique_lock lock(entry->mutex);
    return entry->finished_cv.wait_for(lock, timeout, [&] { return entry->session->Finished(); });
  }

  std::vector<prometheus::MetricFamily> CollectMetrics() const {
    if (const HttpFront* front = front_raw_.load()) {
      connections_gauge_.Set(static_cast<double>(front->connections()));
    }
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    const double unix_now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (auto& family : JobMetricFamilies(jobs_.Samples(unix_now))) {
      families.push_back(std::move(family));
    }
    return families;
  }

 private:
  std::shared_ptr<JobEntry> Find(const std::string& id) const { return jobs_.Find(id); }

  void Refuse(const Exchange& exchange, unsigned code, const std::string& reason,
              const std::string& message) {
    refused_family_.Add({{"reason", reason}}).Increment();
    spdlog::info("request refused reason={} message=\"{}\"", reason, message);
    ReplyJson(exchange, code, protocol::RefusalJson(reason, message));
  }

  void Route(const HttpRequest& request, const Exchange& exchange) {
    auto target = ParseTarget(request.target);
    if (!target.ok()) {
      Refuse(exchange, 400, "malformed", target.status().message());
      return;
    }
    const auto& path = target->path;
    const bool get = request.method == "GET";
    if (get && path.size() == 1 && path[0] == "healthz") {
      exchange->Reply({200, "text/plain", "ok"});
      return;
    }
    if (get && path.size() == 1 && path[0] == "metrics") {
      prometheus::TextSerializer serializer;
      exchange->Reply({200, "text/plain; version=0.0.4", serializer.Serialize(CollectMetrics())});
      return;
    }
    if (path.size() < 3 || path[0] != "v1" || path[1] != "jobs") {
      ReplyNoRoute(exchange);
      return;
    }
    auto entry = Find(path[2]);
    if (IsProgressRoute(request, path)) return ReplyProgress(exchange, entry.get(), path[2]);
    if (!entry) {
      Refuse(exchange, 404, protocol::kReasonUnknownJob,
             fmt::format("no job {}", QuoteForMessage(path[2])));
      return;
    }
    if (Status auth = Authorize(request, exchange, *entry); !auth.ok()) return;
    if (get && path.size() == 3) {
      std::lock_guard lock(entry->mutex);
      const JobConfig& config = entry->session->config();
      ReplyJson(exchange, 200,
                protocol::ToJson(protocol::JobDescription{config.id, config.workload}));
    } else if (request.method == "POST" && path.size() == 4 && path[3] == "report") {
      OnReport(exchange, entry, request.body);
    } else if (get && path.size() == 4 && path[3] == "signal") {
      OnSignalPoll(exchange, entry, target->query);
    } else {
      ReplyNoRoute(exchange);
    }
  }

  // Replies 401/403 itself and returns non-ok when the token is wrong.
  Status Authorize(const HttpRequest& request, const Exchange& exchange, const JobEntry& entry) {
    const std::string prefix = "Bearer ";
    if (request.authorization.rfind(prefix, 0) != 0) {
      Refuse(exchange, 401, "no_token", "missing 'Authorization: Bearer <job token>'");
      return Status::Invalid("no token");
    }
    if (!SameToken(request.authorization.substr(prefix.size()), entry.session->config().token)) {
      Refuse(exchange, 403, "wrong_token", "the token is not this job's");
      return Status::Invalid("wrong token");
    }
    return Status::Ok();
  }

  void OnReport(const Exchange& request, const std::shared_ptr<JobEntry>& entry,
                const std::string& text) {
    auto json = protocol::ParseJsonText(text);
    auto report =
        json.ok() ? protocol::ParseReport(*json) : StatusOr<protocol::ReportMessage>(json.status());
    if (!report.ok()) {
      Refuse(request, 400, "malformed", report.status().message());
      return;
    }
    std::lock_guard lock(entry->mutex);
    const uint64_t before = entry->session->completed();
    auto reply = entry->session->HandleReport(*report, entry->Now());
    if (!reply.ok()) {
      Refuse(request, HttpCode(reply.status()), RefusedReportReason(reply.status()),
             reply.status().message());
      return;
    }
    reports_.Increment();
    items_.Increment(static_cast<double>(entry->session->completed() - before));
    held::LogDecision(*entry, *report, *reply);
    held::ReleaseHeldReport(*entry, report->worker);
    if (reply->kind == balance::Reply::Kind::kWait && !entry->session->Finished()) {
      held::HoldReport(*entry, report->worker, request, entry->Now() + options_.wait_timeout_s);
    } else {
      held::AnswerReport(request, *reply);
    }
    AfterChange(*entry);
  }

  void OnSignalPoll(const Exchange& request, const std::shared_ptr<JobEntry>& entry,
                    const std::map<std::string, std::string>& query) {
    auto worker = PolledWorker(query);
    if (!worker.ok()) {
      Refuse(request, 400, "malformed", worker.status().message());
      return;
    }
    std::lock_guard lock(entry->mutex);
    if (!entry->session->HasWorker(*worker)) {
      Refuse(request, 404, "unknown_worker",
             fmt::format("no worker {} in the job", QuoteForMessage(*worker)));
      return;
    }
    held::PollSignal(*entry, *worker, request, entry->Now() + options_.wait_timeout_s);
  }

  // After a request changed the job: DeliverAndFinish, and wake the timer if
  // the job now needs it sooner. Requires entry.mutex.
  void AfterChange(JobEntry& entry) {
    DeliverAndFinish(entry);
    WakeTimerIfSooner(entry);
  }

  // Delivers the policy's signals; answers everything once the job is done.
  // Requires entry.mutex.
  void DeliverAndFinish(JobEntry& entry) {
    held::DeliverSignals(entry);
    if (entry.session->Finished()) {
      held::AnswerAllHeld(entry, held::DoneReply());
      entry.finished_cv.notify_all();
      if (!entry.finish_announced && options_.on_finished) {
        entry.finish_announced = true;
        options_.on_finished(entry.session->config().id);
      }
    }
  }

  // Wakes the timer thread when the job's next deadline (a lease expiry, a
  // policy timer) comes before the timer's planned wake; a context switch per
  // report would halve the coordinator's throughput. Held requests need no
  // wake: theirs are the latest deadlines, and the timer wakes every second.
  // Requires entry.mutex.
  void WakeTimerIfSooner(const JobEntry& entry) {
    const double next = entry.session->NextDeadline();
    if (!std::isfinite(next)) return;
    const auto at = entry.epoch + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(next));
    if (at.time_since_epoch().count() >= planned_wake_.load()) return;
    RequestRescan();
  }

  // Asks the timer thread for another pass now.
  void RequestRescan() {
    {
      std::lock_guard lock(timer_mutex_);
      rescan_ = true;
    }
    timer_cv_.notify_all();
  }

  // Expires leases, fires policy timers and answers held requests at their
  // deadlines; sleeps until the earliest of those (at most a second).
  void TimerLoop() {
    std::unique_lock timer_lock(timer_mutex_);
    while (!stopping_) {
      rescan_ = false;
      // While a pass runs, any change must ask for another one.
      planned_wake_ = std::numeric_limits<Clock::rep>::max();
      auto wake = Clock::now() + std::chrono::seconds(1);
      const std::vector<std::shared_ptr<JobEntry>> entries = jobs_.All();
      timer_lock.unlock();
      for (const auto& entry : entries) wake = std::min(wake, Service(*entry));
      timer_lock.lock();
      if (stopping_) break;
      planned_wake_ = wake.time_since_epoch().count();
      timer_cv_.wait_until(timer_lock, wake, [this] { return rescan_ || stopping_; });
    }
  }

  // One timer pass over a job; returns when it next needs one.
  Clock::time_point Service(JobEntry& entry) {
    std::lock_guard lock(entry.mutex);
    const double now = entry.Now();
    if (entry.session->NextDeadline() <= now) entry.session->Tick(now);
    double next = std::min(entry.session->NextDeadline(), held::ExpireHeld(entry, now));
    DeliverAndFinish(entry);
    next = std::min(next, entry.session->NextDeadline());
    const double delay = std::clamp(next - now, 0.0, 1.0);
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
  }

  // Workers of every job: each may hold a report and a signal poll open at
  // once (ServerOptions::connections_per_worker).
  void CountWorkers(ptrdiff_t change) {
    const size_t workers = workers_ += static_cast<size_t>(change);
    front_->SetMaxConnections(options_.max_connections + options_.connections_per_worker * workers);
  }

  ServerOptions options_;
  std::atomic<size_t> workers_{0};
  uint16_t port_ = 0;
  std::string url_;
  JobRegistry jobs_;
  std::mutex timer_mutex_;
  std::condition_variable timer_cv_;
  bool stopping_ = false;                    // guarded by timer_mutex_
  bool rescan_ = false;                      // guarded by timer_mutex_: a deadline moved earlier
  std::atomic<Clock::rep> planned_wake_{0};  // when the timer next wakes by itself
  std::thread timer_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter& reports_;
  prometheus::Family<prometheus::Counter>& refused_family_;
  prometheus::Counter& items_;
  prometheus::Gauge& jobs_gauge_;
  prometheus::Gauge& connections_gauge_;  // set at each collection
  // Last members: destroyed first, so no request arrives while the rest goes.
  std::unique_ptr<HttpFront> front_;
  std::atomic<const HttpFront*> front_raw_{nullptr};  // front_, for the request threads
};

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  BALLAST_RETURN_IF_ERROR(impl->Open());
  spdlog::debug("coordinator listening url={}", impl->url());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
const std::string& Server::url() const { return impl_->url(); }
uint16_t Server::port() const { return impl_->port(); }
Status Server::AddJob(JobConfig config) { return impl_->AddJob(std::move(config)); }
void Server::RemoveJob(const std::string& job) { impl_->RemoveJob(job); }
Status Server::WorkerLost(const std::string& job, const std::string& worker) {
  return impl_->WorkerLost(job, worker);
}
Status Server::AddWorker(const std::string& job, const balance::WorkerPrior& prior,
                         std::optional<double> cores) {
  return impl_->AddWorker(job, prior, cores);
}
std::optional<JobView> Server::View(const std::string& job) const { return impl_->View(job); }
std::optional<Checkpoint> Server::TakeCheckpoint(const std::string& job) const {
  return impl_->TakeCheckpoint(job);
}
std::set<std::string> Server::SharedNodes(const std::string& job) const {
  return impl_->SharedNodes(job);
}

void Server::SampleSharing(const std::string& job) { impl_->SampleSharing(job); }

bool Server::WaitFinished(const std::string& job, std::chrono::milliseconds timeout) const {
  return impl_->WaitFinished(job, timeout);
}
std::vector<prometheus::MetricFamily> Server::CollectMetrics() const {
  return impl_->CollectMetrics();
}

}  // namespace ballast::coordinator
