// Server: the coordinator's HTTP service (cpprestsdk's listener). It hosts
// any number of jobs, each a JobSession, checks every request's token,
// holds the answers "wait" open until the policy signals the worker (long
// poll), expires silent leases on a timer thread, and serves Prometheus
// metrics. Routes are listed in protocol/messages.h; in addition:
//   GET /healthz   -> 200 "ok"
//   GET /metrics   -> Prometheus text format
//
// Responses: 200 with a JSON body; 400 malformed body or refused report
// (the message says why; nothing changed); 401 no bearer token; 403 a token
// that is not this job's; 404 unknown job, worker or route.
//
// Thread-safety: every public method is thread-safe. Requests of one job are
// serialized by that job's mutex; jobs do not block each other.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "coordinator/job_session.h"

namespace ballast::coordinator {

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;           // 0: pick a free port
  double wait_timeout_s = 10;  // a held "wait" or signal request answers after this
};

class Server {
 public:
  // Opens the listener. Returns Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // "http://127.0.0.1:PORT".
  const std::string& url() const;
  uint16_t port() const;

  // Registers a job; its clock starts now. Returns Invalid as JobSession::Create
  // does, or Conflict when a job of that id exists.
  Status AddJob(JobConfig config);
  // Forgets a job; held requests of it are answered "done".
  void RemoveJob(const std::string& job);
  // Declares a worker lost (its process or pod died). NotFound when unknown.
  Status WorkerLost(const std::string& job, const std::string& worker);
  // A snapshot of the job; nullopt when unknown. Times are seconds since
  // the job was added.
  std::optional<JobView> View(const std::string& job) const;
  // The job's finished items and merged result, to resume from; nullopt when
  // unknown.
  std::optional<Checkpoint> TakeCheckpoint(const std::string& job) const;
  // Blocks until the job is finished or `timeout` passes; returns Finished().
  bool WaitFinished(const std::string& job, std::chrono::milliseconds timeout) const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::coordinator
