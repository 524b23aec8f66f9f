// The wire protocol between workers and the coordinator: JSON bodies over
// HTTP, the same for local runs and for pods on Kubernetes.
//
//   GET  /v1/jobs/{job}                 -> JobDescription (the workload to compute)
//   POST /v1/jobs/{job}/report          ReportMessage -> ReplyMessage
//   GET  /v1/jobs/{job}/signal?worker=W -> SignalMessage (held until a signal or timeout)
//
// Every request carries "Authorization: Bearer <job token>". (Beside them the
// coordinator answers GET /v1/jobs/{job}/progress without one, for people
// watching: progress.h.) One report both
// hands in finished ranges with their results and asks for what to do next
// (seed 001: few, batched messages). A report whose answer is "wait" is held
// by the coordinator until there is work again (long poll), so an idle worker
// sends no traffic while it waits.
//
// Any answer but 200 has the body {"error": "<for people>", "reason": "<for
// programs>"} (ParseRefusal reads it). What a worker does with each:
//   404 unknown_job    the job is not registered (yet): retry as if the
//                      coordinator were unreachable; a restarted coordinator
//                      registers its jobs again within seconds
//   409 stale          a report of a lease that an earlier incarnation of the
//                      coordinator granted (its `session` is not this one's):
//                      drop the lease and its unreported results, ask afresh
//                      with an idle report; the items are leased again
//   5xx, no answer     retry with backoff (503 stopping: the coordinator is
//                      shutting down)
//   408 timeout        the request did not arrive in time (a stalled
//                      network): retry with backoff
//   other 4xx          fatal: wrong token (401, 403), unknown worker (404),
//                      malformed or refused report (400), a body over
//                      kMaxBodyBytes (413) or a header over 16 KiB (431)
// Signal polls obey the same rules but never end the worker: a poll that
// fails is retried with backoff.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/workload.h"

namespace ballast::protocol {

// One finished sub-range and the result of exactly its items.
struct Completion {
  balance::Range range;
  nlohmann::json result;  // workload::Result::ToJson() of the range
};

struct ReportMessage {
  std::string worker;                 // the worker's name (its node)
  uint64_t seq = 0;                   // increases with every report of one process
  std::string session;                // the `session` of the reply that granted its lease
  std::vector<Completion> completed;  // finished since the previous report
  double calc_seconds = 0;            // seconds spent computing since the previous report
  double cpu_seconds = 0;             // CPU seconds that computing used (all threads)
  uint64_t position = 0;              // first unfinished item of its lease
  bool idle = false;                  // it holds no unfinished lease and asks for work
  bool leaving = false;               // it stops after this report (SIGTERM): hand back the rest
  // The end of the run of several items it has begun, which cannot stop
  // before it (an exec step's one command); 0 when it may stop after any item.
  uint64_t running_end = 0;
};

struct ReplyMessage {
  balance::Reply::Kind kind = balance::Reply::Kind::kWait;
  balance::Range lease;       // kLease: the new lease; kContinue: the lease, end maybe shrunk
  double report_every_s = 0;  // progress cadence asked by the policy (0: only at lease end)
  double heartbeat_s = 0;     // report at least this often while computing (lease expiry)
  // Names the coordinator's session of the job: a restarted coordinator's is
  // another, so it tells the leases of its earlier incarnation from bad ones.
  std::string session;
};

struct JobDescription {
  std::string job;
  workload::WorkloadSpec workload;
};

// The reason a held signal request returned.
struct SignalMessage {
  bool signalled = false;  // true: contact the coordinator now; false: timed out, ask again
  bool done = false;       // the job is over: stop polling
  // The lease the coordinator holds for the worker when it answered, when the
  // worker holds one: a steal may have cut its end nearer than the worker
  // knows. A worker computing a lease of this begin stops at this end at
  // once, before the reply to its next report tells it the same.
  std::optional<balance::Range> lease;
};

nlohmann::json ToJson(const ReportMessage& message);
nlohmann::json ToJson(const ReplyMessage& message);
nlohmann::json ToJson(const JobDescription& message);
nlohmann::json ToJson(const SignalMessage& message);

// Each parser returns the message, or Invalid naming the field that is
// missing, mistyped or out of range ("completed[2].range.end: expected an
// integer >= begin"). Unknown fields are ignored (forward compatibility).
StatusOr<ReportMessage> ParseReport(const nlohmann::json& json);
StatusOr<ReplyMessage> ParseReply(const nlohmann::json& json);
StatusOr<JobDescription> ParseJobDescription(const nlohmann::json& json);
StatusOr<SignalMessage> ParseSignal(const nlohmann::json& json);
// The largest body either side sends or accepts, and how deeply its arrays
// and objects may nest: a report's results are a few objects deep and a few
// hundred bytes per completion, so these leave room for thousands of
// completions in one report while a hostile body can neither exhaust memory
// nor the stack of code that walks (copies, compares, prints) the JSON.
inline constexpr size_t kMaxBodyBytes = size_t{1} << 20;  // 1 MiB
inline constexpr int kMaxBodyDepth = 32;

// Parses a body into JSON with ParseBoundedJson (common/bounded_json.h), the
// only way a peer's text becomes JSON here: Invalid naming "the body" when it
// is longer than kMaxBodyBytes, nests deeper than kMaxBodyDepth, or is not
// JSON (with the byte where parsing stopped). Never throws, never recurses.
StatusOr<nlohmann::json> ParseJsonText(std::string_view text);

const char* ReplyKindName(balance::Reply::Kind kind);

// Refusal reasons a worker acts on (see the table above).
inline constexpr char kReasonUnknownJob[] = "unknown_job";
inline constexpr char kReasonStale[] = "stale";
inline constexpr char kReasonStopping[] = "stopping";

// The body of every answer but 200.
struct Refusal {
  std::string reason;  // for programs: kReason*, "malformed", ...
  std::string error;   // for people: what is wrong
};

// {"error": message, "reason": reason}.
nlohmann::json RefusalJson(const std::string& reason, const std::string& message);
// The refusal in an answer's body. Never fails: a body that is not one (not
// JSON, or from a coordinator that predates reasons) gives reason "" and the
// body as the error.
Refusal ParseRefusal(const std::string& body);

}  // namespace ballast::protocol
