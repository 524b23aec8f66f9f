#include "worker/worker_loop.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"
#include "worker/compute_step.h"
#include "worker/coordinator_client.h"
#include "worker/kernels/kernel.h"
#include "worker/lease_ledger.h"
#include "worker/report_channel.h"
#include "worker/step_size.h"

namespace ballast::worker {
namespace {

using balance::Range;
using balance::Reply;
using Clock = std::chrono::steady_clock;

// Set by RequestStop from a signal handler, read by every thread of the
// loop: an atomic, which a handler may store to when it is lock-free.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

class WorkerLoop::Impl {
 public:
  Impl(WorkerOptions options, Metrics* metrics)
      : options_(std::move(options)),
        metrics_(metrics),
        client_({options_.coordinator, options_.job, options_.token, options_.give_up_s},
                [] { return g_stop.load(); }) {}

  ~Impl() {
    stop_polling_ = true;
    if (poller_.joinable()) poller_.join();
  }

  Status Run() {
    Status status = RunJob();
    stop_polling_ = true;
    return status;
  }

 private:
  // Fetches the job's workload, chooses the threads, and starts listening
  // for the coordinator's signals.
  Status Start() {
    BALLAST_ASSIGN_OR_RETURN(auto description, client_.FetchJob());
    workload_ = description.workload;
    metrics_->Bind(workload::WorkloadKindName(workload_.kind));
    BALLAST_ASSIGN_OR_RETURN(kernel_, kernels::MakeKernel(workload_));
    std::string threads_from = options_.threads_from;
    threads_ = options_.threads;
    // A duty cycle emulates a fraction of one core: one thread.
    if (workload_.kind == workload::WorkloadKind::kExec && workload_.exec.concurrency > 0 &&
        options_.speed >= 1) {
      threads_ = workload_.exec.concurrency;
      threads_from = "the job's exec.concurrency";
    }
    steps_ =
        StepPlanner(balance::CostModel(workload_.items, workload_.cost, workload_.item_costs),
                    threads_, options_.step_seconds,
                    workload_.kind == workload::WorkloadKind::kExec && !workload_.exec.per_item);
    spdlog::info(
        "worker started job={} worker={} workload={} items={} threads={} threads_from=\"{}\" "
        "speed={}",
        options_.job, options_.name, workload::WorkloadKindName(workload_.kind), workload_.items,
        threads_, threads_from, options_.speed);
    poller_ = std::thread([this] {
      client_.PollSignals(
          options_.name, [this] { return stop_polling_ || g_stop; },
          [this](const protocol::SignalMessage& signal) {
            // A steal's cut: the step being computed stops there at once.
            if (signal.lease) ledger_.cut().Offer(*signal.lease);
            spdlog::debug("signal received lease={}",
                          signal.lease ? signal.lease->ToString() : "none");
            signalled_ = true;
          });
    });
    return Status::Ok();
  }

  // The job's end, with what this process spent of its CPU on its own
  // (leases, reports; a kernel's computing, which runs in it) and what its
  // commands spent, so that a pod's CPU can be told apart (the bench reads
  // it); for a command run per step, its runs and the start it learned.
  void LogDone() const {
    const ProcessCpu cpu = ProcessCpuSplit();
    const std::string runs = steps_.one_run_per_step()
                                 ? fmt::format(" runs={} run_start_s={:.4f}", steps_.runs(),
                                               steps_.run_start().seconds())
                                 : "";
    spdlog::info("job done job={} worker={} cpu_self_s={:.3f} cpu_commands_s={:.3f}{}",
                 options_.job, options_.name, cpu.own, cpu.children, runs);
  }

  Status RunJob() {
    BALLAST_RETURN_IF_ERROR(Start());
    protocol::ReportMessage ask = NewReport(/*idle=*/true);
    while (true) {
      const bool leaving = ask.leaving;
      std::optional<StatusOr<protocol::ReplyMessage>> answered =
          ask.idle && !leaving ? channel_.SendUnless(ask, [] { return g_stop.load(); })
                               : channel_.Send(std::move(ask));
      if (!answered) {
        ask.leaving = true;  // the same report again, as the last one
        continue;
      }
      StatusOr<protocol::ReplyMessage> sent = std::move(*answered);
      if (sent.status().code() == StatusCode::kConflict) {
        // A stop request still goes out with the fresh report.
        ask = DroppedLease(sent.status());
        continue;
      }
      BALLAST_ASSIGN_OR_RETURN(protocol::ReplyMessage reply, std::move(sent));
      if (leaving) {
        spdlog::info("stopped on request job={} worker={}", options_.job, options_.name);
        return Status::Ok();
      }
      switch (reply.kind) {
        case Reply::Kind::kDone:
          LogDone();
          return Status::Ok();
        case Reply::Kind::kWait:
          if (g_stop) return Status::Ok();
          ask = NewReport(/*idle=*/true);
          continue;
        case Reply::Kind::kLease:
        case Reply::Kind::kContinue:
          spdlog::debug("lease {} report_every_s={}", reply.lease.ToString(), reply.report_every_s);
          metrics_->Lease();
          BALLAST_ASSIGN_OR_RETURN(ask, Compute(reply));
      }
    }
  }

  protocol::ReportMessage NewReport(bool idle) {
    protocol::ReportMessage report;
    report.worker = options_.name;
    report.idle = idle;
    report.leaving = g_stop;
    report.session = ledger_.session();
    return report;
  }

  // Posts a progress report while computing goes on. A reply that lets the
  // lease go on to a nearer end (a steal cut it) is offered to cut_ at once,
  // so that the step being computed stops there rather than at its planned
  // end (worker/lease_cut.h). The loop obeys the reply itself after the step
  // (ApplyLate).
  StatusOr<protocol::ReplyMessage> PostProgress(const protocol::ReportMessage& report) {
    auto reply = channel_.Post(report);
    if (reply.ok() && reply->kind == Reply::Kind::kContinue) ledger_.cut().Offer(reply->lease);
    return reply;
  }

  // Kernel calls per thread and step: a reply that cuts the lease stops the
  // step at the cut within about step_seconds / kChunksPerStep. An exec job
  // that runs one command per sub-range keeps one call per step, so that a
  // step stays one command.
  unsigned ChunksPerStep() const {
    constexpr unsigned kChunksPerStep = 8;
    return steps_.one_run_per_step() ? 1 : kChunksPerStep;
  }

  protocol::ReportMessage ReportOf(bool idle) {
    protocol::ReportMessage report = NewReport(idle);
    ledger_.Fill(report);
    return report;
  }

  // Obeys the reply to a progress report that went out while computing went
  // on. Returns false when the lease is no longer ours (a restarted
  // coordinator): the caller drops it.
  StatusOr<bool> ApplyLate(StatusOr<protocol::ReplyMessage> sent) {
    if (sent.status().code() == StatusCode::kConflict) return false;
    BALLAST_ASSIGN_OR_RETURN(protocol::ReplyMessage reply, channel_.Accept(std::move(sent)));
    switch (reply.kind) {
      case Reply::Kind::kLease:
        metrics_->Lease();
        [[fallthrough]];
      case Reply::Kind::kContinue:
        ledger_.Obey(reply);
        break;
      case Reply::Kind::kWait:
      case Reply::Kind::kDone:
        ledger_.EndHere();  // the rest went back to the pool
        break;
    }
    return true;
  }

  // The progress report that may be out while computing goes on (one at a
  // time), and what its replies said.
  struct Exchange {
    std::future<StatusOr<protocol::ReplyMessage>> in_flight;
    std::optional<Status> dropped;  // set when a reply says the lease is not ours
    bool due = false;               // a report is due and waits for the one in flight
    Clock::time_point since_report = Clock::now();

    bool Landed() const {
      return in_flight.valid() &&
             in_flight.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }
  };

  // Computes the lease in steps until it ends or a stop is requested, and
  // returns the report to send next (idle when the lease ended). Progress
  // reports go out at the cadence the policy asks, at least every heartbeat,
  // and soon after a signal; one at a time, while computing goes on, so that
  // a round trip never leaves the cores idle.
  StatusOr<protocol::ReportMessage> Compute(const protocol::ReplyMessage& reply) {
    ledger_.StartUnreported();
    ledger_.Obey(reply);
    ledger_.cut().Begin(ledger_.lease());
    Exchange exchange;
    while (!g_stop && !job_done_) {
      ledger_.FoldCut();
      if (ledger_.finished()) {
        // The lease is finished; the reply to the last progress report may
        // still bring a new one.
        if (!exchange.in_flight.valid()) break;
        BALLAST_RETURN_IF_ERROR(Land(exchange));
        if (exchange.dropped) return DroppedLease(*exchange.dropped);
        continue;
      }
      const Range planned = steps_.Next({ledger_.position(), ledger_.lease().end});
      ledger_.Running(steps_.RunEnd(planned));
      if (ledger_.RunUntold() && !exchange.in_flight.valid()) SendProgress(exchange);
      const auto start = Clock::now();
      std::vector<StatusOr<protocol::ReplyMessage>> held;  // replies to obey after the step
      auto part = ComputeKeepingAlive(planned, exchange, held);
      // A stop ended the step's exec commands: its items go back with the lease.
      if (!part.ok() && g_stop) break;
      // The job finished while the step ran (a backup's copy of these items
      // was handed in first): its commands were ended, its result is not needed.
      if (!part.ok() && job_done_) {
        ledger_.EndHere();
        break;
      }
      BALLAST_RETURN_IF_ERROR(part.status());
      // Replies heard during the step, in order, as if it had been short.
      if (part->range.empty()) {
        BALLAST_RETURN_IF_ERROR(AfterEmptyStep(planned, exchange, held));
      } else {
        BALLAST_RETURN_IF_ERROR(AfterStep(std::move(*part), Since(start), exchange, held));
      }
      if (exchange.dropped) return DroppedLease(*exchange.dropped);
    }
    if (exchange.in_flight.valid()) {  // asked to stop
      BALLAST_RETURN_IF_ERROR(Land(exchange));
      if (exchange.dropped) return DroppedLease(*exchange.dropped);
    }
    return ReportOf(/*idle=*/ledger_.finished());
  }

  // Runs a step (and an emulated node's idle share after it) beside this
  // thread, which meanwhile keeps the lease: a step longer than a heartbeat
  // (an exec item of minutes) must not go silent for so long that the lease
  // expires and its items run again elsewhere. Replies that land meanwhile
  // are held for the caller to obey after the step.
  StatusOr<ComputedStep> ComputeKeepingAlive(Range planned, Exchange& exchange,
                                             std::vector<StatusOr<protocol::ReplyMessage>>& held) {
    const auto start = Clock::now();
    auto computing = std::async(std::launch::async, [&] {
      auto computed = ComputeStep(*kernel_, planned, threads_, ChunksPerStep(), workload_.kind,
                                  ledger_.cut().end_flag());
      if (computed.ok() && !computed->range.empty()) Throttle(Since(start));
      return computed;
    });
    while (computing.wait_for(KeepAliveWait(exchange.since_report, exchange.in_flight.valid())) !=
           std::future_status::ready) {
      if (exchange.Landed()) {
        held.push_back(exchange.in_flight.get());
        EndCommandsOfAFinishedJob(held.back());
      }
      if (exchange.in_flight.valid()) continue;
      // A heartbeat (what is finished goes with it: nothing, mid-way through one
      // long step), or the name of a run that began while a report was out.
      if (HeartbeatDue(exchange.since_report) || ledger_.RunUntold()) SendProgress(exchange);
    }
    return computing.get();
  }

  // A step that computed nothing: a reply or a signal ended the lease where
  // the worker is.
  Status AfterEmptyStep(Range planned, Exchange& exchange,
                        std::vector<StatusOr<protocol::ReplyMessage>>& held) {
    BALLAST_RETURN_IF_ERROR(ObeyHeld(exchange, held));
    if (exchange.dropped) return Status::Ok();
    // A signal, or a reply held during the step, ended it.
    if (std::min(ledger_.cut().end(), ledger_.lease().end) <= ledger_.position()) {
      return Status::Ok();
    }
    // The reply in flight ends it: obey that.
    if (!exchange.in_flight.valid()) {
      return Status::Invalid(fmt::format("step {}: nothing computed", planned.ToString()));
    }
    return Land(exchange);
  }

  // A step that computed `step`: its result joins the unreported, the held
  // replies are obeyed, and a progress report goes out when one is due.
  Status AfterStep(ComputedStep step, double seconds, Exchange& exchange,
                   std::vector<StatusOr<protocol::ReplyMessage>>& held) {
    const Range range = step.range;  // shorter than planned when a reply cut the lease
    if (step.result.kind() != workload_.kind) {
      return Status::Invalid(fmt::format("step {}: a result of another kind", range.ToString()));
    }
    ledger_.Finished(range, std::move(step.result), seconds);
    steps_.Done(range, seconds);
    metrics_->Items(range.size(), seconds);
    metrics_->Busy(seconds);
    BALLAST_RETURN_IF_ERROR(ObeyHeld(exchange, held));
    if (exchange.dropped) return Status::Ok();
    if (exchange.Landed()) {
      BALLAST_RETURN_IF_ERROR(Land(exchange));
      if (exchange.dropped) return Status::Ok();
    }
    const double report_every_s = ledger_.report_every_s();
    const uint64_t run_end =
        ledger_.finished() ? 0
                           : steps_.RunEnd(steps_.Next({ledger_.position(), ledger_.lease().end}));
    // What was finished goes out before a run of several items: held a run
    // long, its wait counts at the coordinator as the lease's start overhead.
    exchange.due |= signalled_.exchange(false) ||
                    (report_every_s > 0 && ledger_.unreported_calc() >= report_every_s) ||
                    run_end != 0 || HeartbeatDue(exchange.since_report);
    if (!exchange.due || exchange.in_flight.valid() || ledger_.finished()) return Status::Ok();
    // Sent as the next step begins: its run under way, if any, goes with it.
    ledger_.Running(run_end);
    SendProgress(exchange);
    exchange.due = false;
    return Status::Ok();
  }

  // Sends what is finished as a progress report, while computing goes on.
  void SendProgress(Exchange& exchange) {
    exchange.in_flight = std::async(std::launch::async, &Impl::PostProgress, this,
                                    channel_.Number(ReportOf(/*idle=*/false)));
    exchange.since_report = Clock::now();
  }

  // Waits for the report in flight and obeys its reply.
  Status Land(Exchange& exchange) {
    const auto start = Clock::now();
    auto sent = exchange.in_flight.get();
    metrics_->Idle(Since(start));
    const Status why = sent.status();
    BALLAST_ASSIGN_OR_RETURN(const bool ours, ApplyLate(std::move(sent)));
    if (!ours) exchange.dropped = why;
    return Status::Ok();
  }

  // Obeys the replies held during a step, in order.
  Status ObeyHeld(Exchange& exchange, std::vector<StatusOr<protocol::ReplyMessage>>& held) {
    for (auto& sent : held) {
      const Status why = sent.status();
      BALLAST_ASSIGN_OR_RETURN(const bool ours, ApplyLate(std::move(sent)));
      if (!ours && !exchange.dropped) exchange.dropped = why;
    }
    held.clear();
    return Status::Ok();
  }

  // A reply heard while an exec step runs says the job is finished: every
  // item's result is merged, so what the step's commands compute (a backup's
  // other copy of them, run beside) will be dropped. They are ended at once
  // instead of being left to run to the end; the worker then leaves.
  void EndCommandsOfAFinishedJob(const StatusOr<protocol::ReplyMessage>& reply) {
    if (!reply.ok() || reply->kind != Reply::Kind::kDone) return;
    if (workload_.kind != workload::WorkloadKind::kExec || job_done_) return;
    spdlog::info("job done while a step runs; ending its commands job={} worker={}", options_.job,
                 options_.name);
    job_done_ = true;
    kernels::StopExecCommands(std::chrono::seconds(2));
  }

  bool HeartbeatDue(Clock::time_point since_report) const {
    return channel_.heartbeat_s() > 0 && Since(since_report) >= channel_.heartbeat_s();
  }

  // How long to wait for a step before looking again whether a heartbeat is
  // due: until it is, at most a second; with a reply awaited, at least 20 ms
  // (its landing is looked for at that pace).
  std::chrono::nanoseconds KeepAliveWait(Clock::time_point since_report, bool reply_awaited) const {
    constexpr std::chrono::nanoseconds kLongest = std::chrono::seconds(1);
    if (channel_.heartbeat_s() <= 0) return kLongest;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(channel_.heartbeat_s() - Since(since_report)));
    const std::chrono::nanoseconds shortest =
        reply_awaited ? std::chrono::milliseconds(20) : std::chrono::milliseconds(1);
    return std::clamp(left, shortest, kLongest);
  }

  // The coordinator restarted since it leased to us (409): what we computed
  // of that lease is not ours to hand in. Forgets it; returns a fresh ask.
  protocol::ReportMessage DroppedLease(const Status& why) {
    spdlog::info("lease dropped job={} worker={} lease={} reason=\"{}\"", options_.job,
                 options_.name, ledger_.lease().ToString(), why.message());
    ledger_.Drop();
    return NewReport(/*idle=*/true);
  }

  // A node of speed s < 1 spends (1/s - 1) seconds idle per second computing.
  void Throttle(double seconds) const {
    if (options_.speed >= 1) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds * (1 / options_.speed - 1)));
  }

  WorkerOptions options_;
  Metrics* metrics_;
  CoordinatorClient client_;
  ReportChannel channel_{client_, metrics_};
  workload::WorkloadSpec workload_;
  std::unique_ptr<kernels::Kernel> kernel_;
  unsigned threads_ = 1;  // compute threads for this job
  LeaseLedger ledger_;    // the lease held and what is finished of it
  StepPlanner steps_;     // how long the next step is (step_size.h)
  std::atomic<bool> signalled_{false};
  std::atomic<bool> stop_polling_{false};
  bool job_done_ = false;  // a reply said the job is finished while a step ran
  std::thread poller_;
};

WorkerLoop::WorkerLoop(WorkerOptions options, Metrics* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), metrics)) {}
WorkerLoop::~WorkerLoop() = default;
Status WorkerLoop::Run() { return impl_->Run(); }
void WorkerLoop::RequestStop() { g_stop = true; }

}  // namespace ballast::worker
