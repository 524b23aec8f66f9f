#include "coordinator/job_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "coordinator/result_bounds.h"
#include "core/common/names.h"

namespace ballast::coordinator {

using balance::Reply;
using balance::WorkerId;

namespace {

std::vector<std::string> WorkerNames(const JobConfig& config) {
  std::vector<std::string> names;
  for (const auto& worker : config.workers) names.push_back(worker.name);
  return names;
}

// What the policy is told of the job; its cost model (balance::JobCostModel)
// is also the one the coordinator counts workers' work in.
balance::JobInfo JobInfoOf(const JobConfig& config) {
  balance::JobInfo job;
  job.items = config.workload.items;
  job.cost = config.workload.cost;
  job.workers = config.workers;
  job.item_costs = config.workload.item_costs;  // null: split by the declared shape
  // Primes and matmul compute an item from its number; an exec item's
  // command may read its inputs from anywhere.
  job.inputs_cross_links = config.workload.kind == workload::WorkloadKind::kExec;
  // An exec command may run again for the same range (the contract of
  // docs/getting-started.md, "Your own job"), also at once on two workers,
  // unless the job says it must not.
  job.repeatable =
      config.workload.kind != workload::WorkloadKind::kExec || config.workload.exec.backups;
  return job;
}

}  // namespace

StatusOr<std::unique_ptr<JobSession>> JobSession::Create(JobConfig config, double now) {
  if (config.workers.empty()) return Status::Invalid("a job needs at least one worker");
  if (config.workload.items == 0) return Status::Invalid("the workload has no items");
  std::set<std::string> names;
  for (const auto& worker : config.workers) {
    if (!names.insert(worker.name).second) {
      return Status::Invalid(fmt::format("two workers are named '{}'", worker.name));
    }
  }
  for (const auto& [name, cores] : config.worker_cores) {
    if (!std::isfinite(cores) || cores <= 0) {
      return Status::Invalid(
          fmt::format("worker '{}': expected a number of cores > 0, got {}", name, cores));
    }
  }
  if (config.resume) {
    if (config.resume->result.kind() != config.workload.kind) {
      return Status::Invalid("the checkpoint's result is of another workload");
    }
    if (config.resume->completed.Last().end > config.workload.items) {
      return Status::Invalid("the checkpoint has items beyond the job's end");
    }
  }
  BALLAST_RETURN_IF_ERROR(balance::CheckJob(JobInfoOf(config)));
  BALLAST_RETURN_IF_ERROR(CheckVerifyOptions(config.verify, config.workers.size()));
  auto policy = balance::MakePolicy(config.policy);
  return std::unique_ptr<JobSession>(new JobSession(std::move(config), std::move(policy), now));
}

JobSession::JobSession(JobConfig config, std::unique_ptr<balance::Policy> policy, double now)
    : config_(std::move(config)),
      policy_(std::move(policy)),
      result_(workload::Result::Empty(config_.workload.kind)),
      started_at_(now),
      verifier_(config_.verify, WorkerNames(config_)) {
  for (const balance::WorkerPrior& prior : config_.workers) {
    const auto cores = config_.worker_cores.find(prior.name);
    AppendWorker(
        prior, cores != config_.worker_cores.end() ? cores->second : config_.max_worker_cores, now);
  }
  balance::JobInfo job = JobInfoOf(config_);
  cost_ = balance::JobCostModel(job);
  if (config_.resume) {
    accepted_ = config_.resume->completed;
    result_ = config_.resume->result;
    job.finished = accepted_;
  }
  policy_->Start(job, now);
  if (accepted_.size() == config_.workload.items) finished_at_ = now;
}

void JobSession::AppendWorker(const balance::WorkerPrior& prior, double cores, double now) {
  ids_[prior.name] = static_cast<WorkerId>(workers_.size());
  workers_.emplace_back();
  Worker& worker = workers_.back();
  worker.view.name = prior.name;
  worker.view.prior_speed = prior.speed;
  worker.cores = cores;
  worker.joined_at = now;
  worker.view.joined_at = now;
}

Status JobSession::AddWorker(const balance::WorkerPrior& prior, std::optional<double> cores,
                             double now) {
  if (prior.name.empty()) return Status::Invalid("a joining worker needs a name");
  if (ids_.count(prior.name) > 0) return Status::Ok();
  if (cores && (!std::isfinite(*cores) || *cores <= 0)) {
    return Status::Invalid(
        fmt::format("worker '{}': expected a number of cores > 0, got {}", prior.name, *cores));
  }
  BALLAST_ASSIGN_OR_RETURN(const WorkerId id, policy_->OnWorkerJoined(prior, now));
  // Ids are given in join order by both; a mismatch would be a bug in either.
  if (id != workers_.size()) {
    return Status(StatusCode::kTerminal,
                  fmt::format("the policy gave worker '{}' id {}, expected {}", prior.name, id,
                              workers_.size()));
  }
  config_.workers.push_back(prior);
  if (cores) config_.worker_cores[prior.name] = *cores;
  AppendWorker(prior, cores.value_or(config_.max_worker_cores), now);
  verifier_.AddWorker(prior.name);
  return Status::Ok();
}

bool JobSession::IsStale(const Worker& worker, const protocol::ReportMessage& report) const {
  return worker.view.leases == 0 && !config_.session.empty() && !report.session.empty() &&
         report.session != config_.session;
}

Status JobSession::CheckNumbers(const protocol::ReportMessage& report) const {
  for (const auto& [field, value] :
       {std::pair{"calcSeconds", report.calc_seconds}, {"cpuSeconds", report.cpu_seconds}}) {
    if (!std::isfinite(value) || value < 0) {
      return Status::Invalid(
          fmt::format("{}: expected a number of seconds >= 0, got {}", field, value));
    }
  }
  if (report.position > config_.workload.items) {
    return Status::Invalid(fmt::format("position: expected an item of the job (<= {}), got {}",
                                       config_.workload.items, report.position));
  }
  return Status::Ok();
}

Status JobSession::CheckHandedBack(const workload::Result& result, balance::Range range) const {
  if (result.kind() != workload::WorkloadKind::kExec) return Status::Ok();
  const workload::UserFields& fields = result.exec().fields;
  BALLAST_RETURN_IF_ERROR(workload::CheckFields(fields, config_.workload.exec.result));
  for (const auto& [name, total] : fields) {
    for (const workload::ListEntry& entry : total.kept) {
      if (entry.item < range.begin || entry.item >= range.end) {
        return Status::Invalid(fmt::format("fields.{}: an entry from item {}, outside {}", name,
                                           entry.item, range.ToString()));
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<workload::Result>> JobSession::CheckCompletions(
    const Worker& worker, const protocol::ReportMessage& report) {
  std::vector<workload::Result> results;
  for (size_t i = 0; i < report.completed.size(); ++i) {
    const auto& completion = report.completed[i];
    const balance::Range range = completion.range;
    const bool inside = range.end <= config_.workload.items;
    if (!inside || worker.granted.CountIn(range) != range.size()) {
      if (inside && IsStale(worker, report)) {
        return Status::Conflict(
            fmt::format("this coordinator has not leased {} to worker '{}'; it restarted: drop "
                        "your lease and ask again",
                        range.ToString(), report.worker));
      }
      return Status::Invalid(fmt::format("completed[{}]: {} was never leased to worker '{}'", i,
                                         range.ToString(), report.worker));
    }
    auto result = workload::Result::FromJson(config_.workload.kind, completion.result);
    if (!result.ok()) {
      return Status::Invalid(fmt::format("completed[{}].result: {}", i, result.status().message()));
    }
    if (Status possible = CheckResultPossible(config_.workload, range, *result); !possible.ok()) {
      return Status::Invalid(fmt::format("completed[{}].{}", i, possible.message()));
    }
    if (Status fields = CheckHandedBack(*result, range); !fields.ok()) {
      return Status::Invalid(fmt::format("completed[{}].result.exec.{}", i, fields.message()));
    }
    results.push_back(std::move(result).value());
  }
  return results;
}

StatusOr<protocol::ReplyMessage> JobSession::HandleReport(const protocol::ReportMessage& report,
                                                          double now) {
  auto found = ids_.find(report.worker);
  if (found == ids_.end()) {
    return Status::NotFound(
        fmt::format("no worker {} in job '{}'", QuoteForMessage(report.worker), config_.id));
  }
  const WorkerId id = found->second;
  Worker& worker = workers_[id];
  if (worker.view.released) {
    // Released in the tail, it holds nothing: it asks again only when it did
    // not hear the first "done".
    ++messages_;
    protocol::ReplyMessage done;
    done.kind = Reply::Kind::kDone;
    return done;
  }
  if (Status numbers = CheckNumbers(report); !numbers.ok()) {
    ++refused_;
    return numbers;
  }
  auto results = CheckCompletions(worker, report);
  if (!results.ok()) {
    ++refused_;
    return results.status();
  }

  ++messages_;
  const auto [calc_seconds, cpu_seconds] = BoundedSeconds(worker, report, now);
  RecordContact(worker, calc_seconds, cpu_seconds, now);
  if (report.idle || calc_seconds > 0) worker.measured_from = now;
  if (verifier_.Holding(id)) {
    return OnCheckReport(id, report, *results, {calc_seconds, cpu_seconds}, now);
  }

  balance::Report event{id, now, {}, calc_seconds, report.position, report.idle};
  MergeCompleted(id, report, *results, {calc_seconds, cpu_seconds}, now, event);
  if (report.leaving) {
    // Hand in what it finished, then give back the rest of its lease.
    policy_->OnReport(event);
    return Leave(id, now);
  }
  return Decide(id, event);
}

void JobSession::MergeCompleted(WorkerId id, const protocol::ReportMessage& report,
                                const std::vector<workload::Result>& results,
                                std::pair<double, double> seconds, double now,
                                balance::Report& event) {
  Worker& worker = workers_[id];
  const auto [calc_seconds, cpu_seconds] = seconds;
  double handed_in_cost = 0;
  double dropped_cost = 0;
  double merged_cost = 0;
  double merged_squares = 0;  // of its items' costs (health::SpeedSample)
  for (size_t i = 0; i < report.completed.size(); ++i) {
    const balance::Range range = report.completed[i].range;
    handed_in_cost += cost_.Cost(range);
    if (accepted_.CountIn(range) != 0) {
      ++dropped_;  // finished by someone else first: its result is already merged
      dropped_cost += cost_.Cost(range);
      continue;
    }
    // Merge cannot fail: both results are of the job's kind.
    (void)result_.Merge(results[i]);
    accepted_.Add(range);
    event.completed.push_back(range);
    worker.view.items += range.size();
    // A failed item's declared cost was not computed: it measures nothing.
    double computed_cost = cost_.Cost(range);
    double computed_squares = cost_.SquaredCost(range);
    if (results[i].kind() == workload::WorkloadKind::kExec) {
      for (const workload::ExecFailure& failure : results[i].exec().failures) {
        event.failed.push_back(failure.items);
        computed_cost -= cost_.Cost(failure.items);
        computed_squares -= cost_.SquaredCost(failure.items);
      }
    }
    worker.view.cost += std::max(0.0, computed_cost);
    merged_cost += std::max(0.0, computed_cost);
    merged_squares += std::max(0.0, computed_squares);
    worker.view.finished_at = now;
    if (accepted_.size() == config_.workload.items) finished_at_ = now;
    verifier_.OnMerged(id, range, results[i]);
  }
  double dropped_share = 0;
  if (dropped_cost > 0) {
    // The report's seconds cover what it hands in; the dropped share was
    // spent on work someone else's result already stands for.
    dropped_share = std::min(1.0, dropped_cost / handed_in_cost);
    worker.view.dropped_busy_s += dropped_share * calc_seconds;
    worker.view.dropped_cpu_s += dropped_share * cpu_seconds;
  }
  SampleSpeed(worker, report.completed.empty() ? -1 : merged_cost, merged_squares,
              calc_seconds * (1 - dropped_share));
}

void JobSession::SampleSpeed(Worker& worker, double merged_cost, double merged_squares,
                             double calc_seconds) {
  worker.unsampled_busy_s += calc_seconds;
  if (merged_cost < 0) return;  // nothing handed in: the seconds wait for what is
  health::AddSpeedSample(worker.view.speed_samples,
                         {merged_cost, worker.unsampled_busy_s, merged_squares});
  worker.unsampled_busy_s = 0;
}

protocol::ReplyMessage JobSession::Leave(WorkerId id, double now) {
  policy_->OnWorkerLost(id, now);
  workers_[id].holds_lease = false;
  workers_[id].view.left_at = now;
  ++messages_;
  protocol::ReplyMessage done;
  done.kind = Reply::Kind::kDone;
  return done;
}

IdleFacts JobSession::IdleFactsOf(WorkerId id, bool idle, Reply::Kind reply) const {
  IdleFacts facts;
  facts.enabled = config_.release_idle;
  facts.verifying = verifier_.enabled();
  facts.idle = idle;
  facts.told_wait = reply == Reply::Kind::kWait;
  // The rest is worth counting only when it can change the answer.
  if (!facts.enabled || facts.verifying || !idle || !facts.told_wait) return facts;
  facts.unassigned = UnassignedItems();
  for (WorkerId other = 0; other < workers_.size(); ++other) {
    const WorkerView& view = workers_[other].view;
    if (other != id && view.contacted && !view.left_at && !view.released) ++facts.other_live;
  }
  return facts;
}

uint64_t JobSession::UnassignedItems() const {
  // Two workers may hold the same items (a backup and its original).
  balance::IntervalSet leased;
  for (WorkerId id = 0; id < workers_.size(); ++id) leased.Add(policy_->LeaseOf(id));
  uint64_t leased_open = 0;
  for (const balance::Range& range : leased.Ranges()) {
    leased_open += range.size() - accepted_.CountIn(range);
  }
  return config_.workload.items - accepted_.size() - leased_open;
}

protocol::ReplyMessage JobSession::Release(WorkerId id, double now) {
  Worker& worker = workers_[id];
  verifier_.SetWaiting(id, false);
  worker.view.released = true;
  return Leave(id, now);
}

std::pair<double, double> JobSession::BoundedSeconds(const Worker& worker,
                                                     const protocol::ReportMessage& report,
                                                     double now) {
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

void JobSession::RecordContact(Worker& worker, double calc_seconds, double cpu_seconds,
                               double now) {
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

protocol::ReplyMessage JobSession::Decide(WorkerId id, const balance::Report& event) {
  Worker& worker = workers_[id];
  const Reply reply = WithChecks(id, policy_->OnReport(event));
  if (ReleaseIdle(IdleFactsOf(id, event.idle, reply.kind))) return Release(id, event.now);
  ++messages_;
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

  protocol::ReplyMessage out;
  out.kind = reply.kind;
  out.lease = reply.lease;
  out.report_every_s = reply.report_every_s;
  out.heartbeat_s = config_.lease_seconds / 3;
  out.session = config_.session;
  return out;
}

Status JobSession::WorkerLost(const std::string& name, double now) {
  auto found = ids_.find(name);
  if (found == ids_.end()) {
    return Status::NotFound(fmt::format("no worker '{}' in job '{}'", name, config_.id));
  }
  Worker& worker = workers_[found->second];
  if (worker.view.released) return Status::Ok();  // it left the job already
  policy_->OnWorkerLost(found->second, now);
  verifier_.Release(found->second);
  worker.holds_lease = false;
  worker.view.lost++;
  worker.view.left_at = now;
  return Status::Ok();
}

void JobSession::Tick(double now) {
  for (WorkerId id = 0; id < workers_.size(); ++id) {
    Worker& worker = workers_[id];
    const bool silent_lease =
        worker.holds_lease && now - worker.view.last_contact >= config_.lease_seconds;
    const bool never_started = !worker.view.contacted && worker.view.lost == 0 &&
                               now - worker.joined_at >= config_.start_timeout_s;
    if (silent_lease || never_started) (void)WorkerLost(worker.view.name, now);
  }
  if (policy_->NextTick() <= now) policy_->OnTick(now);
}

double JobSession::NextDeadline() const {
  double next = policy_->NextTick();
  for (const Worker& worker : workers_) {
    if (worker.holds_lease) {
      next = std::min(next, worker.view.last_contact + config_.lease_seconds);
    } else if (!worker.view.contacted && worker.view.lost == 0) {
      next = std::min(next, worker.joined_at + config_.start_timeout_s);
    }
  }
  return next;
}

std::vector<std::string> JobSession::TakeSignals() {
  std::vector<std::string> names;
  for (WorkerId id : policy_->TakeSignals()) {
    names.push_back(workers_[id].view.name);
    ++messages_;
  }
  for (WorkerId id : verifier_.TakeSignals()) {
    if (std::find(names.begin(), names.end(), workers_[id].view.name) == names.end()) {
      names.push_back(workers_[id].view.name);
      ++messages_;
    }
  }
  return names;
}

std::optional<balance::Range> JobSession::SignalLease(const std::string& worker) const {
  auto found = ids_.find(worker);
  if (found == ids_.end()) return std::nullopt;
  const WorkerId id = found->second;
  const Worker& told = workers_[id];
  if (!told.holds_lease || verifier_.Holding(id)) return std::nullopt;
  const balance::Range held = policy_->LeaseOf(id);
  if (held.empty() || held.begin != told.lease.begin || held.end > told.lease.end) {
    return std::nullopt;
  }
  return held;
}

std::set<std::string> JobSession::HoldingLeases(const std::set<std::string>& names) const {
  std::set<std::string> holding;
  for (const std::string& name : names) {
    auto found = ids_.find(name);
    if (found != ids_.end() && workers_[found->second].holds_lease) holding.insert(name);
  }
  return holding;
}

std::set<std::string> JobSession::NamesOfWorkers() const {
  std::set<std::string> names;
  for (const auto& [name, id] : ids_) names.insert(name);
  return names;
}

std::string JobSession::WaitReason() const {
  std::string reason;
  for (const balance::WaitNote& note : policy_->WaitNotes()) {
    if (!reason.empty()) reason += "; ";
    if (note.victim && *note.victim < workers_.size()) {
      reason += workers_[*note.victim].view.name + ": ";
    }
    reason += note.why;
  }
  return reason;
}

void JobSession::SampleSharing(const std::set<std::string>& shared, double now) {
  if (Finished()) return;
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

JobView JobSession::View(bool segments) const {
  JobView view;
  view.id = config_.id;
  view.items = config_.workload.items;
  view.completed = accepted_.size();
  for (const balance::Range& range : accepted_.Ranges()) view.completed_cost += cost_.Cost(range);
  view.done = Finished();
  view.started_at = started_at_;
  view.finished_at = finished_at_;
  view.result = result_;
  view.policy = policy_->stats();
  view.messages = messages_;
  view.refused_reports = refused_;
  view.dropped_completions = dropped_;
  view.clamped_reports = clamped_;
  view.sharing_sampled_s = sharing_sampled_s_;
  view.workers.reserve(workers_.size());
  for (const Worker& worker : workers_) {
    view.workers.push_back(worker.view);
    WorkerView& copy = view.workers.back();
    if (segments) copy.busy = worker.segments;
    copy.holds_lease =
        worker.holds_lease ||
        verifier_.Holding(static_cast<balance::WorkerId>(&worker - workers_.data())).has_value();
  }
  view.verification = verifier_.View();
  return view;
}

bool JobSession::Finished() const {
  return verifier_.failed() || (policy_->Finished() && verifier_.Idle());
}

protocol::ReplyMessage JobSession::OnCheckReport(WorkerId id, const protocol::ReportMessage& report,
                                                 const std::vector<workload::Result>& results,
                                                 std::pair<double, double> seconds, double now) {
  Worker& worker = workers_[id];
  const balance::Range check = *verifier_.Holding(id);
  verifier_.AddCost(id, seconds.second, seconds.first);
  // The worker holds nothing but the check, so its completions are parts of
  // it. A mismatch fails the job: Finished() turns true, every reply "done".
  for (size_t i = 0; i < report.completed.size(); ++i) {
    (void)verifier_.OnRecomputed(id, report.completed[i].range, results[i], now);
  }
  const bool recomputed = !verifier_.Holding(id).has_value();
  if (report.leaving) {
    verifier_.Release(id);  // when unfinished: another worker takes it
    return Leave(id, now);
  }
  if (!recomputed) {
    ++messages_;
    protocol::ReplyMessage more;
    more.kind = Reply::Kind::kContinue;
    more.lease = check;
    more.heartbeat_s = config_.lease_seconds / 3;
    more.session = config_.session;
    return more;
  }
  worker.holds_lease = false;
  return Decide(id, balance::Report{id, now, {}, 0, 0, true});
}

Reply JobSession::WithChecks(WorkerId id, Reply reply) {
  if (!verifier_.enabled()) return reply;
  if (verifier_.failed()) return Reply{Reply::Kind::kDone, {}, 0, {}};
  if (reply.kind == Reply::Kind::kWait || reply.kind == Reply::Kind::kDone) {
    if (auto check = verifier_.Assign(id)) return Reply{Reply::Kind::kLease, *check, 0, {}};
    // The worker may be needed for a check still to come.
    if (reply.kind == Reply::Kind::kDone && !Finished()) reply.kind = Reply::Kind::kWait;
  }
  verifier_.SetWaiting(id, reply.kind == Reply::Kind::kWait);
  return reply;
}

}  // namespace ballast::coordinator
