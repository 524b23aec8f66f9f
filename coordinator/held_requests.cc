#include "coordinator/held_requests.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "core/common/utf8.h"

namespace ballast::coordinator::held {
namespace {

protocol::ReplyMessage ReplyOf(balance::Reply::Kind kind) {
  protocol::ReplyMessage reply;
  reply.kind = kind;
  return reply;
}

// A held poll's answer at its deadline, or when the worker polls again.
nlohmann::json NoSignalJson() { return protocol::ToJson(protocol::SignalMessage{}); }

// The answer to every poll once the job is over.
nlohmann::json JobDoneSignalJson() {
  return protocol::ToJson(protocol::SignalMessage{true, true, std::nullopt});
}

// A signal to `worker`, with its lease as the policy now holds it: the
// worker stops at a steal's cut on receipt (protocol::SignalMessage).
nlohmann::json SignalJson(const JobEntry& entry, const std::string& worker) {
  protocol::SignalMessage signal;
  signal.signalled = true;
  signal.lease = entry.session->SignalLease(worker);
  return protocol::ToJson(signal);
}

void Deliver(JobEntry& entry, const std::string& worker) {
  if (auto held = entry.waiting_reports.find(worker); held != entry.waiting_reports.end()) {
    // The worker is waiting on its report: ask the policy again for it.
    protocol::ReportMessage ask;
    ask.worker = worker;
    ask.idle = true;
    auto reply = entry.session->HandleReport(ask, entry.Now());
    if (reply.ok() && reply->kind == balance::Reply::Kind::kWait) return;
    if (reply.ok()) LogDecision(entry, ask, *reply);
    AnswerReport(held->second.exchange, reply.ok() ? *reply : WaitReply());
    entry.waiting_reports.erase(held);
    return;
  }
  if (auto poll = entry.signal_polls.find(worker); poll != entry.signal_polls.end()) {
    const nlohmann::json signal = SignalJson(entry, worker);
    if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("signal job={} worker={} at_s={:.4f} answer={}", entry.session->config().id,
                    worker, entry.Now(), DumpJson(signal));
    }
    ReplyJson(poll->second.exchange, 200, signal);
    entry.signal_polls.erase(poll);
    return;
  }
  spdlog::debug("signal job={} worker={} at_s={:.4f} answer=\"on its next poll\"",
                entry.session->config().id, worker, entry.Now());
  entry.pending_signals.insert(worker);
}

}  // namespace

void ReplyJson(const Exchange& exchange, unsigned code, const nlohmann::json& body) {
  exchange->Reply({code, "application/json", DumpJson(body)});
}

void AnswerReport(const Exchange& exchange, const protocol::ReplyMessage& reply) {
  ReplyJson(exchange, 200, protocol::ToJson(reply));
}

protocol::ReplyMessage WaitReply() { return ReplyOf(balance::Reply::Kind::kWait); }
protocol::ReplyMessage DoneReply() { return ReplyOf(balance::Reply::Kind::kDone); }

void LogDecision(const JobEntry& entry, const protocol::ReportMessage& report,
                 const protocol::ReplyMessage& reply) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  std::string completed;
  for (const protocol::Completion& c : report.completed) completed += c.range.ToString();
  spdlog::debug(
      "report job={} worker={} at_s={:.4f} seq={} idle={} position={}{} calc_s={:.4f} "
      "completed=\"{}\" reply={} lease={} report_every_s={:.3f}",
      entry.session->config().id, report.worker, entry.Now(), report.seq, report.idle,
      report.position,
      report.running_end > 0 ? fmt::format(" running_end={}", report.running_end) : "",
      report.calc_seconds, completed, protocol::ReplyKindName(reply.kind), reply.lease.ToString(),
      reply.report_every_s);
  // An idle worker told to wait: why nothing of the others' was worth
  // taking; or leased other than the obvious way: why.
  const bool wait = reply.kind == balance::Reply::Kind::kWait;
  if ((wait || reply.kind == balance::Reply::Kind::kLease) && report.idle) {
    const std::string why = entry.session->WaitReason();
    if (!why.empty()) {
      spdlog::debug("{} job={} worker={} why=\"{}\"", wait ? "wait" : "lease",
                    entry.session->config().id, report.worker, why);
    }
  }
}

void ReleaseHeldReport(JobEntry& entry, const std::string& worker) {
  if (auto held = entry.waiting_reports.find(worker); held != entry.waiting_reports.end()) {
    AnswerReport(held->second.exchange, WaitReply());
    entry.waiting_reports.erase(held);
  }
}

void HoldReport(JobEntry& entry, const std::string& worker, Exchange exchange, double deadline) {
  entry.waiting_reports[worker] = {std::move(exchange), deadline};
}

void PollSignal(JobEntry& entry, const std::string& worker, Exchange exchange, double deadline) {
  if (entry.session->Finished()) {
    ReplyJson(exchange, 200, JobDoneSignalJson());
    return;
  }
  if (entry.pending_signals.erase(worker) > 0) {
    ReplyJson(exchange, 200, SignalJson(entry, worker));
    return;
  }
  if (auto held = entry.signal_polls.find(worker); held != entry.signal_polls.end()) {
    ReplyJson(held->second.exchange, 200, NoSignalJson());
  }
  entry.signal_polls[worker] = {std::move(exchange), deadline};
}

void DeliverSignals(JobEntry& entry) {
  for (auto signals = entry.session->TakeSignals(); !signals.empty();
       signals = entry.session->TakeSignals()) {
    for (const std::string& worker : signals) Deliver(entry, worker);
  }
}

void AnswerAllHeld(JobEntry& entry, const protocol::ReplyMessage& reply) {
  for (auto& [worker, held] : entry.waiting_reports) AnswerReport(held.exchange, reply);
  entry.waiting_reports.clear();
  // Only a finished or removed job answers everyone at once.
  for (auto& [worker, held] : entry.signal_polls) {
    ReplyJson(held.exchange, 200, JobDoneSignalJson());
  }
  entry.signal_polls.clear();
}

void AnswerAllStopping(JobEntry& entry) {
  const nlohmann::json body =
      protocol::RefusalJson(protocol::kReasonStopping, "the coordinator is stopping; retry");
  for (auto* held_map : {&entry.waiting_reports, &entry.signal_polls}) {
    for (auto& [worker, held] : *held_map) {
      ReplyJson(held.exchange, 503, body);
    }
    held_map->clear();
  }
}

double ExpireHeld(JobEntry& entry, double now) {
  double next = std::numeric_limits<double>::infinity();
  for (auto* held_map : {&entry.waiting_reports, &entry.signal_polls}) {
    for (auto it = held_map->begin(); it != held_map->end();) {
      if (it->second.deadline > now) {
        next = std::min(next, it->second.deadline);
        ++it;
        continue;
      }
      if (held_map == &entry.waiting_reports) {
        AnswerReport(it->second.exchange, WaitReply());
      } else {
        ReplyJson(it->second.exchange, 200, NoSignalJson());
      }
      it = held_map->erase(it);
    }
  }
  return next;
}

}  // namespace ballast::coordinator::held
