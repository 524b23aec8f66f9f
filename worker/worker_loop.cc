#include "worker/worker_loop.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"
#include "worker/coordinator_client.h"
#include "worker/kernels/kernel.h"
#include "worker/lease_cut.h"
#include "worker/report_ranges.h"
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

// CPU seconds of this process and of its children that have ended (the
// exec workload's commands do their work in children).
double ProcessCpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    for (const timeval& t : {usage.ru_utime, usage.ru_stime}) {
      total += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    }
  }
  return total;
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What a step computed: the range from its start to where it stopped, and
// that range's Result.
struct Computed {
  Range range;
  workload::Result result;
};

// Computes `step` on `threads` threads, each its slice of the step in
// `chunks` calls of the kernel, and stops early at `limit` when a reply that
// arrives meanwhile cuts the lease there: a chunk is clipped to the limit as
// it reads it, and none starts at or past it. Threads read the limit at
// different times, so the result is the step's longest contiguous prefix:
// the slices up to the first that stopped short, and that one's part.
StatusOr<Computed> ComputeStep(kernels::Kernel& kernel, Range step, unsigned threads,
                               unsigned chunks, workload::WorkloadKind kind,
                               const std::atomic<uint64_t>& limit) {
  threads = static_cast<unsigned>(std::clamp<uint64_t>(step.size(), 1, threads));
  struct Part {
    uint64_t end = 0;  // computed [slice.begin, end)
    StatusOr<workload::Result> result = Status::Invalid("not computed");
  };
  std::vector<Part> parts(threads);
  std::vector<Range> slices;
  for (unsigned t = 0; t < threads; ++t) {
    slices.push_back(
        {step.begin + step.size() * t / threads, step.begin + step.size() * (t + 1) / threads});
  }
  auto compute_slice = [&](unsigned t) {
    const Range slice = slices[t];
    workload::Result total = workload::Result::Empty(kind);
    uint64_t at = slice.begin;
    for (unsigned c = 0; c < chunks && at < slice.end; ++c) {
      const uint64_t chunk_end = slice.begin + slice.size() * (c + 1) / chunks;
      if (chunk_end <= at) continue;  // a slice of fewer items than chunks
      const uint64_t end = std::min(chunk_end, limit.load(std::memory_order_relaxed));
      if (end <= at) break;
      auto part = kernel.Compute({at, end});
      if (!part.ok()) {
        parts[t].result = part.status();
        return;
      }
      // Cannot fail: every chunk's result is of the job's kind.
      (void)total.Merge(*part);
      at = end;
    }
    parts[t] = {at, std::move(total)};
  };
  if (threads == 1) {
    compute_slice(0);
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(compute_slice, t);
    for (auto& thread : pool) thread.join();
  }
  Computed computed{{step.begin, step.begin}, workload::Result::Empty(kind)};
  for (unsigned t = 0; t < threads; ++t) {
    if (!parts[t].result.ok()) return parts[t].result.status();
    BALLAST_RETURN_IF_ERROR(computed.result.Merge(*parts[t].result));
    computed.range.end = parts[t].end;
    if (parts[t].end < slices[t].end) break;
  }
  return computed;
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
  Status RunJob() {
    BALLAST_ASSIGN_OR_RETURN(auto description, client_.FetchJob());
    workload_ = description.workload;
    cost_ = balance::CostModel(workload_.items, workload_.cost, workload_.item_costs);
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
            if (signal.lease) cut_.Offer(*signal.lease);
            spdlog::debug("signal received lease={}",
                          signal.lease ? signal.lease->ToString() : "none");
            signalled_ = true;
          });
    });

    protocol::ReportMessage ask = NewReport(/*idle=*/true);
    while (true) {
      std::optional<StatusOr<protocol::ReplyMessage>> answered =
          ask.idle && !ask.leaving ? SendIdleUnlessStopped(ask) : Send(ask);
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
      if (ask.leaving) {
        spdlog::info("stopped on request job={} worker={}", options_.job, options_.name);
        return Status::Ok();
      }
      switch (reply.kind) {
        case Reply::Kind::kDone:
          spdlog::info("job done job={} worker={}", options_.job, options_.name);
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

  // Forgets the lease and its unreported progress.
  void DropLease() {
    lease_ = {};
    position_ = 0;
    cut_.Clear();
    lease_session_.clear();
  }

  protocol::ReportMessage NewReport(bool idle) {
    protocol::ReportMessage report;
    report.worker = options_.name;
    report.idle = idle;
    report.leaving = g_stop;
    report.session = lease_session_;
    return report;
  }

  // Sends a report and waits for the reply: the worker is idle meanwhile.
  StatusOr<protocol::ReplyMessage> Send(protocol::ReportMessage& report) {
    const auto start = Clock::now();
    auto reply = Post(Number(std::move(report)));
    metrics_->Idle(Since(start));
    return Accept(std::move(reply));
  }

  // Sends an idle report. The coordinator may hold it until there is work
  // (a long poll, up to its wait timeout); a stop request does not wait for
  // that: the report is abandoned and nullopt returned, and the caller sends
  // it again as leaving (what the coordinator had already merged of it, it
  // drops as a duplicate).
  std::optional<StatusOr<protocol::ReplyMessage>> SendIdleUnlessStopped(
      const protocol::ReportMessage& report) {
    const auto start = Clock::now();
    bool stopped = false;
    auto sent = Post(Number(report), [&stopped] { return stopped = g_stop; });
    metrics_->Idle(Since(start));
    if (stopped) return std::nullopt;
    return Accept(std::move(sent));
  }

  protocol::ReportMessage Number(protocol::ReportMessage report) {
    report.seq = ++seq_;
    return report;
  }

  // The HTTP exchange of a report. Safe on another thread while the loop
  // computes: it touches only the client, the options and the metrics.
  StatusOr<protocol::ReplyMessage> Post(const protocol::ReportMessage& report,
                                        const GiveUp& abandon = {}) {
    const auto start = Clock::now();
    auto reply = client_.PostReport(report, abandon);
    if (reply.ok()) metrics_->Report();
    metrics_->RoundTrip(reply.ok() ? protocol::ReplyKindName(reply->kind) : "error", Since(start));
    return reply;
  }

  // Posts a progress report while computing goes on. A reply that lets the
  // lease go on to a nearer end (a steal cut it) is offered to cut_ at once,
  // so that the step being computed stops there rather than at its planned
  // end (worker/lease_cut.h). The loop obeys the reply itself after the step
  // (ApplyLate).
  StatusOr<protocol::ReplyMessage> PostProgress(const protocol::ReportMessage& report) {
    auto reply = Post(report);
    if (reply.ok() && reply->kind == Reply::Kind::kContinue) cut_.Offer(reply->lease);
    return reply;
  }

  // Kernel calls per thread and step: a reply that cuts the lease stops the
  // step at the cut within about step_seconds / kChunksPerStep. An exec job
  // that runs one command per sub-range keeps one call per step, so that a
  // step stays one command.
  unsigned ChunksPerStep() const {
    constexpr unsigned kChunksPerStep = 8;
    const bool bundled =
        workload_.kind == workload::WorkloadKind::kExec && !workload_.exec.per_item;
    return bundled ? 1 : kChunksPerStep;
  }

  // Takes note of what a reply tells beyond its kind (on the loop's thread).
  StatusOr<protocol::ReplyMessage> Accept(StatusOr<protocol::ReplyMessage> reply) {
    if (!reply.ok()) return reply;
    heartbeat_s_ = reply->heartbeat_s > 0 ? reply->heartbeat_s : heartbeat_s_;
    if (reply->kind == Reply::Kind::kLease) lease_session_ = reply->session;
    return reply;
  }

  // What the lease has finished since the last report went out.
  struct Unreported {
    std::vector<protocol::Completion> completed;            // ranges of earlier leases
    std::vector<std::pair<Range, workload::Result>> steps;  // this lease's, in order
    double calc = 0;
    double cpu_start = 0;
  };

  Unreported StartUnreported() const { return {{}, {}, 0, ProcessCpuSeconds()}; }

  // Moves this lease's unreported steps into done.completed, grouped as
  // worker/report_ranges.h says.
  void CloseLeasePart(Unreported& done) const {
    for (const auto& [first, last] : ReportGroups(done.steps.size())) {
      workload::Result merged = workload::Result::Empty(workload_.kind);
      for (size_t i = first; i < last; ++i) {
        // Cannot fail: every step's result is of the job's kind.
        (void)merged.Merge(done.steps[i].second);
      }
      done.completed.push_back(
          {{done.steps[first].first.begin, done.steps[last - 1].first.end}, merged.ToJson()});
    }
    done.steps.clear();
  }

  protocol::ReportMessage ReportOf(Unreported& done, bool idle) {
    CloseLeasePart(done);
    protocol::ReportMessage report = NewReport(idle);
    report.completed = std::move(done.completed);
    report.calc_seconds = done.calc;
    report.cpu_seconds = ProcessCpuSeconds() - done.cpu_start;
    report.position = position_;
    return report;
  }

  // Takes up a reply's new lease, or its end of the current one. A shrunk end
  // never goes below what is finished: items past it that a late reply finds
  // finished are reported all the same (the coordinator merges each item
  // once, whoever is first). With a new lease, the old one's unreported
  // steps go with the next report.
  void Obey(const protocol::ReplyMessage& reply, Unreported& done) {
    if (reply.kind == Reply::Kind::kLease) {
      CloseLeasePart(done);
      lease_ = reply.lease;
      position_ = lease_.begin;
      cut_.Begin(lease_);
    } else {
      lease_.end = std::max(position_, std::min(lease_.end, reply.lease.end));
    }
    report_every_s_ = reply.report_every_s;
  }

  // Obeys the reply to a progress report that went out while computing went
  // on. Returns false when the lease is no longer ours (a restarted
  // coordinator): the caller drops it.
  StatusOr<bool> ApplyLate(StatusOr<protocol::ReplyMessage> sent, Unreported& done) {
    if (sent.status().code() == StatusCode::kConflict) return false;
    BALLAST_ASSIGN_OR_RETURN(protocol::ReplyMessage reply, Accept(std::move(sent)));
    switch (reply.kind) {
      case Reply::Kind::kLease:
        metrics_->Lease();
        [[fallthrough]];
      case Reply::Kind::kContinue:
        Obey(reply, done);
        break;
      case Reply::Kind::kWait:
      case Reply::Kind::kDone:
        lease_.end = position_;  // the rest went back to the pool
        break;
    }
    return true;
  }

  // Computes the lease in steps until it ends or a stop is requested, and
  // returns the report to send next (idle when the lease ended). Progress
  // reports go out at the cadence the policy asks, at least every heartbeat,
  // and soon after a signal; one at a time, while computing goes on, so that
  // a round trip never leaves the cores idle.
  StatusOr<protocol::ReportMessage> Compute(const protocol::ReplyMessage& reply) {
    Unreported done = StartUnreported();
    Obey(reply, done);
    cut_.Begin(lease_);
    std::future<StatusOr<protocol::ReplyMessage>> in_flight;
    std::optional<Status> dropped;  // set when a late reply says the lease is not ours
    // Waits for the report in flight and obeys its reply.
    auto land = [&]() -> Status {
      const auto start = Clock::now();
      auto sent = in_flight.get();
      metrics_->Idle(Since(start));
      BALLAST_ASSIGN_OR_RETURN(const bool ours, ApplyLate(sent, done));
      if (!ours) dropped = sent.status();
      return Status::Ok();
    };
    bool due = false;  // a report is due and waits for the one in flight
    auto since_report = Clock::now();
    while (!g_stop && !job_done_) {
      FoldCut();
      if (position_ >= lease_.end) {
        // The lease is finished; the reply to the last progress report may
        // still bring a new one.
        if (!in_flight.valid()) break;
        BALLAST_RETURN_IF_ERROR(land());
        if (dropped) return DroppedLease(*dropped);
        continue;
      }
      const Range planned{position_, NextStepEnd(cost_, {position_, lease_.end}, threads_,
                                                 options_.step_seconds, last_step_)};
      const auto start = Clock::now();
      // The step (and an emulated node's idle share after it) runs beside
      // this thread, which meanwhile keeps the lease: a step longer than a
      // heartbeat (an exec item of minutes) must not go silent for so long
      // that the lease expires and its items run again elsewhere.
      auto computing = std::async(std::launch::async, [&] {
        auto computed = ComputeStep(*kernel_, planned, threads_, ChunksPerStep(), workload_.kind,
                                    cut_.end_flag());
        if (computed.ok() && !computed->range.empty()) Throttle(Since(start));
        return computed;
      });
      std::vector<StatusOr<protocol::ReplyMessage>> held;  // replies to obey after the step
      while (computing.wait_for(KeepAliveWait(since_report, in_flight.valid())) !=
             std::future_status::ready) {
        if (in_flight.valid() &&
            in_flight.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          held.push_back(in_flight.get());
          EndCommandsOfAFinishedJob(held.back());
        }
        if (in_flight.valid() || !HeartbeatDue(since_report)) continue;
        // What is finished goes with it (nothing, mid-way through one long
        // step); the coordinator hears the worker is alive.
        in_flight = std::async(std::launch::async, &Impl::PostProgress, this,
                               Number(ReportOf(done, /*idle=*/false)));
        done = StartUnreported();
        since_report = Clock::now();
      }
      auto part = computing.get();
      // Replies heard during the step, in order, as if it had been short.
      auto obey_held = [&]() -> Status {
        for (auto& sent : held) {
          const Status why = sent.status();
          BALLAST_ASSIGN_OR_RETURN(const bool ours, ApplyLate(std::move(sent), done));
          if (!ours && !dropped) dropped = why;
        }
        held.clear();
        return Status::Ok();
      };
      // A stop ended the step's exec commands: its items go back with the lease.
      if (!part.ok() && g_stop) break;
      // The job finished while the step ran (a backup's copy of these items
      // was handed in first): its commands were ended, its result is not needed.
      if (!part.ok() && job_done_) {
        lease_.end = position_;
        break;
      }
      BALLAST_RETURN_IF_ERROR(part.status());
      const Range step = part->range;  // shorter than planned when a reply cut the lease
      if (step.empty()) {
        BALLAST_RETURN_IF_ERROR(obey_held());
        if (dropped) return DroppedLease(*dropped);
        // A signal ended the lease where the worker is: it is finished.
        if (cut_.end() <= position_) continue;
        // A reply held during the step ended the lease where the worker is.
        if (position_ >= lease_.end) continue;
        // The reply in flight ends the lease where the worker is: obey it.
        if (!in_flight.valid()) {
          return Status::Invalid(fmt::format("step {}: nothing computed", planned.ToString()));
        }
        BALLAST_RETURN_IF_ERROR(land());
        if (dropped) return DroppedLease(*dropped);
        continue;
      }
      const double seconds = Since(start);
      if (part->result.kind() != workload_.kind) {
        return Status::Invalid(fmt::format("step {}: a result of another kind", step.ToString()));
      }
      done.steps.emplace_back(step, std::move(part->result));
      done.calc += seconds;
      position_ = step.end;
      FoldCut();
      last_step_ = {seconds / std::max(cost_.Cost(step), 1e-12), step.size()};
      metrics_->Items(step.size(), seconds);
      metrics_->Busy(seconds);
      BALLAST_RETURN_IF_ERROR(obey_held());
      if (dropped) return DroppedLease(*dropped);
      if (in_flight.valid() &&
          in_flight.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        BALLAST_RETURN_IF_ERROR(land());
        if (dropped) return DroppedLease(*dropped);
      }
      due |= signalled_.exchange(false) || (report_every_s_ > 0 && done.calc >= report_every_s_) ||
             HeartbeatDue(since_report);
      if (!due || in_flight.valid() || position_ >= lease_.end) continue;
      in_flight = std::async(std::launch::async, &Impl::PostProgress, this,
                             Number(ReportOf(done, /*idle=*/false)));
      done = StartUnreported();
      due = false;
      since_report = Clock::now();
    }
    if (in_flight.valid()) {  // asked to stop
      BALLAST_RETURN_IF_ERROR(land());
      if (dropped) return DroppedLease(*dropped);
    }
    return ReportOf(done, /*idle=*/position_ >= lease_.end);
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
    return heartbeat_s_ > 0 && Since(since_report) >= heartbeat_s_;
  }

  // How long to wait for a step before looking again whether a heartbeat is
  // due: until it is, at most a second; with a reply awaited, at least 20 ms
  // (its landing is looked for at that pace).
  std::chrono::nanoseconds KeepAliveWait(Clock::time_point since_report, bool reply_awaited) const {
    constexpr std::chrono::nanoseconds kLongest = std::chrono::seconds(1);
    if (heartbeat_s_ <= 0) return kLongest;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(heartbeat_s_ - Since(since_report)));
    const std::chrono::nanoseconds shortest =
        reply_awaited ? std::chrono::milliseconds(20) : std::chrono::milliseconds(1);
    return std::clamp(left, shortest, kLongest);
  }

  // Takes up a cut heard while computing (cut_): the lease ends there, or
  // where the worker is if it has passed it.
  void FoldCut() { lease_.end = std::max(position_, std::min(lease_.end, cut_.end())); }

  // The coordinator restarted since it leased to us (409): what we computed
  // of that lease is not ours to hand in. Forgets it; returns a fresh ask.
  protocol::ReportMessage DroppedLease(const Status& why) {
    spdlog::info("lease dropped job={} worker={} lease={} reason=\"{}\"", options_.job,
                 options_.name, lease_.ToString(), why.message());
    DropLease();
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
  workload::WorkloadSpec workload_;
  std::unique_ptr<kernels::Kernel> kernel_;
  unsigned threads_ = 1;  // compute threads for this job
  Range lease_;
  uint64_t position_ = 0;
  std::string lease_session_;  // the session of the reply that granted lease_
  uint64_t seq_ = 0;
  balance::CostModel cost_;  // the job's declared item costs
  StepMeasure last_step_;    // what the last step took
  double heartbeat_s_ = 10;
  double report_every_s_ = 0;  // the cadence of progress reports the policy asks
  std::atomic<bool> signalled_{false};
  // The nearest end heard for the lease while computing it (a reply in
  // flight, a signal), read by the step being computed.
  LeaseCut cut_;
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
