// Policy: the one interface through which every balancing decision is made,
// in the simulator, the local runner and the operator alike.
//
// A policy is driven by events only: a worker's report (which is also its
// request for work), a worker joining or lost, and time passing. It does no I/O,
// starts no threads and reads no clock: `now` arrives with each event, so the
// same object gives the same decisions in virtual and in real time.
//
// The work model: a job is the items [0, N). A worker holds at most one lease
// (a contiguous range), computes it in order, and sends a Report when the lease
// is finished (idle = true) and, while computing, every `report_every_s`
// seconds of compute. The Reply to a progress report may shrink the end of the
// lease (a worker never loses the item it has begun); the Reply to an idle
// report carries the next lease, or says wait, or says the job is done.
// Signals ask a worker to contact the coordinator now (a waiting worker asks
// again; a computing one reports at its next item boundary).
//
// Prefetch: when the items' inputs have to cross the workers' links
// (JobInfo::inputs_move), a reply may also name ranges set aside for that
// worker after its lease, so that it fetches their inputs while it computes;
// one of them comes as its next lease when it asks. A range set aside may
// still go to another worker (a steal) if this one falls behind.
//
// Thread-safety: not thread-safe; a driver serializes all calls on one policy.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/range.h"
#include "core/common/status.h"

namespace ballast::balance {

using WorkerId = uint32_t;
inline constexpr double kNever = std::numeric_limits<double>::infinity();

// The bounds a job must keep for a policy to start (CheckJob). A prior speed
// is relative, so only its range matters: [1e-9, 1e12] holds fuzzy weights
// (1 to 1e6, see fuzzy/model.h), emulated cores and measured items per second
// alike, and keeps every sum and quotient of speeds and costs a policy forms
// finite. Item numbers up to 2^53 are exact in a double, which the cost model
// needs to find an item from a cost.
inline constexpr double kMinPriorSpeed = 1e-9;
inline constexpr double kMaxPriorSpeed = 1e12;
inline constexpr uint64_t kMaxItems = uint64_t{1} << 53;
// Workers one job may have, those that joined it included.
inline constexpr size_t kMaxWorkers = 100'000;

// What is known about a worker before the job starts.
struct WorkerPrior {
  std::string name;
  // Relative speed: a fuzzy weight, or a measured speed from earlier jobs.
  double speed = 1.0;
  // How far the prior is trusted against the job's first measurements of
  // the worker, in [0, 1]: 0 for a fuzzy weight (the first measurement
  // replaces it), up to 1 for a history prior at full credibility
  // (fuzzy::NodePrior::credibility). Only `adaptive` uses it.
  double credibility = 0;
  // The share of each CPU period its compute threads get, in (0, 1]: 1 for a
  // node that computes steadily; below 1 under a CPU quota or a duty cycle
  // (quota / (period * threads)), which computes in bursts and may hand in
  // its last items up to a throttled gap late. Only `adaptive` uses it (the
  // hedged split of its step 1).
  double duty = 1;
};

struct JobInfo {
  uint64_t items = 0;
  // The declared cost shape; policies that split work split it by cost.
  CostShape cost = CostShape::kUniform;
  std::vector<WorkerPrior> workers;
  // Items already finished before the start (a job resumed from a
  // checkpoint): they are done from the outset and never leased.
  IntervalSet finished;
  // The items' inputs cross a worker's link before it can compute them, so
  // fetching them ahead (Reply::prefetch) saves time.
  bool inputs_move = false;
  // The items' inputs may have to cross a worker's link at all (in blocks or
  // streamed), so that an item from outside the worker's planned share may
  // cost it more than its own did: adaptive sizes such leases by slow start.
  // False when fetching an item's inputs is part of computing it, which the
  // worker's measured speed holds: primes and matmul compute an item from its
  // number, an exec command fetches its inputs inside its run (every real
  // job; JobSession). Nothing to probe then, and a lease from the pool or a
  // steal is sized as the policy predicts at once.
  bool inputs_cross_links = true;
  // An item may be computed twice, also at once, with no effect beyond its
  // result (primes, matmul, exec by its contract): adaptive's endgame may give
  // a second worker a copy of a lease. False for an exec job whose command
  // must never run twice at once (exec.backups: false).
  bool repeatable = true;
  // One cost per item (bytes, seconds, any positive number; only their ratios
  // matter), or null: the items cost as `cost` says. When given, they replace
  // `cost`, and every policy splits by cumulative cost (JobCostModel).
  ItemCosts item_costs;
};

// One message from a worker to the coordinator.
struct Report {
  WorkerId worker = 0;
  double now = 0;
  // Items finished since the previous report.
  std::vector<Range> completed;
  // Seconds the worker spent computing since its previous report.
  double calc_seconds = 0;
  // The first item of its lease it has not finished (the item in progress).
  uint64_t position = 0;
  // True when the worker has no unfinished lease and asks for work.
  bool idle = false;
  // Of `completed`, the items that failed (exec: every attempt of the
  // command failed): done, but their declared cost says nothing of the
  // node's speed (a corrupt large input fails in a moment).
  std::vector<Range> failed;
  // The end of the run of several items the worker has begun and cannot stop
  // before (an exec step's one command, whose result is the run's whole):
  // a cut inside it would drop that result. 0: it may stop after any item.
  uint64_t running_end = 0;
};

struct Reply {
  enum class Kind {
    kContinue,  // keep computing `lease` (its end may have shrunk)
    kLease,     // start computing `lease`
    kWait,      // no work now: wait for a signal
    kDone,      // the job is complete: exit
  };
  Kind kind = Kind::kWait;
  Range lease;
  // Send a progress report after this much compute; 0 means only at lease end.
  double report_every_s = 0;
  // Ranges newly set aside for this worker after its lease: fetch their
  // inputs now (see Prefetch above). Any kind of reply may carry them.
  std::vector<Range> prefetch;
};

// Why an idle worker was told to wait: a worker the policy looked at for
// work (none: the job as a whole) and why it gave none.
struct WaitNote {
  std::optional<WorkerId> victim;
  std::string why;
};

// Counters every policy keeps; drivers print them.
struct PolicyStats {
  uint64_t moved_items = 0;      // items taken from one worker's lease for another
  uint64_t steals = 0;           // tail steals, backups among them
  uint64_t backups = 0;          // leases given a second worker's copy (adaptive's endgame)
  uint64_t rebalances = 0;       // leases shrunk by rebalancing
  uint64_t duplicate_items = 0;  // items reported finished more than once
  uint64_t completed_items = 0;  // distinct items finished
  // The start cost per item the policy splits by (learned_cost.h), in mean
  // declared items; 0 while the declared costs stand.
  double start_cost = 0;
  // Whether the policy learns a start cost in this job (adaptive with
  // learnCosts, on a job that declares costs), and how many reports its
  // latest fit took in: with start_cost 0 and samples, the fit has not yet
  // told a start cost apart from the declared costs.
  bool learning_costs = false;
  uint64_t cost_samples = 0;
};

// Returns Ok when a policy can run `job`: 1 <= items <= kMaxItems, 1 to
// kMaxWorkers workers, every prior as CheckPrior wants it, and item_costs,
// when given, one positive finite number per item. Otherwise Invalid naming the first
// offending field, e.g. "worker pi-3: speed inf: expected a finite number in
// [1e-09, 1e+12]" or "item_costs[17]: expected a positive finite cost, got 0".
Status CheckJob(const JobInfo& job);

// Returns Ok when the worker's prior speed is finite and within
// [kMinPriorSpeed, kMaxPriorSpeed] and its duty in (0, 1]; Invalid naming
// the worker and the field otherwise (CheckJob's rule for each worker).
Status CheckPrior(const WorkerPrior& worker);

// Returns Ok when `costs` holds one positive finite number per item of a job
// of `items` items (CheckJob's rule for JobInfo::item_costs); otherwise
// Invalid naming the size or the first offending index, e.g.
// "item_costs: expected one cost per item (3), got 2".
Status CheckItemCosts(const std::vector<double>& costs, uint64_t items);

// The job's declared cost model: its item_costs when given, else its shape.
// Requires CheckJob(job) to be Ok.
CostModel JobCostModel(const JobInfo& job);

class Policy {
 public:
  virtual ~Policy() = default;

  // The policy's name as selected in a job ("adaptive", "mms", ...).
  virtual std::string_view name() const = 0;
  // Called once, before any report. Returns Ok, or Invalid (from CheckJob)
  // when the job breaks a bound above; a policy that refused is not driven.
  virtual Status Start(const JobInfo& job, double now) = 0;
  // Records what the report says and decides what the worker does next.
  virtual Reply OnReport(const Report& report) = 0;
  // The worker is gone (its lease expired, its pod died, its node was
  // cordoned or drained): everything it has not reported returns to the
  // pool at once. A later report from it is still accepted.
  virtual void OnWorkerLost(WorkerId worker, double now) = 0;
  // A worker joins the running job (a node became eligible: added, Ready,
  // uncordoned, labelled into the job's selector). It gets the next id (the
  // number of workers so far) and, when it first asks, work from the pool
  // or, in the policies that steal, from the others. Returns its id, or
  // Invalid (changing nothing) when its prior breaks CheckJob's bounds or
  // the job has kMaxWorkers workers.
  virtual StatusOr<WorkerId> OnWorkerJoined(const WorkerPrior& prior, double now) = 0;
  // Time passes; drivers call this at NextTick() (policies that need no timer
  // keep the defaults).
  virtual void OnTick(double /*now*/) {}
  virtual double NextTick() const { return kNever; }

  // True once every item has been reported finished.
  virtual bool Finished() const = 0;
  virtual const PolicyStats& stats() const = 0;
  // Workers to signal, accumulated since the last call; the driver delivers them.
  virtual std::vector<WorkerId> TakeSignals() = 0;
  // The lease the policy holds for the worker now (empty when none): after
  // a steal, its end is nearer than the worker was told. A driver may send
  // it with the worker's signal, so that the worker stops at the cut as soon
  // as the signal arrives.
  virtual Range LeaseOf(WorkerId worker) const = 0;
  // After a kWait reply, why the worker was given nothing; after a kLease
  // to an idle worker, why that lease and not the obvious one, where the
  // policy chose otherwise (empty where the policy keeps no notes). A
  // driver may log them beside the reply.
  virtual std::vector<WaitNote> WaitNotes() const { return {}; }
};

}  // namespace ballast::balance
