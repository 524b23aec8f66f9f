#include "worker/lease_ledger.h"

#include <sys/resource.h>

#include <algorithm>

#include "worker/kernels/command_server.h"
#include "worker/report_ranges.h"

namespace ballast::worker {

ProcessCpu ProcessCpuSplit() {
  // The children's: the commands reaped, and the served ones still alive.
  return {kernels::RusageSeconds(RUSAGE_SELF), kernels::ChildrenCpuSeconds()};
}

double ProcessCpuSeconds() {
  const ProcessCpu cpu = ProcessCpuSplit();
  return cpu.own + cpu.children;
}

LeaseLedger::LeaseLedger(CpuClock cpu_seconds)
    : cpu_seconds_(std::move(cpu_seconds)), cpu_start_(cpu_seconds_()) {}

void LeaseLedger::Obey(const protocol::ReplyMessage& reply) {
  if (reply.kind == balance::Reply::Kind::kLease) {
    CloseLeasePart();
    lease_ = reply.lease;
    position_ = lease_.begin;
    running_end_ = told_end_ = 0;  // nothing under way in it, nor named
    session_ = reply.session;
    cut_.Begin(lease_);
  } else {
    lease_.end = std::max(position_, std::min(lease_.end, reply.lease.end));
  }
  report_every_s_ = reply.report_every_s;
}

void LeaseLedger::FoldCut() { lease_.end = std::max(position_, std::min(lease_.end, cut_.end())); }

void LeaseLedger::Finished(balance::Range step, workload::Result result, double seconds) {
  steps_.emplace_back(step, std::move(result));
  calc_ += seconds;
  position_ = step.end;
  running_end_ = 0;
  FoldCut();
}

void LeaseLedger::StartUnreported() {
  completed_.clear();
  steps_.clear();
  calc_ = 0;
  cpu_start_ = cpu_seconds_();
}

void LeaseLedger::Fill(protocol::ReportMessage& report) {
  CloseLeasePart();
  report.completed = std::move(completed_);
  report.calc_seconds = calc_;
  report.cpu_seconds = cpu_seconds_() - cpu_start_;
  report.position = position_;
  report.running_end = running_end_ > position_ ? running_end_ : 0;
  told_end_ = report.running_end;
  StartUnreported();
}

void LeaseLedger::Drop() {
  lease_ = {};
  position_ = 0;
  running_end_ = 0;
  told_end_ = 0;
  cut_.Clear();
  session_.clear();
  StartUnreported();
}

void LeaseLedger::CloseLeasePart() {
  for (const auto& [first, last] : ReportGroups(steps_.size())) {
    workload::Result merged = steps_[first].second;
    for (size_t i = first + 1; i < last; ++i) {
      // Cannot fail: every step's result is of the job's kind.
      (void)merged.Merge(steps_[i].second);
    }
    completed_.push_back(
        {{steps_[first].first.begin, steps_[last - 1].first.end}, merged.ToJson()});
  }
  steps_.clear();
}

}  // namespace ballast::worker
