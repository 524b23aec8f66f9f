// JobRegistry: the jobs a coordinator hosts, by id. Each is a JobEntry: its
// JobSession, its clock, and the workers' requests held open for it (long
// polls, held_requests.h). The registry owns the map and answers what spans
// jobs (which nodes two jobs share, every job's metric sample); what a request
// does to one job is the Server's (server.cc) under that job's mutex.
//
// Thread-safety: every method is thread-safe. The map has its own mutex,
// never held while a job's is taken, and a method takes at most one job's
// mutex at a time, so there is no lock order to keep.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "coordinator/job_metrics.h"
#include "coordinator/job_session.h"
#include "core/common/status.h"
#include "net/http_front.h"

namespace ballast::coordinator {

// A request held open: answered when its worker is signalled, or at its
// deadline (seconds on the job's clock).
struct Held {
  std::shared_ptr<net::HttpExchange> exchange;
  double deadline = 0;
};

// One hosted job. Every field but `epoch` and `workers` is guarded by `mutex`.
struct JobEntry {
  using Clock = std::chrono::steady_clock;
  mutable std::mutex mutex;
  mutable std::condition_variable finished_cv;
  std::unique_ptr<JobSession> session;
  Clock::time_point epoch;
  std::map<std::string, Held> waiting_reports;  // answered "wait", held
  std::map<std::string, Held> signal_polls;
  std::set<std::string> pending_signals;  // signalled while not polling
  bool finish_announced = false;          // ServerOptions::on_finished called
  size_t workers = 0;                     // the session's, counted in Server's limit
  // Seconds since the job was added: its session's clock.
  double Now() const { return std::chrono::duration<double>(Clock::now() - epoch).count(); }
};

class JobRegistry {
 public:
  // Makes the job's session (config.session drawn at random when empty, a
  // verification seed when verification is on and has none) and adds it;
  // its clock starts now. Invalid as JobSession::Create, Conflict when a job
  // of that id exists.
  StatusOr<std::shared_ptr<JobEntry>> Add(JobConfig config);
  // Takes the job out and returns it; nullptr when unknown.
  std::shared_ptr<JobEntry> Remove(const std::string& id);
  // Takes every job out (the server is going away).
  std::map<std::string, std::shared_ptr<JobEntry>> RemoveAll();
  // nullptr when unknown.
  std::shared_ptr<JobEntry> Find(const std::string& id) const;
  // Every job now.
  std::vector<std::shared_ptr<JobEntry>> All() const;
  size_t size() const;

  // The job's workers (by name: their nodes) that share their node with a
  // worker of another job holding a lease now; empty when the job is unknown.
  std::set<std::string> SharedNodes(const std::string& id) const;
  // Every job's sample for GET /metrics (job_metrics.h), taken at `unix_now`.
  std::vector<JobSample> Samples(double unix_now) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<JobEntry>> jobs_;
};

}  // namespace ballast::coordinator
