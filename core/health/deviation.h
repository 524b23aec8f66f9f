// Deviation from a node's own baseline: whether a finished job measured a
// node significantly below what its history says that node does (a weak power
// supply, heat, a worn SD card), and how that job then enters the history
// (docs/history.md, "A node below its own baseline").
//
// History speeds are on any scale (the operator's store keeps them relative
// to each job's mean, `ballast run --history` on the scale of its last job),
// so the baseline is brought to this job's scale by the other nodes: for node
// i, the median over the reference nodes j != i of log(measured_j /
// history_j). A reference node is one that could be judged itself (usable
// history, enough computing, not shared). Leaving node i out means a slow node
// does not drag its own baseline down; the median means one other slow node
// does not either (with three or more references). With exactly two, node
// i's own ratio joins them: their median would be their mean, and the median
// of the three is moved by no one board apart from the other two.
//
//   ratio_i    = measured_i / baseline_i
//   sigma_i^2  = max(spread_i, mean_j spread_j) / (1 - 1/n) * (1 + pi / (2 m))
//                + v_i + pi / (2 m) * mean_j v_j
//   slow_below = min(slow_ratio, exp(-band_sigmas * sigma_i))
//
// with spread the variance of log speed between jobs that MergeJobSpeeds
// keeps (measured against the mean of all n = m + 1 nodes, which hides 1/n of
// it), m the references (their median adds pi / (2 m) of a node's variance;
// 1 / m for one or two), and v the variance this job's own measurement
// carries (JobMeasurement::log_variance: items whose real costs scatter
// around their declared costs, measurement_noise.h).
//   verdict    = Slow   when ratio_i < slow_below
//                Normal otherwise; `fast` noted when ratio_i > max(fast_ratio,
//                exp(band_sigmas * sigma_i))
//
// No verdict (kNone, with a reason) for a node without usable history, with
// too few weighted samples in it, computing less than min_busy_seconds in the
// job, shared with another job's workers for more than max_shared_fraction of
// the run (history::kMaxSharedFraction: its speed was its share of the node),
// or without enough reference nodes to set the scale.
//
// A Slow job enters the history winsorized (EnterJob): at the edge of the
// band, with all its samples, leaving the node's spread as it was. One bad
// day, however bad, moves the baseline by at most about a half of the band
// (to 0.865 of itself with the defaults and a steady history); a lasting
// change is flagged for a few jobs in a row, each moving the baseline as
// far, until the measurement is within the band, is Normal, and enters as
// it is. The node keeps its samples, so its history keeps its credibility
// as the next job's prior (fuzzy::BlendHistoryPrior).
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/fuzzy/history_prior.h"

namespace ballast::health {

enum class Verdict {
  kNone,    // not judged: `reason` says why
  kNormal,  // within the baseline's band, or above it (`fast`)
  kSlow,    // significantly below the baseline
};

// Returns "none", "normal" or "slow".
const char* VerdictName(Verdict verdict);

struct DeviationOptions {
  // Slow below this ratio to the baseline (and below the history's band).
  double slow_ratio = 0.75;
  // The band around the baseline, in standard deviations of the log ratio.
  double band_sigmas = 3;
  // Above this ratio (and the band) a Normal verdict is noted as fast.
  double fast_ratio = 1.25;
  // Fewer computing seconds in the job: no verdict (noise).
  double min_busy_seconds = 5;
  // History with fewer weighted samples: no verdict (a static policy gives
  // a node one report, one sample, a job).
  double min_history_samples = 1;
  // History whose newest sample is older: no verdict.
  double max_age_seconds = 7 * 24 * 3600.0;
  // Shared with other jobs' workers for more of the run: no verdict.
  double max_shared_fraction = 0.25;
  // Other judged nodes needed to bring the baseline to the job's scale.
  size_t min_reference_nodes = 2;
};

// What one finished job measured on a node.
struct JobMeasurement {
  std::string node;
  double speed = 0;            // cost units per busy second (fuzzy::MeasuredSpeed)
  double busy_seconds = 0;     // computing seconds in the job
  double shared_fraction = 0;  // of the job's run, in [0, 1]
  // The variance of log(speed) that the job's own measurement carries
  // (health::MeasurementNoise; 0: exact declared costs).
  double log_variance = 0;
  // What brings `speed` to the job's common item size when items' costs do
  // not grow as their declared costs (health::MeasurementNoise; 1: they do).
  // The node is judged at speed * size_factor.
  double size_factor = 1;
  // The variance that factor's slope adds when the node is judged against
  // the others (health::NodeMeasurementNoise::size_variance; 0: none).
  double size_variance = 0;
};

// Reasons for kNone.
inline constexpr const char* kNoMeasurement = "no-measurement";
inline constexpr const char* kNoHistory = "no-history";
inline constexpr const char* kStaleHistory = "stale-history";
inline constexpr const char* kFewSamples = "few-history-samples";
inline constexpr const char* kShortComputing = "short-computing";
inline constexpr const char* kShared = "shared";
inline constexpr const char* kNoReference = "no-reference-nodes";

struct NodeDeviation {
  std::string node;
  Verdict verdict = Verdict::kNone;
  std::string reason;               // for kNone, one of the reasons above; else ""
  bool fast = false;                // kNormal and well above the baseline
  double measured = 0;              // this job's speed, cost units per busy second, at
                                    // the job's common item size (speed * size_factor)
  double size_factor = 1;           // JobMeasurement::size_factor, as used
  double baseline = 0;              // the history on this job's scale (0: none)
  double ratio = 0;                 // measured / baseline (0: none)
  double spread = 0;                // the node's history spread (variance of log speed)
  double measurement_variance = 0;  // JobMeasurement::log_variance, as used
  double slow_below = 0;            // the ratio under which it is Slow (0: not judged)
  double busy_seconds = 0;          // as measured
  double history_samples = 0;       // weighted samples of the history (0: none)
  size_t references = 0;            // reference nodes that set the scale
};

// What JudgeDeviations judges each node of `history` against: its newest
// entry whose speed and samples are usable (its age at least 0), by node.
std::map<std::string, fuzzy::NodeHistory> BaselineByNode(
    const std::vector<fuzzy::NodeHistory>& history);

// One NodeDeviation per entry of `measured`, in its order. `history`: what
// is known, in any order and scale (duplicates: the newest counts; entries
// that are not usable as fuzzy::BlendHistoryPrior reads them are ignored).
// Options out of range are brought into it (NaN reads as the default).
std::vector<NodeDeviation> JudgeDeviations(const std::vector<fuzzy::NodeHistory>& history,
                                           const std::vector<JobMeasurement>& measured,
                                           const DeviationOptions& options);

// One line for a log, an Event or a report, e.g. "pi4b-1 ran at 0.52 of its
// baseline (measured 410.0, baseline 790.0 cost units/s, band ±12 %, 38.0 s
// computing): slow"; "pi3b-0: no verdict (short-computing: 1.2 s < 5 s)".
std::string DescribeDeviation(const NodeDeviation& deviation, const DeviationOptions& options);

// The history after one more job, as fuzzy::MergeJobSpeeds makes it, but
// for the nodes `deviations` judged Slow: their speed enters winsorized, as
// if the job had measured them at the edge of the band (the kept speed times
// their slow_below) with all their samples, and their spread is left as it
// was. The scale that brings the kept history to the job's is set by the
// other nodes only. `measured`: the job's speeds as MergeJobSpeeds takes
// them (samples from fuzzy::JobSamples). Returns one record per node,
// sorted by name.
std::vector<fuzzy::NodeHistory> EnterJob(const std::vector<fuzzy::NodeHistory>& kept,
                                         const std::vector<fuzzy::NodeHistory>& measured,
                                         const std::vector<NodeDeviation>& deviations,
                                         const fuzzy::HistoryPriorOptions& history_options);

// The speeds a store that keeps each job's speeds as samples should record
// (the operator's ConfigMap store, history/speed_store.h, which keeps them
// relative to the job's mean and no spread): `speeds` (node -> cost units
// per busy second), each node `deviations` judged Slow raised to the edge of
// its band (baseline * slow_below, when the measurement is below it), as
// EnterJob enters it; the others as they are. The job's mean then is what it
// would have been had the job measured the slow node at the edge. A node of
// `speeds` that `deviations` does not judge Slow is unchanged.
std::map<std::string, double> WinsorizeSpeeds(const std::map<std::string, double>& speeds,
                                              const std::vector<NodeDeviation>& deviations);

}  // namespace ballast::health
