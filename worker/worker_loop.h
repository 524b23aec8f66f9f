// WorkerLoop: the body of ballast-worker. It fetches the job's workload from
// the coordinator, then asks for leases, computes them in steps on all the
// threads it is given, reports finished ranges with their results, and obeys
// each reply (continue with a possibly shrunk end, a new lease, wait, done).
//
// A coordinator that restarts mid-job does not end the worker: while it is
// down or does not know the job yet, requests are retried (for give_up_s);
// when it refuses a report as stale (409: the lease came from its earlier
// incarnation), the lease and its unreported results are dropped and the
// worker asks afresh (protocol/messages.h).
//
// A step is a slice of the lease that takes about `step_seconds`, split
// across the threads; reports happen between steps, so the position a report
// gives is exact. Progress reports go at the cadence the policy asks, at
// least every heartbeat, and at once when the coordinator signals (a
// background long poll). They go out one at a time while computing goes on:
// a round trip does not idle the cores. A reply that shrinks the lease
// stops the step being computed at the new end as soon as it arrives (a step
// is computed in a few kernel calls per thread, and none goes past the end
// a reply set), so that a step does not cross a steal's cut. Items the
// worker finished past the new end before the reply came are reported all
// the same (the coordinator merges each item once, whoever is first); a
// reply with a new lease sends them with the next report. After RequestStop
// (SIGTERM) the loop finishes its step, reports what it finished with
// `leaving`, and returns: the rest of its lease goes back to the pool.
//
// Thread-safety: Run from one thread; RequestStop from any thread or a
// signal handler.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "worker/metrics.h"

namespace ballast::worker {

struct WorkerOptions {
  std::string coordinator;  // "http://host:port"
  std::string job;
  std::string token;
  std::string name;  // this worker's name in the job (its node)
  // Compute threads (exec: commands at once), unless the job sets its
  // exec.concurrency; `threads_from` says where the number came from.
  unsigned threads = 1;
  std::string threads_from = "--threads";
  double speed = 1.0;  // < 1: emulate a slower node with a duty cycle
  double step_seconds = 0.05;
  // Stop retrying a coordinator that does not answer, or does not know the
  // job, after this.
  double give_up_s = 60;
};

class WorkerLoop {
 public:
  WorkerLoop(WorkerOptions options, Metrics* metrics);
  ~WorkerLoop();

  // Runs the job to its end. Returns Ok when the coordinator says the job is
  // done or after a requested stop; Unavailable when the coordinator cannot
  // be reached, or does not know the job, for give_up_s; Invalid when it
  // refuses us (token, name) or the workload cannot run here.
  Status Run();
  // Asks Run to report and return at the next step boundary. Async-signal-safe.
  static void RequestStop();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::worker
