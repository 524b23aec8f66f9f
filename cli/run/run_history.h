// The run-to-run history of `ballast run --history FILE` and `ballast bench
// --history`, kept as the operator keeps it: the file is the operator's store
// (history/speed_store.h, history/history_file.h), each run's speeds recorded
// relative to the run's mean under the job's history key, and each run's
// prior fuzzy::BlendHistoryPrior of the fuzzy weights and
// history::LookupHistory of the store (docs/history.md).
//
// Thread-safety: the file functions do I/O on the calling thread; the rest
// are pure.
#pragma once

#include <string>
#include <vector>

#include "cli/run/local_runner.h"
#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/fuzzy/model.h"
#include "core/health/deviation.h"
#include "core/history/history_key.h"
#include "core/history/speed_store.h"

namespace ballast::cli {

// The store in the file at `path` (history::ReadHistoryFile: the store's form,
// or the earlier form converted); an empty store when it does not exist.
// Invalid (naming the file and field) for a file that does not parse, is
// larger than history::kMaxHistoryFileBytes or is not a regular file (a
// directory, a FIFO, a device: ReadFile), Unavailable when a read fails.
StatusOr<history::SpeedStore> LoadHistory(const std::string& path);

// Writes the store in its text form within history::StoreLimits{}'s bytes
// (history::StoreToText; to a temporary file beside it, then renamed over it),
// saying in `*left_out` (when given) the stalest entries left out to fit.
// Unavailable when it cannot be written.
Status SaveHistory(const std::string& path, const history::SpeedStore& store,
                   history::LeftOut* left_out = nullptr);

// The prior options of a run: the defaults, but trusted fully at
// history::kFullTrustJobs samples, as the operator's store is (a sample is a
// job).
fuzzy::HistoryPriorOptions RunPriorOptions();

// The priors of a run of a job kept under `key` on nodes of these fuzzy
// weights, at `now` (Unix seconds): one per node, in the weights' order.
std::vector<fuzzy::NodePrior> RunPriors(
    const fuzzy::WeightResult& weights, const history::SpeedStore& store,
    const history::HistoryKey& key, double now,
    const fuzzy::HistoryPriorOptions& options = RunPriorOptions());

// Each node's deviation from its own baseline, the store's history of `key`
// at `now` (health::JudgeDeviations, default options), in the order of the
// run's workers: what the operator judges a finished job by.
std::vector<health::NodeDeviation> JudgeRun(const history::SpeedStore& store,
                                            const history::HistoryKey& key,
                                            const LocalRunOutcome& outcome, double now);

// The store with a finished run recorded under `key` at `now` as the operator
// records a job: the speeds coordinator::SpeedsToRecord keeps (each node's
// declared cost over its computing seconds, verification's recomputations
// left out; not a node computing under 0.5 s, nor one shared with another
// job), those `deviations` judged Slow winsorized (health::WinsorizeSpeeds),
// then history::RecordJob. Unchanged when fewer than two nodes are kept.
history::SpeedStore Learn(const history::SpeedStore& store, const history::HistoryKey& key,
                          const LocalRunOutcome& outcome, double now,
                          const std::vector<health::NodeDeviation>& deviations = {});

// "history 12.3 (Z 1.00, 3 samples, 5 s old)", "blended 4.1 (Z 0.55, ...)" or
// "profile 5": a prior for the run's table.
std::string DescribePrior(const fuzzy::NodePrior& prior);

}  // namespace ballast::cli
