#include "core/sim/sim_worker.h"

#include <cmath>
#include <utility>

namespace ballast::sim {

using balance::Range;
using balance::Reply;
using balance::Report;

namespace {

constexpr double kProgressEpsilon = 1e-9;

// A report that asks for work.
Report IdleReport() {
  Report report;
  report.idle = true;
  return report;
}

// A report of `calc_seconds` of computing and the lease's `position`.
Report Computed(double calc_seconds, uint64_t position) {
  Report report;
  report.calc_seconds = calc_seconds;
  report.position = position;
  return report;
}

}  // namespace

SimWorker::SimWorker(const EmulatedNode& node, const Workload& workload, const WorkerModel& model,
                     Range local, double prior_speed)
    : node_(&node),
      model_(model),
      at_once_(AtOnce(node, workload)),
      item_seconds_(workload.item_seconds),
      link_(node, workload, local) {
  result_.name = node.name;
  result_.prior_speed = prior_speed;
  result_.true_speed = node.speed;
}

WorkerStep SimWorker::Join(balance::WorkerId id, double now) {
  id_ = id;
  SetPhase(Phase::kAsking, now);
  return {IdleReport(), std::nullopt};
}

void SimWorker::Refuse(double now) { SetPhase(Phase::kDead, now); }

void SimWorker::SetPhase(Phase phase, double now) {
  if (model_.timeline && now > phase_since_) {
    Segment::Kind kind = phase_ == Phase::kComputing   ? Segment::Kind::kBusy
                         : phase_ == Phase::kReceiving ? Segment::Kind::kTransfer
                                                       : Segment::Kind::kIdle;
    auto& timeline = result_.timeline;
    if (!timeline.empty() && timeline.back().kind == kind && timeline.back().end == phase_since_) {
      timeline.back().end = now;
    } else {
      timeline.push_back({phase_since_, now, kind});
    }
  }
  phase_ = phase;
  phase_since_ = now;
}

// Brings the worker's progress up to `now`.
void SimWorker::Integrate(double now) {
  if (phase_ == Phase::kComputing && now > segment_start_) {
    const double dt = now - segment_start_;
    cost_done_ += rate_ * dt;
    busy_since_report_ += dt;
    result_.busy_s += dt;
  }
  segment_start_ = now;
}

// The first item of the lease not finished.
uint64_t SimWorker::Position() const {
  return model_.cost->Advance(lease_.begin, lease_.end, cost_done_ + kProgressEpsilon);
}

// Cost units per second the worker computes at now (its link may cap it).
double SimWorker::Rate(double now) const {
  // Items running at once share the node's speed (in cost units per
  // second, all of them together: the lease still finishes in order).
  const double rate = SpeedAt(*node_, now) * at_once_.throughput() / item_seconds_;
  return std::min(rate, link_.StreamCap(lease_, LeaseCost()));
}

// Plans the worker's next decision point while it computes (Due) and
// returns its time; none when it does not compute. Requires its progress
// brought up to now (Integrate).
std::optional<double> SimWorker::ScheduleNext(double now) {
  ++epoch_;
  if (phase_ != Phase::kComputing) return std::nullopt;
  rate_ = Rate(now);
  Due due;
  due.finish = now + std::max(0.0, LeaseCost() - cost_done_) / rate_;
  if (report_every_ > 0) due.report = now + std::max(0.0, report_every_ - busy_since_report_);
  if (signal_pending_) {
    // It stops where it is when that is an item boundary, else at the end
    // of the item in progress.
    const uint64_t position = Position();
    const bool at_boundary = std::fabs(Cost({lease_.begin, position}) - cost_done_) < 1e-9;
    // Running several at once, it finishes those it has begun.
    const uint64_t begun = at_once_.items > 1 ? at_once_.items : (at_boundary ? 0 : 1);
    due.stop_at = std::min(position + begun, lease_.end);
    due.stop = now + std::max(0.0, Cost({lease_.begin, due.stop_at}) - cost_done_) / rate_;
  }
  due_ = due;
  return due.Earliest();
}

WorkerStep SimWorker::Wake(double now) {
  if (phase_ == Phase::kReceiving) {
    SetPhase(Phase::kComputing, now);
    segment_start_ = now;
    return {std::nullopt, ScheduleNext(now)};
  }
  if (phase_ != Phase::kComputing) return {};
  Integrate(now);
  // This is the wake-up of due_ (its epoch is current). What was due at it
  // is reached, and so is what the progress reaches to rounding: a report
  // due a hair before the lease's end finds the lease done, and one due at
  // an item boundary stops a signalled worker there.
  const double total = LeaseCost();
  const double rounding = kProgressEpsilon * std::max(1.0, total);
  if (due_.finish <= now || cost_done_ >= total - rounding) return FinishLease(now);
  const uint64_t position = Position();
  const bool at_boundary = std::fabs(Cost({lease_.begin, position}) - cost_done_) < rounding;
  if (due_.stop <= now || (signal_pending_ && at_boundary)) {
    return Stop(due_.stop <= now ? due_.stop_at : position, now);
  }
  WorkerStep step;
  if (due_.report <= now) step.report = Progress(position);
  step.wake = ScheduleNext(now);
  return step;
}

// A signalled worker stops at the item boundary `stop_at`, reports there and
// waits for the coordinator's answer.
WorkerStep SimWorker::Stop(uint64_t stop_at, double now) {
  cost_done_ = Cost({lease_.begin, stop_at});
  signal_pending_ = false;
  WorkerStep step{Progress(stop_at), std::nullopt};
  SetPhase(Phase::kPaused, now);
  ++epoch_;
  return step;
}

WorkerStep SimWorker::SpeedChanged(double now) {
  if (phase_ != Phase::kComputing) return {};  // Rate() reads the speed when it starts
  Integrate(now);
  return {std::nullopt, ScheduleNext(now)};
}

WorkerStep SimWorker::FinishLease(double now) {
  cost_done_ = LeaseCost();
  Report report = Computed(busy_since_report_, lease_.end);
  report.idle = true;
  if (lease_.end > reported_) report.completed.push_back({reported_, lease_.end});
  model_.failing->Mark(report);
  ++result_.reports;
  reported_ = lease_.end;
  busy_since_report_ = 0;
  signal_pending_ = false;
  SetPhase(Phase::kAsking, now);
  ++epoch_;
  return {std::move(report), std::nullopt};
}

// Its progress report: the items before `position` are done.
Report SimWorker::Progress(uint64_t position) {
  Report report = Computed(busy_since_report_, position);
  ++result_.reports;
  if (position > reported_) {
    report.completed.push_back({reported_, position});
    reported_ = position;
  }
  model_.failing->Mark(report);
  busy_since_report_ = 0;
  return report;
}

WorkerStep SimWorker::Deliver(const Reply& reply, double now) {
  if (phase_ == Phase::kDead) return {};
  for (const Range& range : reply.prefetch) link_.Prefetch(range, now);
  switch (reply.kind) {
    case Reply::Kind::kLease:
      return StartLease(reply, now);
    case Reply::Kind::kContinue:
      return ApplyEnd(reply, now);
    case Reply::Kind::kWait:
      if (phase_ == Phase::kComputing) return {};  // an answer to an older report
      Integrate(now);
      lease_ = {};
      SetPhase(Phase::kWaiting, now);
      ++epoch_;
      return {};
    case Reply::Kind::kDone:
      Integrate(now);
      SetPhase(Phase::kDone, now);
      ++epoch_;
      return {};
  }
  return {};
}

WorkerStep SimWorker::StartLease(const Reply& reply, double now) {
  lease_ = reply.lease;
  cost_done_ = 0;
  reported_ = lease_.begin;
  report_every_ = reply.report_every_s;
  busy_since_report_ = 0;
  signal_pending_ = false;
  ++result_.leases;
  const double ready = link_.InputsReady(lease_, now);
  SetPhase(Phase::kReceiving, now);
  ++epoch_;
  return {std::nullopt, ready};
}

WorkerStep SimWorker::ApplyEnd(const Reply& reply, double now) {
  if (reply.lease.begin != lease_.begin || lease_.empty()) return {};  // a stale answer
  if (phase_ != Phase::kComputing && phase_ != Phase::kPaused && phase_ != Phase::kReceiving) {
    return {};
  }
  Integrate(now);
  report_every_ = reply.report_every_s;
  if (reply.lease.end < lease_.end) {
    // Never give up the item already begun (running several at once,
    // the items it has begun).
    const uint64_t position = Position();
    const bool begun = cost_done_ > Cost({lease_.begin, position}) + 1e-9;
    // A lease still arriving, or a worker paused at a boundary, has
    // nothing in progress.
    const bool started = phase_ == Phase::kComputing;
    const uint64_t in_progress = !started             ? 0
                                 : at_once_.items > 1 ? static_cast<uint64_t>(at_once_.items)
                                                      : (begun ? 1 : 0);
    const uint64_t keep = std::min(lease_.end, position + in_progress);
    lease_.end = std::max(reply.lease.end, keep);
  }
  if (phase_ == Phase::kPaused) SetPhase(Phase::kComputing, now);
  if (phase_ == Phase::kReceiving) return {};  // the new end applies when it starts
  if (cost_done_ >= LeaseCost() - kProgressEpsilon) return FinishLease(now);
  return {std::nullopt, ScheduleNext(now)};
}

WorkerStep SimWorker::Signal(double now) {
  if (phase_ == Phase::kDead) return {};
  if (phase_ == Phase::kWaiting) {
    SetPhase(Phase::kAsking, now);
    return {IdleReport(), std::nullopt};
  }
  if (phase_ != Phase::kComputing && phase_ != Phase::kReceiving) return {};
  Integrate(now);
  signal_pending_ = true;
  if (phase_ != Phase::kComputing) return {};
  return {std::nullopt, ScheduleNext(now)};
}

bool SimWorker::Fail(double now) {
  if (phase_ == Phase::kDead) return false;  // it left the job before
  Integrate(now);
  SetPhase(Phase::kDead, now);
  result_.failed = true;
  ++epoch_;
  return true;
}

std::optional<Report> SimWorker::Leave(double now) {
  if (phase_ == Phase::kDead || phase_ == Phase::kDone || phase_ == Phase::kAbsent) {
    return std::nullopt;
  }
  Integrate(now);
  Report report = Computed(busy_since_report_, 0);
  if (!lease_.empty() && phase_ != Phase::kReceiving) {
    const uint64_t position = Position();
    report.position = position;
    if (position > reported_) report.completed.push_back({reported_, position});
    reported_ = std::max(reported_, position);
  }
  model_.failing->Mark(report);
  ++result_.reports;
  busy_since_report_ = 0;
  SetPhase(Phase::kDead, now);
  result_.left = true;
  ++epoch_;
  return report;
}

WorkerResult SimWorker::Finish(double end) {
  Integrate(end);
  SetPhase(phase_, end);
  // Idle while it was in the job: from joining to failing, leaving or the end.
  const double alive_until =
      std::min({node_->fail_at.value_or(end), node_->leave_at.value_or(end), end});
  const double joined = std::min(node_->join_at.value_or(0), alive_until);
  result_.idle_s = std::max(0.0, alive_until - joined - result_.busy_s);
  return std::move(result_);
}

}  // namespace ballast::sim
