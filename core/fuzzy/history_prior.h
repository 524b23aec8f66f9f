// The history prior: what a new job tells its policy about each node before
// anything is measured — the node's fuzzy weight (model.h), shrunk toward the
// speed the node showed in earlier jobs by the amount of that evidence.
//
// For each node i with fuzzy weight f_i and usable history (speed h_i > 0,
// weighted sample count n_i > 0, age <= max_age_seconds), the credibility of
// its history is the square-root rule of limited-fluctuation credibility,
// reduced by how much the node's speed has varied between jobs (v_i, the
// variance of its log speed from job to job; 0 when steady or unknown):
//
//   Z_i = min(1, sqrt(n_i / full_trust_samples)) / (1 + w_i / t)
//
// where w_i = v_i (1 - carry) / (1 + carry) is the variance of the history's
// speed, a mean of jobs that weighs older ones by carry (MergeJobSpeeds),
// and t the larger of spread_tolerance and how wrong the labels are as
// history shows them (the mean square of log f - log(c h) below, weighted by
// the first factor of Z): history that varies between jobs by less than the
// labels err is still trusted.
//
// History speeds are on any scale (cost units per second of some job); they
// are brought to the fuzzy weights' scale by the credibility-weighted
// geometric mean of f / h over the nodes that have both:
//
//   log c = Σ Z_i (log f_i - log h_i) / Σ Z_i
//
// and the prior is the geometric blend of the two:
//
//   log p_i = (1 - Z_i) log f_i + Z_i log(c h_i)
//
// A node without usable history (none, a speed or count that is zero,
// negative or not finite, or older than max_age_seconds) keeps p_i = f_i with
// source kProfile: never zero, never NaN. docs/history.md has a worked
// example; the caller weighs its samples (WeightedSamples: samples taken
// while a node was throttled count less) and keeps the history between jobs
// (MergeJobSpeeds).
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ballast::fuzzy {

// What is known of one node's speed from earlier jobs.
struct NodeHistory {
  std::string node;
  double speed = 0;        // relative speed, any scale (e.g. cost units per second)
  double samples = 0;      // weighted sample count (WeightedSamples)
  double age_seconds = 0;  // age of the newest sample
  // Variance of the log speed between jobs (MergeJobSpeeds keeps it); 0 when
  // the node has been steady or only one job is known.
  double spread = 0;
};

enum class PriorSource {
  kProfile,  // the fuzzy weight alone: no usable history
  kHistory,  // history alone: full credibility (Z = 1)
  kBlended,  // both, 0 < Z < 1
};

struct HistoryPriorOptions {
  // The weighted sample count at which history is trusted fully (Z = 1).
  double full_trust_samples = 10;
  // History whose newest sample is older than this is stale: ignored.
  double max_age_seconds = 7 * 24 * 3600.0;
  // How much one sample taken while the node was throttled or under-voltage
  // counts (WeightedSamples), in [0, 1].
  double throttled_weight = 0.25;
  // The variance of the log speed between jobs at which a node's history
  // counts half (0.05: a spread of about ±22 % from job to job), unless the
  // labels err by more (see above).
  double spread_tolerance = 0.05;
  // JobSamples: a report counts as a sample only for every this many
  // seconds of computing it covers (a speed measured over milliseconds says
  // more about the scheduler's time slices than about the node).
  double sample_seconds = 0.5;
  // MergeJobSpeeds: how much the evidence kept from earlier jobs counts
  // against a new job's (in [0, 1]; 0.5 halves it at each job, so a node
  // whose speed drifted is followed within a few jobs).
  double carry = 0.5;
  // MergeJobSpeeds: the most samples a node's record keeps.
  double max_samples = 1000;
};

struct NodePrior {
  std::string node;
  double value = 0;  // the prior speed, on the fuzzy weights' scale; finite, > 0
  PriorSource source = PriorSource::kProfile;
  double samples = 0;      // the history's weighted samples used (0 for kProfile)
  double age_seconds = 0;  // the history's age (0 for kProfile)
  double credibility = 0;  // Z in [0, 1]
  double spread = 0;       // the history's spread between jobs (0 for kProfile)
};

// The prior of each node. `fuzzy`: node -> fuzzy weight (> 0; a weight that
// is not a finite positive number reads as 1, the lightest weight); `history`:
// what is known, in any order (entries of nodes not in `fuzzy` are ignored;
// of two entries for one node the one with the newest sample counts).
// Options out of range are brought into it (full_trust_samples at least
// 1e-9, max_age_seconds not negative). Returns one NodePrior per fuzzy node,
// in the map's order, each value finite and within [1e-9, 1e12] (the
// policies' prior bounds, balance/policy.h); the fuzzy weight where history
// is missing or stale.
std::vector<NodePrior> BlendHistoryPrior(const std::map<std::string, double>& fuzzy,
                                         const std::vector<NodeHistory>& history,
                                         const HistoryPriorOptions& options);

// The credibility Z of `samples` weighted samples whose speed varied by
// `spread` between jobs: min(1, sqrt(samples / full_trust_samples)) / (1 +
// spread / spread_tolerance); 0 for a count that is not a finite positive
// number; a NaN or negative spread reads as 0, an infinite one gives ~0.
double Credibility(double samples, const HistoryPriorOptions& options, double spread = 0);

// The weighted sample count of `samples` samples of which `throttled` were
// taken while the node was throttled: (samples - throttled) + throttled *
// throttled_weight. Non-finite or negative counts read as 0; `throttled` is
// capped at `samples`.
double WeightedSamples(double samples, double throttled, const HistoryPriorOptions& options);

// The samples one finished job gives a node: its reports that carried
// computing time, at most one per sample_seconds of its computing:
// min(reports, busy_seconds / sample_seconds). 0 for counts that are not
// finite positive numbers.
double JobSamples(double reports, double busy_seconds, const HistoryPriorOptions& options);

// A node's measured speed in a finished job, as the coordinator estimates it:
// the declared cost of the items it finished over its computing seconds.
// Returns 0 (unknown) when either is not a finite positive number.
double MeasuredSpeed(double cost, double busy_seconds);

// The history after one more job. `measured`: that job's speeds (age 0 or
// its own), one per node that ran; `kept`: the history before it. Records
// are first brought to the new job's scale (the geometric mean of new / kept
// over the nodes in both, a job of another size having other cost units);
// then each node in both gets the log-speed average of the two weighted by
// samples, the kept ones times options.carry, its samples the sum (at most
// max_samples), the new age, and as spread the squared log difference d^2
// of the two speeds (carry * kept spread + (1 - carry) * d^2 once it has
// one); a node in one of them keeps its record (rescaled). Unusable entries (as BlendHistoryPrior
// reads them) are dropped. Returns one record per node, sorted by name.
std::vector<NodeHistory> MergeJobSpeeds(const std::vector<NodeHistory>& kept,
                                        const std::vector<NodeHistory>& measured,
                                        const HistoryPriorOptions& options);

// Returns "profile", "history" or "blended".
const char* PriorSourceName(PriorSource source);

// The largest relative error of a split in proportion to `priors` against
// one in proportion to `true_speeds` (same order and size):
// max_i |(p_i / Σp) / (s_i / Σs) - 1|. Returns 0 for empty or mismatched
// inputs or sums that are not finite positive numbers.
double SplitError(const std::vector<double>& priors, const std::vector<double>& true_speeds);

}  // namespace ballast::fuzzy
