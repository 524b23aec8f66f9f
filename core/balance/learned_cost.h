// Learned costs: what a job's items really cost, learned from the ranges its
// workers report, as a start cost per item on top of the declared costs.
//
// A job that runs a command per item (exec) declares each item's cost (a
// file's size, say), but an item really takes about s_w (a + c_i) seconds on
// worker w: a start cost a paid by every item (the process's start, opening
// its file) plus the declared cost c_i, at the worker's own s_w seconds per
// cost unit. Costs are in CostModel's units (the mean declared item costs 1),
// so a is a share of the mean item: a = 0.5 means an item's start costs half
// as much as the mean item's declared work.
//
// Each report that finishes items gives a sample: n items of declared cost c
// took t seconds of computing on worker w, t ~ s_w (a n + c). FitStartCost
// fits a and every s_w together: Gauss–Newton steps on the sum of squared
// residuals weighted by 1 / (a n + c) (the time of n independent items
// scatters about its mean with a variance that grows with their cost), each
// worker's s_w profiled out, reweighted each step by Huber's weights on the
// residuals scaled by their median absolute deviation, so a few absurd
// reports (a paused node, an item retried) pull the fit little. Profiling s_w
// out means only the spread of n against c within one worker's samples tells
// a: samples whose n / c is the same everywhere (ranges of many items, whose
// costs average out; a job of uniform costs) say nothing of a, and the fit's
// standard error says so. The start cost used is the estimate less
// `z` standard errors, and 0 unless that is at least `min_start_cost`: the
// declared model stands until the data tell the two apart.
//
// Thread-safety: FitStartCost is a pure function; StartCostLearner is a
// value, not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ballast::balance {

// One report's finished items: `items` items of declared cost `declared`
// (CostModel units, without any start cost) took `seconds` of computing on
// `worker`.
struct CostSample {
  uint32_t worker = 0;
  uint64_t items = 0;
  double declared = 0;
  double seconds = 0;
};

struct StartCostFitOptions {
  // Fewer usable samples than this give no start cost.
  size_t min_samples = 16;
  // The start cost used is the estimate less z standard errors.
  double z = 3;
  // ... and 0 when that is below this (a fiftieth of the mean item).
  double min_start_cost = 0.02;
  // The largest start cost fitted (the declared costs then hardly matter).
  double max_start_cost = 1e3;
  // Huber's constant, in robust standard deviations.
  double huber_k = 1.345;
  int iterations = 40;
};

struct StartCostFit {
  double start_cost = 0;  // what to use: 0, or the estimate less z standard errors
  double estimate = 0;    // the fitted a, in [0, max_start_cost]
  double std_error = std::numeric_limits<double>::infinity();  // of `estimate`
  size_t samples = 0;                                          // usable samples
  bool trusted() const { return start_cost > 0; }
};

// The start cost per item that `samples` show (above). A sample with no
// items, or a declared cost or seconds not positive and finite, is skipped.
// Never fails: too few samples, or too little spread, give start_cost 0.
StartCostFit FitStartCost(std::span<const CostSample> samples,
                          const StartCostFitOptions& options = {});

// The samples of a running job, the most recent `capacity` kept, and a fit
// redone as they grow by an eighth (at least every `min_samples` / 4), so
// that a job's fits cost O(capacity) each and O(log) of them, until the
// capacity is reached, then one per capacity / 8 samples.
class StartCostLearner {
 public:
  explicit StartCostLearner(StartCostFitOptions options = {}, size_t capacity = 512);

  // Records one sample (an unusable one is ignored).
  void Add(const CostSample& sample);
  // Fits again when enough samples arrived since the last fit; returns true
  // when it did.
  bool MaybeRefit();
  const StartCostFit& fit() const { return fit_; }

 private:
  StartCostFitOptions options_;
  size_t capacity_;
  std::vector<CostSample> samples_;  // a ring once full
  size_t next_ = 0;                  // where the next sample goes once full
  size_t since_fit_ = 0;             // samples added since the last fit
  StartCostFit fit_;
};

}  // namespace ballast::balance
