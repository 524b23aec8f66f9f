// The check that workers compute honestly (verification.h).
#include "coordinator/verification.h"

#include <fmt/format.h>

#include <cmath>

namespace ballast::coordinator {
namespace {

// SplitMix64's finalizer: a well-mixed 64-bit hash of a 64-bit value.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Status CheckVerifyOptions(const VerifyOptions& options, size_t workers) {
  if (options.fraction == 0) return Status::Ok();
  if (!std::isfinite(options.fraction) || options.fraction < 0 || options.fraction > 1) {
    return Status::Invalid(
        fmt::format("verify.fraction: expected a fraction of the items > 0 and <= 1, got {}",
                    options.fraction));
  }
  if (workers < 2) {
    return Status::Invalid(fmt::format(
        "verify: a sampled range is recomputed on another worker than the one that computed it, "
        "so verification needs at least two workers; this job has {}",
        workers));
  }
  return Status::Ok();
}

bool Sampled(const VerifyOptions& options, balance::Range range) {
  if (!(options.fraction > 0)) return false;
  const uint64_t hash = Mix(Mix(options.seed ^ Mix(range.begin)) ^ range.end);
  const double uniform = static_cast<double>(hash >> 11) * 0x1.0p-53;  // [0, 1)
  return uniform < options.fraction;
}

bool SameResult(const workload::Result& a, const workload::Result& b) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() != workload::WorkloadKind::kExec) return a == b;
  const auto& x = a.exec();
  const auto& y = b.exec();
  if (x.succeeded != y.succeeded || x.failures.size() != y.failures.size()) return false;
  for (size_t i = 0; i < x.failures.size(); ++i) {
    if (x.failures[i].items != y.failures[i].items ||
        x.failures[i].exit_code != y.failures[i].exit_code) {
      return false;
    }
  }
  return true;
}

Verifier::Verifier(VerifyOptions options, std::vector<std::string> workers)
    : options_(options), workers_(std::move(workers)), waiting_(workers_.size(), false) {
  view_.fraction = options_.fraction;
  view_.worker_cpu_s.assign(workers_.size(), 0);
  view_.worker_busy_s.assign(workers_.size(), 0);
}

void Verifier::AddWorker(std::string name) {
  workers_.push_back(std::move(name));
  waiting_.push_back(false);
  view_.worker_cpu_s.push_back(0);
  view_.worker_busy_s.push_back(0);
}

bool Verifier::OnMerged(balance::WorkerId worker, balance::Range range,
                        const workload::Result& result) {
  if (!enabled() || failed()) return false;
  ++view_.ranges;
  if (!Sampled(options_, range)) return false;
  pending_.push_back({range, worker, result, {}, workload::Result::Empty(result.kind())});
  ++view_.sampled;
  return true;
}

std::deque<Verifier::Check>::iterator Verifier::Find(balance::WorkerId worker) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->first != worker) return it;
  }
  return pending_.end();
}

std::optional<balance::Range> Verifier::Assign(balance::WorkerId worker) {
  if (failed() || assigned_.count(worker) > 0) return std::nullopt;
  auto it = Find(worker);
  if (it == pending_.end()) return std::nullopt;
  const balance::Range range = it->range;
  assigned_.emplace(worker, std::move(*it));
  pending_.erase(it);
  waiting_[worker] = false;
  return range;
}

std::optional<balance::Range> Verifier::Holding(balance::WorkerId worker) const {
  auto it = assigned_.find(worker);
  if (it == assigned_.end()) return std::nullopt;
  return it->second.range;
}

void Verifier::AddCost(balance::WorkerId worker, double cpu_s, double busy_s) {
  if (worker >= workers_.size()) return;
  view_.cpu_s += cpu_s;
  view_.worker_cpu_s[worker] += cpu_s;
  view_.worker_busy_s[worker] += busy_s;
}

Status Verifier::OnRecomputed(balance::WorkerId worker, balance::Range part,
                              const workload::Result& result, double now) {
  auto it = assigned_.find(worker);
  if (it == assigned_.end()) {
    return Status::Invalid(fmt::format("worker '{}' holds no check", workers_.at(worker)));
  }
  Check& held = it->second;
  const bool inside = part.begin >= held.range.begin && part.end <= held.range.end;
  if (part.empty() || !inside || held.done.CountIn(part) != 0) {
    return Status::Invalid(fmt::format("{} is not an unfinished part of the check {}",
                                       part.ToString(), held.range.ToString()));
  }
  BALLAST_RETURN_IF_ERROR(held.again.Merge(result));
  held.done.Add(part);
  if (held.done.size() < held.range.size()) return Status::Ok();
  const Check check = std::move(held);
  assigned_.erase(it);
  view_.items += check.range.size();
  view_.finished_at = now;
  const workload::Result& recomputed = check.again;
  if (SameResult(check.result, recomputed)) {
    ++view_.checked;
    return Status::Ok();
  }
  view_.failure = fmt::format(
      "verification failed: items {} gave \"{}\" from worker '{}' and \"{}\" from worker '{}' "
      "on recomputation; one of the two computed wrongly or forged its result",
      check.range.ToString(), check.result.Summary(), workers_.at(check.first),
      recomputed.Summary(), workers_.at(worker));
  return Status(StatusCode::kTerminal, view_.failure);
}

std::optional<balance::Range> Verifier::OnCheckReport(
    balance::WorkerId worker, const std::vector<protocol::Completion>& completed,
    const std::vector<workload::Result>& results, double cpu_s, double busy_s, double now) {
  AddCost(worker, cpu_s, busy_s);
  // The worker holds nothing but the check, so its completions are parts of
  // it. A mismatch fails the job: every reply is "done" from then on.
  for (size_t i = 0; i < completed.size(); ++i) {
    (void)OnRecomputed(worker, completed[i].range, results[i], now);
  }
  return Holding(worker);
}

balance::Reply Verifier::WithChecks(balance::WorkerId worker, balance::Reply reply,
                                    bool policy_finished) {
  using Kind = balance::Reply::Kind;
  if (!enabled()) return reply;
  if (failed()) return balance::Reply{Kind::kDone, {}, 0, {}};
  if (reply.kind == Kind::kWait || reply.kind == Kind::kDone) {
    if (auto check = Assign(worker)) return balance::Reply{Kind::kLease, *check, 0, {}};
    // The worker may be needed for a check still to come.
    if (reply.kind == Kind::kDone && !(policy_finished && Idle())) reply.kind = Kind::kWait;
  }
  SetWaiting(worker, reply.kind == Kind::kWait);
  return reply;
}

void Verifier::Release(balance::WorkerId worker) {
  auto it = assigned_.find(worker);
  if (it == assigned_.end()) return;
  Check check = std::move(it->second);
  assigned_.erase(it);
  check.done = {};  // recomputed afresh by whoever takes it
  check.again = workload::Result::Empty(check.result.kind());
  pending_.push_front(std::move(check));
}

void Verifier::SetWaiting(balance::WorkerId worker, bool waiting) {
  if (worker < waiting_.size()) waiting_[worker] = waiting;
}

std::vector<balance::WorkerId> Verifier::TakeSignals() {
  std::vector<balance::WorkerId> signals;
  if (failed()) return signals;
  for (balance::WorkerId id = 0; id < waiting_.size(); ++id) {
    if (waiting_[id] && Find(id) != pending_.end()) {
      waiting_[id] = false;
      signals.push_back(id);
    }
  }
  return signals;
}

VerificationView Verifier::View() const {
  VerificationView view = view_;
  view.pending = pending_.size() + assigned_.size();
  return view;
}

}  // namespace ballast::coordinator
