// The run-to-run history of `ballast run --history FILE` and `ballast bench
// --history`: what earlier runs measured becomes the next run's prior through
// fuzzy::BlendHistoryPrior, and each run's measured speeds are merged back
// (fuzzy::MergeJobSpeeds), per workload kind (docs/history.md).
//
// Thread-safety: the file functions do I/O on the calling thread; the rest
// are pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/run/local_runner.h"
#include "core/common/status.h"
#include "core/fuzzy/history_file.h"
#include "core/fuzzy/history_prior.h"
#include "core/fuzzy/model.h"
#include "core/health/deviation.h"

namespace ballast::cli {

// The file at `path`; an empty history when it does not exist. Invalid
// (naming the file and field) for a file that does not parse, Unavailable
// when it cannot be read.
StatusOr<fuzzy::HistoryFile> LoadHistory(const std::string& path);

// Writes the file (to a temporary file beside it, then renamed over it).
Status SaveHistory(const std::string& path, const fuzzy::HistoryFile& file);

// The priors of a run of a `kind` job on nodes of these fuzzy weights, at
// `now` (Unix seconds): one per node, in the weights' order.
std::vector<fuzzy::NodePrior> RunPriors(const fuzzy::WeightResult& weights,
                                        const fuzzy::HistoryFile& file, const std::string& kind,
                                        int64_t now, const fuzzy::HistoryPriorOptions& options);

// Each node's deviation from its own baseline, the history of `kind` in
// `file` at `now` (health::JudgeDeviations, default options), in the order
// of the run's workers; its measured speed as Learn takes it.
std::vector<health::NodeDeviation> JudgeRun(const fuzzy::HistoryFile& file, const std::string& kind,
                                            const LocalRunOutcome& outcome, int64_t now);

// The history with a finished run's measured speeds merged in: each node's
// declared cost over its computing seconds (verification's recomputations
// left out), its samples fuzzy::JobSamples of its reports and computing
// seconds, measured at `now`; a node `deviations` judged Slow enters
// winsorized (health::EnterJob).
fuzzy::HistoryFile Learn(const fuzzy::HistoryFile& file, const std::string& kind,
                         const LocalRunOutcome& outcome, int64_t now,
                         const fuzzy::HistoryPriorOptions& options,
                         const std::vector<health::NodeDeviation>& deviations = {});

// "history 12.3 (12 samples, 5 s old)", "blended 4.1 (Z 0.55, ...)" or
// "profile 5": a prior for the run's table.
std::string DescribePrior(const fuzzy::NodePrior& prior);

}  // namespace ballast::cli
