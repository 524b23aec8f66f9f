// What the coordinator knows of each worker of a job (worker_ledger.h).
#include "coordinator/worker_ledger.h"

#include <algorithm>
#include <limits>

#include "core/health/measurement_noise.h"

namespace ballast::coordinator {

using balance::Reply;
using balance::WorkerId;

void WorkerLedger::Append(const balance::WorkerPrior& prior, double cores, double now) {
  ids_[prior.name] = static_cast<WorkerId>(workers_.size());
  workers_.emplace_back();
  Worker& worker = workers_.back();
  worker.view.name = prior.name;
  worker.view.prior_speed = prior.speed;
  worker.cores = cores;
  worker.joined_at = now;
  worker.view.joined_at = now;
}

std::optional<WorkerId> WorkerLedger::Find(const std::string& name) const {
  auto found = ids_.find(name);
  if (found == ids_.end()) return std::nullopt;
  return found->second;
}

std::pair<double, double> WorkerLedger::BoundedSeconds(WorkerId id,
                                                       const protocol::ReportMessage& report,
                                                       double now) {
  const Worker& worker = workers_[id];
  const double window = std::max(0.0, now - worker.MeasuredFrom()) + kReportSlackSeconds;
  // What is left of the worker's time in the job so far, the slack counted
  // once: a worker that reports often cannot add the slack up.
  const double lasted = std::max(0.0, now - worker.joined_at) + kReportSlackSeconds;
  const double calc_left = std::max(0.0, lasted - worker.view.busy_s);
  const double cpu_left = std::max(0.0, lasted * worker.cores - worker.view.cpu_s);
  const double calc = std::min({report.calc_seconds, window, calc_left});
  const double cpu = std::min({report.cpu_seconds, window * worker.cores, cpu_left});
  if (calc < report.calc_seconds || cpu < report.cpu_seconds) ++clamped_;
  return {calc, cpu};
}

void WorkerLedger::RecordContact(WorkerId id, double calc_seconds, double cpu_seconds, double now) {
  Worker& worker = workers_[id];
  if (!worker.view.contacted) worker.view.first_contact = now;
  worker.view.contacted = true;
  worker.view.left_at.reset();
  if (calc_seconds > 0) {
    worker.view.last_measured = now;
    const double start = std::max(worker.MeasuredFrom(), now - calc_seconds);
    auto& busy = worker.segments;
    if (busy.size() >= kMaxSegments) {
      busy.back().second = now;
    } else {
      busy.emplace_back(start, now);
    }
  }
  worker.view.last_contact = now;
  worker.view.reports++;
  worker.view.busy_s += calc_seconds;
  worker.view.cpu_s += cpu_seconds;
}

void WorkerLedger::SampleSpeed(WorkerId id, double merged_cost, double merged_squares,
                               double calc_seconds) {
  Worker& worker = workers_[id];
  worker.unsampled_busy_s += calc_seconds;
  if (merged_cost < 0) return;  // nothing handed in: the seconds wait for what is
  health::AddSpeedSample(worker.view.speed_samples,
                         {merged_cost, worker.unsampled_busy_s, merged_squares});
  worker.unsampled_busy_s = 0;
}

void WorkerLedger::RecordReply(WorkerId id, const Reply& reply) {
  Worker& worker = workers_[id];
  if (reply.kind == Reply::Kind::kLease) {
    worker.granted.Add(reply.lease);
    worker.view.leases++;
  }
  if (reply.kind == Reply::Kind::kContinue && worker.holds_lease &&
      reply.lease.end < worker.lease.end) {
    worker.view.cuts++;
  }
  worker.holds_lease = reply.kind == Reply::Kind::kLease || reply.kind == Reply::Kind::kContinue;
  worker.lease = reply.lease;
}

void WorkerLedger::CountCutShort(WorkerId reporter, double now,
                                 const std::function<bool(WorkerId)>& checking) {
  for (WorkerId id = 0; id < workers_.size(); ++id) {
    Worker& worker = workers_[id];
    if (id == reporter || !worker.holds_lease || worker.view.left_at || checking(id)) continue;
    worker.view.cut_short_s = std::max(0.0, now - worker.MeasuredFrom());
  }
}

void WorkerLedger::MarkLeft(WorkerId id, double now) {
  workers_[id].holds_lease = false;
  workers_[id].view.left_at = now;
}

size_t WorkerLedger::OtherLive(WorkerId id) const {
  size_t live = 0;
  for (WorkerId other = 0; other < workers_.size(); ++other) {
    const WorkerView& view = workers_[other].view;
    if (other != id && view.contacted && !view.left_at && !view.released) ++live;
  }
  return live;
}

std::vector<std::string> WorkerLedger::Expired(double now, double lease_seconds,
                                               double start_timeout_s) const {
  std::vector<std::string> expired;
  for (const Worker& worker : workers_) {
    const bool silent_lease = worker.holds_lease && now - worker.view.last_contact >= lease_seconds;
    const bool never_started = !worker.view.contacted && worker.view.lost == 0 &&
                               now - worker.joined_at >= start_timeout_s;
    if (silent_lease || never_started) expired.push_back(worker.view.name);
  }
  return expired;
}

double WorkerLedger::NextDeadline(double lease_seconds, double start_timeout_s) const {
  double next = std::numeric_limits<double>::infinity();
  for (const Worker& worker : workers_) {
    if (worker.holds_lease) {
      next = std::min(next, worker.view.last_contact + lease_seconds);
    } else if (!worker.view.contacted && worker.view.lost == 0) {
      next = std::min(next, worker.joined_at + start_timeout_s);
    }
  }
  return next;
}

void WorkerLedger::SampleSharing(const std::set<std::string>& shared, double now) {
  if (sharing_sampled_at_) {
    const double elapsed = std::max(0.0, now - *sharing_sampled_at_);
    sharing_sampled_s_ += elapsed;
    for (Worker& worker : workers_) {
      if (worker.shared_when_sampled) worker.view.shared_s += elapsed;
    }
  }
  sharing_sampled_at_ = now;
  for (Worker& worker : workers_) worker.shared_when_sampled = shared.contains(worker.view.name);
}

std::set<std::string> WorkerLedger::HoldingLeases(const std::set<std::string>& names) const {
  std::set<std::string> holding;
  for (const std::string& name : names) {
    auto found = ids_.find(name);
    if (found != ids_.end() && workers_[found->second].holds_lease) holding.insert(name);
  }
  return holding;
}

std::set<std::string> WorkerLedger::Names() const {
  std::set<std::string> names;
  for (const auto& [name, id] : ids_) names.insert(name);
  return names;
}

std::vector<WorkerView> WorkerLedger::Views(bool segments) const {
  std::vector<WorkerView> views;
  views.reserve(workers_.size());
  for (const Worker& worker : workers_) {
    views.push_back(worker.view);
    if (segments) views.back().busy = worker.segments;
    views.back().holds_lease = worker.holds_lease;
  }
  return views;
}

}  // namespace ballast::coordinator
