// JobHost: the narrow face of a coordinator that hosts jobs for a driver —
// register a job, forget it, declare a worker lost, read a job's view and take
// its checkpoint — and nothing of the network. coordinator::Server implements
// it; the operator's reconciler holds only a JobHost, so what it asks of the
// coordinator is written down here.
//
// Thread-safety: implementations make every method thread-safe.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "coordinator/job_types.h"
#include "core/common/status.h"

namespace ballast::coordinator {

class JobHost {
 public:
  virtual ~JobHost() = default;

  // Registers a job. Returns Invalid as JobSession::Create does, or Conflict
  // when a job of that id exists.
  virtual Status AddJob(JobConfig config) = 0;
  // Forgets a job; its workers hear "done". Nothing happens when unknown.
  virtual void RemoveJob(const std::string& job) = 0;
  // Declares a worker lost (its pod or node is gone): its unfinished work
  // returns to the pool. NotFound when the job or worker is unknown.
  virtual Status WorkerLost(const std::string& job, const std::string& worker) = 0;
  // Adds a worker to a running job (its node became eligible mid-job), as
  // JobSession::AddWorker does; nothing changes when it is in the job
  // already. NotFound when the job is unknown.
  virtual Status AddWorker(const std::string& job, const balance::WorkerPrior& prior,
                           std::optional<double> cores) = 0;
  // A snapshot of the job; nullopt when unknown.
  virtual std::optional<JobView> View(const std::string& job) const = 0;
  // The job's finished items and merged result; nullopt when unknown.
  virtual std::optional<Checkpoint> TakeCheckpoint(const std::string& job) const = 0;
  // Samples which of the job's workers (by name: their nodes) share their
  // node with a worker of another job holding a lease now, into the job's
  // session (JobSession::SampleSharing): what decides whether their speeds
  // count as history (recorded_speeds.h). Nothing happens when the job is
  // unknown or finished.
  virtual void SampleSharing(const std::string& job) = 0;
};

}  // namespace ballast::coordinator
