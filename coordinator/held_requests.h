// The long polls of one hosted job: a worker's report answered "wait" is held
// open until the policy signals that worker (then the policy is asked again
// for it) or until its deadline; a worker's signal poll is held the same way
// and answered with the signal and the lease the policy now holds for it.
// A signal for a worker that is not polling waits for its next poll. Once the
// job is over, or removed, everything held is answered "done"; when the
// server goes away, 503 "stopping" (the job is not over: workers retry).
//
// Thread-safety: every function requires the entry's mutex.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "coordinator/job_registry.h"
#include "core/protocol/messages.h"

namespace ballast::coordinator::held {

using Exchange = std::shared_ptr<net::HttpExchange>;

// Answers `exchange` with `code` and `body` as JSON (bytes that are not UTF-8
// replaced, not thrown about).
void ReplyJson(const Exchange& exchange, unsigned code, const nlohmann::json& body);
// Answers a report with `reply`.
void AnswerReport(const Exchange& exchange, const protocol::ReplyMessage& reply);
// The replies the server makes itself: no lease, no session.
protocol::ReplyMessage WaitReply();
protocol::ReplyMessage DoneReply();

// With -v (debug), one line per report and its answer: the timeline of a
// job's balancing (docs/local-mode.md, "Reading a run's decisions").
void LogDecision(const JobEntry& entry, const protocol::ReportMessage& report,
                 const protocol::ReplyMessage& reply);

// Answers "wait" to the report `worker` has held, if any: a newer report of
// the same worker replaces it (the worker gave up waiting).
void ReleaseHeldReport(JobEntry& entry, const std::string& worker);
// Holds `exchange`, a report of `worker` answered "wait", until `deadline`.
void HoldReport(JobEntry& entry, const std::string& worker, Exchange exchange, double deadline);
// A signal poll of `worker`: answered at once when the job is over or a
// signal waits for it, else held until `deadline` (a poll it held before is
// answered "no signal").
void PollSignal(JobEntry& entry, const std::string& worker, Exchange exchange, double deadline);

// Delivers every signal the policy has raised since the last call.
void DeliverSignals(JobEntry& entry);
// Answers every held report with `reply` and every held poll "job done".
void AnswerAllHeld(JobEntry& entry, const protocol::ReplyMessage& reply);
// Answers everything held 503 "stopping".
void AnswerAllStopping(JobEntry& entry);
// Answers what is held past its deadline at `now` (a report "wait", a poll
// "no signal"); returns the earliest deadline still held (+infinity: none).
double ExpireHeld(JobEntry& entry, double now);

}  // namespace ballast::coordinator::held
