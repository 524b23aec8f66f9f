// RunBudget: how many runs an exec job's command may spend on one worker,
// for the whole job, repeating what failed — the job's retries of an item,
// and the halving of a failed range to find the items that fail alone
// (exec_kernel.cc's Narrow, which has a budget of its own per step).
//
// A command that has failed every run so far on this worker may repeat
// failed runs until kMaxFruitlessRuns of its runs have failed; from then on
// it is taken to fail for every item, and nothing it fails is run again:
// each range runs once and is recorded failed whole, each item once. So a
// command that fails for every item costs at most kMaxFruitlessRuns runs
// and one run a step on a worker, whatever the number of steps, where a
// per-step budget let it spend up to 128 runs every step. One run that
// succeeds (exit 0, or a result file that names the items that failed)
// lifts the bound for good: the command works for some items, and finding
// those that fail is worth their runs.
//
// Thread-safety: every member may be called from any thread (the kernel's
// steps run on several).
#pragma once

#include <atomic>
#include <cstdint>

namespace ballast::kernels {

class RunBudget {
 public:
  // Failed runs, with none succeeded, after which no failure is repeated.
  static constexpr uint64_t kMaxFruitlessRuns = 128;

  // Whether `runs` more runs may be spent repeating a failure: true once a
  // run has succeeded, else while the failed runs and `runs` stay within
  // kMaxFruitlessRuns.
  bool MayRepeat(uint64_t runs = 1) const {
    return succeeded_.load() || failed_.load() + runs <= kMaxFruitlessRuns;
  }

  // Notes one run's outcome.
  void Note(bool succeeded) {
    if (succeeded) {
      succeeded_.store(true);
    } else {
      failed_.fetch_add(1);
    }
  }

 private:
  std::atomic<uint64_t> failed_{0};
  std::atomic<bool> succeeded_{false};
};

}  // namespace ballast::kernels
