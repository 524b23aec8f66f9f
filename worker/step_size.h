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
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "core/balance/cost_model.h"
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

}  // namespace ballast::worker
