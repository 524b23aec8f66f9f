// How much of its lease a worker computes before it may report again: the
// step. Reports go out between steps, so a step that runs for long silences
// the worker that long — past its lease's expiry, the coordinator takes the
// worker for lost.
//
// A step aims at `step_seconds` of computing per thread, sized by the job's
// declared cost model and the seconds per unit of cost the last step took.
// One step is a poor measurement when items differ far more than the model
// says (primes by trial division: a composite with a small factor is done
// in nanoseconds, a prime near 10^6 takes a thousand divisions), and a
// one-item step that happened to be cheap would make the next step the
// whole lease. So a step holds at most kMaxStepGrowth times the last step's
// items: a wrong measurement is corrected within a few steps, never acted on
// in one. (Bounding the step's declared cost instead held a job whose items
// grow dearer, like primes', at one item per step for good: two items past
// the last one cost more than twice it.)
//
// A command run per step (an exec job without perItem) pays its start once
// per run (the process, its interpreter and libraries, its first files),
// however many items the run holds. Steps of the default 0.05 s made nearly
// every such run one item: thumbnails of 60 ms each ran 771 commands for 800
// items on the real-node bench, and the boards spent 10 % more CPU than the
// items' own. So a worker that runs a command per step learns the run's start
// from its own runs (RunStartLearner: a run's seconds are about start +
// seconds_per_cost x its items' declared cost, fitted as
// core/balance/learned_cost.h fits a job's, one sample per run) and aims each
// run at 1 / kRunStartShare times that start (AimRun), and no longer than
// kMaxRunSeconds: a steal's cut waits for the run under way, and whatever the
// run computes past the cut is computed twice.
//
// The start is learned from 16 runs at least, and a run is cut at a second:
// a test suite's tests of 0.4 to 28 s, each run paying pytest's start again,
// ran 13 to 17 runs a worker of one or two tests each, the oracle split 3,
// and the boards spent 7 to 17 % more CPU than the oracle's. So, after its
// first step, a worker that runs a command per step also makes each run hold
// at least half of what is left of its lease by declared cost (GuidedEnd;
// guided self-scheduling, Polychronopoulos and Kuck, with the lease as the
// pool): a lease of n items takes about log2(n) runs instead of up to n, and
// the runs shrink with the lease, so that the last ones are short and a cut
// late in the lease waits for little. Half, not more: the other half stays
// beyond the run for a cut to take, which is what a thief as fast as its
// victim takes for both to finish together. The first step stays one item
// per thread, so that the first report comes early.
//
// Thread-safety: NextStepEnd, AimRun, ExploreEnd and GuidedEnd are pure functions;
// RunStartLearner and StepPlanner are values, not thread-safe.
#pragma once

#include <cstdint>

#include "core/balance/cost_model.h"
#include "core/balance/learned_cost.h"
#include "core/balance/range.h"

namespace ballast::worker {

inline constexpr uint64_t kMaxStepGrowth = 2;

// What the worker measured on its last step (zero before the first one).
struct StepMeasure {
  double seconds_per_cost = 0;  // wall seconds per unit of declared cost
  uint64_t items = 0;           // the step's items
};

// The end of the next step of `rest` (what is left of the lease; not empty):
// about step_seconds of work per thread by `last`, at most kMaxStepGrowth
// times last.items, at least one item per thread (or what is left). Before
// any measurement: one item per thread.
uint64_t NextStepEnd(const balance::CostModel& cost, balance::Range rest, unsigned threads,
                     double step_seconds, const StepMeasure& last);

// A run's start at most this share of the run...
inline constexpr double kRunStartShare = 0.02;
// ... and a run no longer than this for it (unless step_seconds is longer).
inline constexpr double kMaxRunSeconds = 1.0;

// What a worker learned of its command's start, per run.
struct RunStart {
  double cost = 0;              // in the job's cost units (the mean item 1); 0 until learned
  double seconds_per_cost = 0;  // a run's seconds per unit of declared cost, the start apart
  double seconds() const { return cost * seconds_per_cost; }
  bool learned() const { return cost > 0 && seconds_per_cost > 0; }
};

// Learns RunStart from the worker's runs. The start counts only once the fit
// tells it from the items' costs (learned_cost.h: 16 runs of differing costs
// at least, its estimate less three standard errors above a fiftieth of the
// mean item); until then `start()` is not learned. Then it is the fit's
// estimate, the last trusted one: once runs are sized alike the fit has
// nothing to tell their start by.
class RunStartLearner {
 public:
  // One run: `seconds` of computing for items of declared cost `cost`.
  void Add(double seconds, double cost);
  const RunStart& start() const { return start_; }

 private:
  balance::StartCostLearner learner_{{}, 256};
  double seconds_ = 0;  // of every usable run
  double cost_ = 0;     // their declared cost
  uint64_t runs_ = 0;
  double start_cost_ = 0;  // the last trusted fit's estimate
  RunStart start_;
};

// The step_seconds and the measure to size the next step by (NextStepEnd),
// for a worker whose every thread runs one command per step: unchanged while
// `start` is not learned; else a run of start / kRunStartShare seconds, at
// least step_seconds and at most kMaxRunSeconds (or step_seconds when that is
// longer), less the start, at the learned seconds per cost.
struct StepAim {
  double step_seconds = 0;
  StepMeasure last;
};
StepAim AimRun(double step_seconds, const RunStart& start, const StepMeasure& last);

// Runs whose items cost alike (uniform items, one a run) cannot show a start:
// every run's cost is the same. So, until a start is learned and for the
// first kExploreRuns runs, every second run holds at least two items per
// thread: `end` (NextStepEnd's) moved so, within `rest`. `runs` is the runs
// made so far. Where no start shows after that, there is none worth paying
// off (a fiftieth of the mean item, learned_cost.h).
inline constexpr uint64_t kExploreRuns = 64;
uint64_t ExploreEnd(uint64_t end, balance::Range rest, unsigned threads, const RunStart& start,
                    uint64_t runs);

// A run of a worker that runs a command per step holds at least this share
// of what is left of its lease, by declared cost, once a step was measured.
inline constexpr double kRunShareOfLease = 0.5;
// The end of such a run of `rest`: the fewest items that reach the share (at
// least one); `rest.begin` before any measurement (`last`), when the first
// step stays as sized.
uint64_t GuidedEnd(const balance::CostModel& cost, balance::Range rest, const StepMeasure& last);

// The steps of one job on one worker, by the functions above: what the last
// step took and, where each thread runs one command per step
// (`one_run_per_step`: an exec job without perItem), the runs and their start.
class StepPlanner {
 public:
  StepPlanner() = default;
  StepPlanner(balance::CostModel cost, unsigned threads, double step_seconds,
              bool one_run_per_step);

  // The next step of `rest` (what is left of the lease; not empty).
  balance::Range Next(balance::Range rest) const;
  // A step that computed `range` in `seconds`.
  void Done(balance::Range range, double seconds);

  bool one_run_per_step() const { return one_run_per_step_; }
  // The end of `step` when it is one command run of several items, which a
  // cut cannot stop inside (LeaseLedger::Running); 0 otherwise.
  uint64_t RunEnd(balance::Range step) const {
    return one_run_per_step_ && step.size() > 1 ? step.end : 0;
  }
  uint64_t runs() const { return runs_; }
  const RunStart& run_start() const { return learner_.start(); }

 private:
  balance::CostModel cost_;
  unsigned threads_ = 1;
  double step_seconds_ = 0.05;
  bool one_run_per_step_ = false;
  StepMeasure last_;
  RunStartLearner learner_;
  uint64_t runs_ = 0;
};

}  // namespace ballast::worker
