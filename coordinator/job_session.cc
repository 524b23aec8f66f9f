// One running job as the coordinator owns it (job_session.h).
#include "coordinator/job_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "coordinator/report_checks.h"
#include "coordinator/worker_ledger.h"
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
  // Adaptive's slow start probes a worker with small leases from outside its
  // share where fetching an item's inputs is not yet in its measured speed
  // (the simulator's bytesPerItem over a link). Primes and matmul compute an
  // item from its number; an exec command fetches its inputs inside its run,
  // alike for every item on every worker (the pods share one template and
  // Ballast places nothing near a worker), so the run's seconds that make the
  // worker's speed hold the fetching already. A probe there only splits the
  // pool into more leases, each paying the command's start (docs/efficiency.md,
  // "Slow start only for inputs that cross a link").
  job.inputs_cross_links = false;
  // An exec command may run again for the same range (the contract of
  // docs/getting-started.md, "Your own job"), also at once on two workers,
  // unless the job says it must not. A job that keeps each run's result file
  // (keepDir) gets no backup copies either: both copies would write the
  // range's file, and the one handed in second (whose result is dropped)
  // replaced the merged one's in 2 of 3 runs (docs/workloads.md, "Results").
  job.repeatable = config.workload.kind != workload::WorkloadKind::kExec ||
                   (config.workload.exec.backups && config.workload.exec.result.keep_dir.empty());
  return job;
}

// Ok, or Invalid naming what is wrong with `config` (JobSession::Create).
Status CheckConfig(const JobConfig& config) {
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
  return CheckVerifyOptions(config.verify, config.workers.size());
}

// The reply that tells a worker to exit.
protocol::ReplyMessage Done() {
  protocol::ReplyMessage done;
  done.kind = Reply::Kind::kDone;
  return done;
}

}  // namespace

StatusOr<std::unique_ptr<JobSession>> JobSession::Create(JobConfig config, double now) {
  BALLAST_RETURN_IF_ERROR(CheckConfig(config));
  auto policy = balance::MakePolicy(config.policy);
  return std::unique_ptr<JobSession>(new JobSession(std::move(config), std::move(policy), now));
}

JobSession::JobSession(JobConfig config, std::unique_ptr<balance::Policy> policy, double now)
    : config_(std::move(config)),
      policy_(std::move(policy)),
      workers_(std::make_unique<WorkerLedger>()),
      items_(balance::JobCostModel(JobInfoOf(config_)), config_.workload.items,
             config_.workload.kind),
      started_at_(now),
      verifier_(config_.verify, WorkerNames(config_)) {
  for (const balance::WorkerPrior& prior : config_.workers) {
    const auto cores = config_.worker_cores.find(prior.name);
    workers_->Append(
        prior, cores != config_.worker_cores.end() ? cores->second : config_.max_worker_cores, now);
  }
  balance::JobInfo job = JobInfoOf(config_);
  if (config_.resume) {
    items_.Resume(config_.resume->completed, config_.resume->result, now);
    job.finished = items_.finished();
  }
  policy_->Start(job, now);
}

JobSession::~JobSession() = default;

Status JobSession::AddWorker(const balance::WorkerPrior& prior, std::optional<double> cores,
                             double now) {
  if (prior.name.empty()) return Status::Invalid("a joining worker needs a name");
  if (HasWorker(prior.name)) return Status::Ok();
  if (cores && (!std::isfinite(*cores) || *cores <= 0)) {
    return Status::Invalid(
        fmt::format("worker '{}': expected a number of cores > 0, got {}", prior.name, *cores));
  }
  BALLAST_ASSIGN_OR_RETURN(const WorkerId id, policy_->OnWorkerJoined(prior, now));
  // Ids are given in join order by both; a mismatch would be a bug in either.
  if (id != workers_->size()) {
    return Status(StatusCode::kTerminal,
                  fmt::format("the policy gave worker '{}' id {}, expected {}", prior.name, id,
                              workers_->size()));
  }
  config_.workers.push_back(prior);
  if (cores) config_.worker_cores[prior.name] = *cores;
  workers_->Append(prior, cores.value_or(config_.max_worker_cores), now);
  verifier_.AddWorker(prior.name);
  return Status::Ok();
}

StatusOr<protocol::ReplyMessage> JobSession::HandleReport(const protocol::ReportMessage& report,
                                                          double now) {
  const std::optional<WorkerId> found = workers_->Find(report.worker);
  if (!found) {
    return Status::NotFound(
        fmt::format("no worker {} in job '{}'", QuoteForMessage(report.worker), config_.id));
  }
  const WorkerId id = *found;
  WorkerLedger::Worker& worker = workers_->at(id);
  if (worker.view.released) {
    // Released in the tail, it holds nothing: it asks again only when it did
    // not hear the first "done".
    ++messages_;
    return Done();
  }
  if (Status numbers = CheckNumbers(report, config_.workload.items); !numbers.ok()) {
    ++refused_;
    return numbers;
  }
  auto results = CheckCompletions(config_.workload, worker.granted,
                                  IsStale(worker.view.leases, config_.session, report), report);
  if (!results.ok()) {
    ++refused_;
    return results.status();
  }

  ++messages_;
  const auto [calc_seconds, cpu_seconds] = workers_->BoundedSeconds(id, report, now);
  workers_->RecordContact(id, calc_seconds, cpu_seconds, now);
  if (report.idle || calc_seconds > 0) worker.measured_from = now;
  if (verifier_.Holding(id)) {
    return OnCheckReport(id, report, *results, {calc_seconds, cpu_seconds}, now);
  }

  balance::Report event{id, now, {}, calc_seconds, report.position, report.idle, {}};
  event.running_end = report.running_end;
  MergeCompleted(id, report, *results, {calc_seconds, cpu_seconds}, now, event);
  if (report.leaving) {
    // Hand in what it finished, then give back the rest of its lease.
    policy_->OnReport(event);
    CountComputingCutShort(id, now);
    return Leave(id, now);
  }
  return Decide(id, event);
}

void JobSession::MergeCompleted(WorkerId id, const protocol::ReportMessage& report,
                                const std::vector<workload::Result>& results,
                                std::pair<double, double> seconds, double now,
                                balance::Report& event) {
  WorkerView& view = workers_->at(id).view;
  const auto [calc_seconds, cpu_seconds] = seconds;
  // Computing it reports after the end covers what was counted cut short.
  if (calc_seconds > 0) view.cut_short_s = 0;
  const MergedItems::HandedIn handed = items_.HandIn(report.completed, results, now);
  for (const MergedItems::HandedIn::Merged& merged : handed.merged) {
    const balance::Range range = report.completed[merged.index].range;
    event.completed.push_back(range);
    view.items += range.size();
    view.cost += merged.cost;
    view.finished_at = now;
    verifier_.OnMerged(id, range, results[merged.index]);
  }
  event.failed.insert(event.failed.end(), handed.failed.begin(), handed.failed.end());
  double dropped_share = 0;
  if (handed.dropped_cost > 0) {
    // The report's seconds cover what it hands in; the dropped share was
    // spent on work someone else's result already stands for.
    dropped_share = std::min(1.0, handed.dropped_cost / handed.handed_in_cost);
    view.dropped_busy_s += dropped_share * calc_seconds;
    view.dropped_cpu_s += dropped_share * cpu_seconds;
  }
  workers_->SampleSpeed(id, report.completed.empty() ? -1 : handed.merged_cost,
                        handed.merged_squares, calc_seconds * (1 - dropped_share));
}

void JobSession::CountComputingCutShort(WorkerId reporter, double now) {
  if (end_counted_ || !Finished()) return;
  end_counted_ = true;
  workers_->CountCutShort(reporter, now,
                          [this](WorkerId id) { return verifier_.Holding(id).has_value(); });
}

protocol::ReplyMessage JobSession::Leave(WorkerId id, double now) {
  policy_->OnWorkerLost(id, now);
  workers_->MarkLeft(id, now);
  ++messages_;
  return Done();
}

IdleFacts JobSession::IdleFactsOf(WorkerId id, bool idle, Reply::Kind reply) const {
  IdleFacts facts;
  facts.enabled = config_.release_idle;
  facts.verifying = verifier_.enabled();
  facts.idle = idle;
  facts.told_wait = reply == Reply::Kind::kWait;
  // The rest is worth counting only when it can change the answer.
  if (!facts.enabled || facts.verifying || !idle || !facts.told_wait) return facts;
  // Two workers may hold the same items (a backup and its original).
  balance::IntervalSet leased;
  for (WorkerId other = 0; other < workers_->size(); ++other) leased.Add(policy_->LeaseOf(other));
  facts.unassigned = items_.Unassigned(leased);
  facts.other_live = workers_->OtherLive(id);
  return facts;
}

protocol::ReplyMessage JobSession::Release(WorkerId id, double now) {
  verifier_.SetWaiting(id, false);
  workers_->at(id).view.released = true;
  return Leave(id, now);
}

protocol::ReplyMessage JobSession::Decide(WorkerId id, const balance::Report& event) {
  const Reply policy_reply = policy_->OnReport(event);
  CountComputingCutShort(id, event.now);
  const Reply reply = verifier_.WithChecks(id, policy_reply, policy_->Finished());
  if (ReleaseIdle(IdleFactsOf(id, event.idle, reply.kind))) return Release(id, event.now);
  ++messages_;
  workers_->RecordReply(id, reply);
  return MessageOf(reply);
}

protocol::ReplyMessage JobSession::MessageOf(const Reply& reply) const {
  protocol::ReplyMessage out;
  out.kind = reply.kind;
  out.lease = reply.lease;
  out.report_every_s = reply.report_every_s;
  out.heartbeat_s = config_.lease_seconds / 3;
  out.session = config_.session;
  return out;
}

Status JobSession::WorkerLost(const std::string& name, double now) {
  const std::optional<WorkerId> id = workers_->Find(name);
  if (!id) return Status::NotFound(fmt::format("no worker '{}' in job '{}'", name, config_.id));
  if (workers_->at(*id).view.released) return Status::Ok();  // it left the job already
  policy_->OnWorkerLost(*id, now);
  verifier_.Release(*id);
  workers_->MarkLeft(*id, now);
  workers_->at(*id).view.lost++;
  return Status::Ok();
}

void JobSession::Tick(double now) {
  for (const std::string& name :
       workers_->Expired(now, config_.lease_seconds, config_.start_timeout_s)) {
    (void)WorkerLost(name, now);
  }
  if (policy_->NextTick() <= now) policy_->OnTick(now);
}

double JobSession::NextDeadline() const {
  return std::min(policy_->NextTick(),
                  workers_->NextDeadline(config_.lease_seconds, config_.start_timeout_s));
}

std::vector<std::string> JobSession::TakeSignals() {
  std::vector<std::string> names;
  for (WorkerId id : policy_->TakeSignals()) {
    names.push_back(workers_->at(id).view.name);
    ++messages_;
  }
  for (WorkerId id : verifier_.TakeSignals()) {
    const std::string& name = workers_->at(id).view.name;
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
      ++messages_;
    }
  }
  return names;
}

std::optional<balance::Range> JobSession::SignalLease(const std::string& worker) const {
  const std::optional<WorkerId> id = workers_->Find(worker);
  if (!id) return std::nullopt;
  const WorkerLedger::Worker& told = workers_->at(*id);
  if (!told.holds_lease || verifier_.Holding(*id)) return std::nullopt;
  const balance::Range held = policy_->LeaseOf(*id);
  if (held.empty() || held.begin != told.lease.begin || held.end > told.lease.end) {
    return std::nullopt;
  }
  return held;
}

bool JobSession::HasWorker(const std::string& name) const {
  return workers_->Find(name).has_value();
}

std::set<std::string> JobSession::HoldingLeases(const std::set<std::string>& names) const {
  return workers_->HoldingLeases(names);
}

std::set<std::string> JobSession::NamesOfWorkers() const { return workers_->Names(); }

std::string JobSession::WaitReason() const {
  std::string reason;
  for (const balance::WaitNote& note : policy_->WaitNotes()) {
    if (!reason.empty()) reason += "; ";
    if (note.victim && *note.victim < workers_->size()) {
      reason += workers_->at(*note.victim).view.name + ": ";
    }
    reason += note.why;
  }
  return reason;
}

void JobSession::SampleSharing(const std::set<std::string>& shared, double now) {
  if (!Finished()) workers_->SampleSharing(shared, now);
}

JobView JobSession::View(bool segments) const {
  JobView view;
  view.id = config_.id;
  view.items = config_.workload.items;
  view.completed = items_.finished().size();
  view.completed_cost = items_.FinishedCost();
  view.done = Finished();
  view.started_at = started_at_;
  view.finished_at = items_.finished_at();
  view.result = items_.result();
  view.policy = policy_->stats();
  view.messages = messages_;
  view.refused_reports = refused_;
  view.dropped_completions = items_.dropped();
  view.clamped_reports = workers_->clamped();
  view.sharing_sampled_s = workers_->sharing_sampled_s();
  view.workers = workers_->Views(segments);
  for (WorkerId id = 0; id < view.workers.size(); ++id) {
    if (verifier_.Holding(id)) view.workers[id].holds_lease = true;
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
  const std::optional<balance::Range> check =
      verifier_.OnCheckReport(id, report.completed, results, seconds.second, seconds.first, now);
  if (report.leaving) {
    verifier_.Release(id);  // when unfinished: another worker takes it
    return Leave(id, now);
  }
  if (check) {
    ++messages_;
    return MessageOf(Reply{Reply::Kind::kContinue, *check, 0, {}});
  }
  workers_->at(id).holds_lease = false;
  return Decide(id, balance::Report{id, now, {}, 0, 0, true, {}});
}

}  // namespace ballast::coordinator
