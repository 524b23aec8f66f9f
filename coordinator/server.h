// Server: the coordinator's HTTP service (HttpFront, http_front.h: our own
// HTTP/1.1 server on boost::asio, because cpprestsdk's listener cannot be
// made safe against hostile clients; the reasons are written there). It hosts
// any number of jobs, each a JobSession, checks every request's token,
// holds the answers "wait" open until the policy signals the worker (long
// poll), expires silent leases on a timer thread, and serves Prometheus
// metrics. Routes are listed in protocol/messages.h; in addition:
//   GET /healthz   -> 200 "ok"
//   GET /metrics   -> Prometheus text format
//   GET /v1/jobs/{job}/progress -> protocol::JobProgress (core/protocol/
//                     progress.h: the job's progress now, for kubectl ballast
//                     top; read-only, no token, as /metrics; 404 unknown_job,
//                     not counted, for a job not hosted)
//
// Before a request reaches a job, the front enforces ServerOptions' limits:
// a body over max_body_bytes is refused 413 (too_large) from its header,
// before it is read and before the token is checked; a header over 16 KiB
// 431 (header_too_large); a header or body that does not arrive in time 408
// (timeout); at most max_connections + 2 per registered worker are open,
// idle ones giving way to new ones. GET /metrics reports ballast_coordinator_connections, and each
// job's series (job_metrics.h; docs/metrics.md).
//
// Responses: 200 with a JSON body; otherwise {"error": ..., "reason": ...}
// (protocol::RefusalJson), counted in ballast_coordinator_refused_total by
// reason, and nothing changed:
//   400 malformed     a body or query that does not parse, a body nested
//                      deeper than protocol::kMaxBodyDepth, a wrong type, a
//                      number out of range, NaN or infinite
//   400 invalid_report completions outside the worker's leases, or results
//                      that do not parse
//   401 no_token, 403 wrong_token
//   404 unknown_job   no such job (yet: a restarted coordinator adds its jobs
//                      again; workers retry), unknown_worker (a report or a
//                      signal poll naming no worker of the job), no_route
//                      (not counted)
//   408 timeout, 413 too_large, 431 header_too_large: from the front (above)
//   409 stale         a report of a lease granted by an earlier incarnation
//                      of the coordinator (JobSession::HandleReport): the
//                      worker drops it and asks afresh
//   503 stopping      a held request when the Server is destroyed (not
//                      counted): the job is not over, workers retry
//
// Restarting: destroying the Server and starting another on the same port
// (ServerOptions::port; the front sets SO_REUSEADDR) and adding
// the job again with JobConfig::resume = its last checkpoint lets running
// workers carry on: they retry while the job is unknown and redo the items
// that were leased but not in the checkpoint.
//
// Thread-safety: every public method is thread-safe. Requests of one job are
// serialized by that job's mutex; jobs do not block each other.
#pragma once

#include <prometheus/metric_family.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/job_host.h"
#include "coordinator/job_session.h"
#include "core/common/status.h"

namespace ballast::coordinator {

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;           // 0: pick a free port
  double wait_timeout_s = 10;  // a held "wait" or signal request answers after this
  // Limits against hostile or broken clients (http_front.h).
  // Connections open at once (idle ones are closed to admit new ones):
  // max_connections for any client, plus connections_per_worker for each
  // worker of the jobs registered now (a computing worker holds a report and
  // a signal poll at once); the limit follows AddJob, AddWorker, RemoveJob.
  size_t max_connections = 512;
  size_t connections_per_worker = 2;
  size_t max_body_bytes = 1 << 20;  // larger: 413 from the header alone
  double idle_timeout_s = 60;       // a kept-alive connection with no request
  double header_timeout_s = 10;     // a request's header, from its first byte
  double body_timeout_s = 30;       // its body, from the header's end
  int threads = 0;                  // serving threads; 0: one per core, at most 4
  // Called once per job, with its id, when its last item is merged: a driver
  // that polls View() learns it at once instead of at its next poll. Runs
  // on a serving thread under the job's lock: it must be quick and must not
  // call the Server.
  std::function<void(const std::string& job)> on_finished;
};

class Server : public JobHost {
 public:
  // Opens the listener. Returns Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);
  // Closes the listener; held requests are answered 503 (the jobs are not
  // done, only this server is), unlike RemoveJob's "done".
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // "http://127.0.0.1:PORT".
  const std::string& url() const;
  uint16_t port() const;

  // Registers a job; its clock starts now; config.session, when empty, is
  // drawn at random. Returns Invalid as JobSession::Create does, or Conflict
  // when a job of that id exists.
  Status AddJob(JobConfig config) override;
  // Forgets a job; held requests of it are answered "done".
  void RemoveJob(const std::string& job) override;
  // Declares a worker lost (its process or pod died). NotFound when unknown.
  Status WorkerLost(const std::string& job, const std::string& worker) override;
  // Adds a worker to a running job (JobSession::AddWorker). NotFound when
  // the job is unknown.
  Status AddWorker(const std::string& job, const balance::WorkerPrior& prior,
                   std::optional<double> cores) override;
  // A snapshot of the job; nullopt when unknown. Times are seconds since
  // the job was added.
  std::optional<JobView> View(const std::string& job) const override;
  // The job's finished items and merged result, to resume from; nullopt when
  // unknown.
  std::optional<Checkpoint> TakeCheckpoint(const std::string& job) const override;
  // The job's workers (by name: their nodes) that share their node with a
  // worker of another job holding a lease now; empty when the job is unknown.
  std::set<std::string> SharedNodes(const std::string& job) const;
  void SampleSharing(const std::string& job) override;
  // Blocks until the job is finished or `timeout` passes; returns Finished().
  bool WaitFinished(const std::string& job, std::chrono::milliseconds timeout) const;
  // What GET /metrics serves: the coordinator's counters and every hosted
  // job's series (job_metrics.h). Takes each job's lock once, briefly.
  std::vector<prometheus::MetricFamily> CollectMetrics() const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::coordinator
