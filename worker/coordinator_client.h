// CoordinatorClient: the worker's side of the HTTP protocol with the
// coordinator (core/protocol/messages.h): fetch the job, post a report and
// read the reply, long-poll for signals. It retries what may pass (no answer,
// 5xx, 408, a job the coordinator does not know yet: it may be adding it
// again after a restart) with backoff for give_up_s, and says why the
// coordinator cannot be reached in words a person can act on (reach.h).
// What to do with an answer is the worker loop's (worker_loop.h).
//
// A wait that must end early gives the request up rather than cancelling it
// (AwaitResponse in the .cc): cancelling a cpprestsdk request in flight from
// another thread races the library's I/O thread.
//
// Thread-safety: FetchJob and PostReport may run on several threads at once
// (one HTTP client, which cpprestsdk allows); PollSignals runs on a thread of
// its own with a client of its own.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/status.h"
#include "core/protocol/messages.h"

namespace ballast::worker {

// Something to check while waiting for an answer: true gives the wait up.
using GiveUp = std::function<bool()>;

struct CoordinatorAddress {
  std::string url;  // "http://host:port"
  std::string job;
  std::string token;
  // Stop retrying a coordinator that does not answer, or does not know the
  // job, after this.
  double give_up_s = 60;
};

class CoordinatorClient {
 public:
  // `stopping` says the worker was asked to stop: a failing exchange is then
  // not retried (nobody is left to hand the lease back to).
  CoordinatorClient(CoordinatorAddress address, GiveUp stopping);
  ~CoordinatorClient();
  CoordinatorClient(const CoordinatorClient&) = delete;
  CoordinatorClient& operator=(const CoordinatorClient&) = delete;

  // GET /v1/jobs/<job>. Errors as PostReport's.
  StatusOr<protocol::JobDescription> FetchJob();

  // POST /v1/jobs/<job>/report. Returns the reply; Conflict on 409 (the lease
  // came from an earlier incarnation of the coordinator); Invalid when the
  // coordinator refuses the report otherwise (or its answer is not a reply);
  // Unavailable after give_up_s of failures, at once when asked to stop and
  // the exchange fails, and at once when `abandon` says to stop waiting.
  StatusOr<protocol::ReplyMessage> PostReport(const protocol::ReportMessage& report,
                                              const GiveUp& abandon = {});

  // Long-polls GET /v1/jobs/<job>/signal?worker=<worker> until `stop` says so
  // or a signal says the job is done, calling `on_signal` with each signal
  // that came (on this thread). A poll that fails is retried with backoff.
  void PollSignals(const std::string& worker, const GiveUp& stop,
                   const std::function<void(const protocol::SignalMessage&)>& on_signal) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::worker
