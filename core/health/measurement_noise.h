// The noise a job's own measurement of a node's speed carries. A node's
// speed is measured as the declared cost it finished over its computing
// seconds; when declared costs misstate what items really cost (archive
// sizes for a compressor that works harder on text than on noise), the
// speed follows the items a node drew as much as the node. A board that drew
// a few of the dearest items measures at half the speed of an equal board,
// and a baseline judged without that noise names a healthy board slow.
//
// The job measures the noise itself: every report that hands in finished
// items is one sample, the declared cost it merged over the computing seconds
// since the worker's previous such report, and the sum of its items' costs
// squared (q_k; c_k^2 for one item): z_k = q_k / c_k is its items' size
// (cost-weighted), which the size slope below is measured in. For node i
// with samples (c_k, t_k):
//
//   r_k      = log(c_k / t_k) - m_i       m_i: the median of log(c_k / t_k)
//                                          over node i's samples
//   sigma    = 1.4826 * median |r_k| * sqrt(K / (K - N)), pooled over the
//              K samples of the N nodes with two samples or more (one
//              throttled board's two speeds do not make the scatter; a node
//              of one sample tells none; a node's own median takes one
//              degree of freedom). Every sample counts once: weighted by
//              cost, the few dearest items would be their nodes' medians
//              and the scatter would read as none. (Brought to one item's,
//              dividing by sqrt(q_k / c_k^2), a short job's timing noise in
//              reports of thousands of items read as a large scatter and hid
//              a board throttled to 0.34 on the e2e bed.)
//   n_eff_i  = (sum c_k)^2 / sum c_k^2     (a node whose work was one item: 1)
//   variance_i = (exp(sigma^2) - 1) / n_eff_i
//
// the variance of node i's measured speed (relative; a ratio of sums of
// log-normal costs) that the items' scatter explains.
// health::JobMeasurement::log_variance widens the band a node is judged in
// by it. With declared costs that state items' costs (primes, thumbnails),
// sigma is a few percent and little changes. Tested on jobs of Pareto-sized
// items whose costs scatter by exp(0.6 N(0, 1)): 163 false alarms in 1,500
// verdicts without it, 2 with it (tests/core/health/measurement_noise_test.cc).
//
// A misstatement that follows the declared size is steady within a node and
// no scatter: when the largest archives are text and cost more per declared
// byte than the small ones, the boards dealt the largest measure slow every
// time. The nodes share it, so the job measures it too, as the slope of log
// speed in log item size within each node:
//
//   gamma    = the median over nodes of each node's median, over pairs of
//              its samples whose items' sizes differ by 2x or more, of
//              (y_k - y_l) / (x_k - x_l), with x = log z, y = log(c / t);
//              a node votes with 20 such pairs or more; 0 with fewer than
//              two votes; of an even count's middle two, the one nearer 0
//              (0 when they differ in sign); held to [-0.5, 0.5] (a cost
//              that grows as declared^0.5 to declared^1.5); 0 when less
//              than twice its doubt (below) from every node's vote: a slope
//              of mixed items, applied to a board whose items lie apart,
//              can point either way (a real-node round read x0.58 for a
//              board of the three largest archives)
//
// (Theil-Sen within nodes: a node's own speed cancels in each pair; a board
// throttled mid-job, whose late small items run slow, is outvoted). If an
// item of declared cost c costs c^(1 - gamma) / s_i on node i, the node's
// measured speed sum c / sum t is s_i * sum c / sum c z^-gamma, and its
// speed at a common item size c_0 is s_i * c_0^gamma; so
//
//   factor_i = c_0^gamma * sum c z^-gamma / sum c   (over node i's samples)
//
// brings the measured speed to items of one size, c_0 chosen so that the
// factors' geometric mean over the nodes with samples is 1 (the job's scale
// kept). The residuals r_k above are then taken around y - gamma x.
//
// The slope is known only as surely as the nodes agree on it, and an error
// in it moves a node's speed by that error times how far the node's item
// sizes lie from the others'. recompress's archives are text, whose cost
// per byte rises with size, and one in seven random bytes, whose cost per
// byte falls. A board that ran only the three largest archives read 0.47
// of an equal board on the real-node bench, and replayed from each
// archive's CPU time with that deal, the other two boards' slopes come out
// -0.18 and +0.27. So a node's speed also carries the slope's doubt over
// that distance:
//
//   apart_i  = |xbar_i - xbar_others|, xbar = sum c log z / sum c (node i's
//              samples; the other nodes' pooled)
//   doubt_i  = from the other nodes' votes (node i's own aside: a board
//              throttled mid-job votes oddly): with two or more, the larger
//              of their robust spread and their median standard error (a
//              vote's pairs' robust spread over the square root of its
//              samples); with one, its pairs' robust spread (how much the
//              slope depends on the items: about 0 where costs state items'
//              costs); with none, sigma (how far the reports scatter
//              bounds how far a slope could move a node); never more than
//              kSizeSlopeDoubt with fewer than two
//   d_i      = max(0, xbar_i - x_hi, x_lo - xbar_i), [x_lo, x_hi]: log z
//              over the voting nodes' samples
//   size_variance_i = (doubt_i * apart_i)^2 + (kSizeSlopeDoubt * d_i)^2
//
// (the second term: outside the sizes the slope was measured over it may
// be anything it is held to). Because a slope's error moves every node
// together, size_variance counts for the node judged and not again for the
// nodes it is judged against (health::JobMeasurement::size_variance). With
// costs that state items' costs, the votes agree near 0 and it is about 0.
// Figures (tests/core/health/measurement_noise_test.cc, 500 healthy jobs):
// items that cost (declared / mean)^0.3 more per declared unit with exp(0.3
// N) of scatter, 252 false alarms in 1,500 verdicts judged as if the costs
// were exact, 9 with the scatter alone, 0 with the slope; text among noise
// dealt as that bench round, 490 of 500 jobs named the healthy board slow
// as if exact, 1 with the slope's doubt; the same with the other boards'
// reports of ten items, 282 with sizes by reports, 77 by items.
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace ballast::health {

// One report's finished work: its declared cost (> 0), the computing
// seconds it took (> 0), and the sum of the squares of its items' declared
// costs (balance::CostModel::SquaredCost; 0: one item, cost^2). A report of
// many items averages their costs' misstatements: squares / cost is its
// items' size (cost-weighted), squares / cost^2 the share of one item's
// scatter it keeps.
struct SpeedSample {
  double cost = 0;
  double busy_seconds = 0;
  double squares = 0;
};

// Fewer pooled samples (of nodes with two or more): sigma is 0 (unknown;
// judged as if the costs were exact, as before this was measured).
inline constexpr size_t kMinScatterSamples = 6;

// Pairs of a node's samples (costs 2x apart or more) it needs for a slope of its own.
inline constexpr size_t kMinSlopePairs = 20;
// A slope smaller than this many times its doubt (from every vote) is taken
// as 0.
inline constexpr double kSlopeSignificance = 2;
// The slope is held to [-kMaxSizeSlope, kMaxSizeSlope].
inline constexpr double kMaxSizeSlope = 0.5;
// The standard deviation of a slope not measured: outside the sizes it was
// measured over, or where no other node voted (about that of a uniform
// slope on +-kMaxSizeSlope).
inline constexpr double kSizeSlopeDoubt = 0.25;

// gamma above (0 when unknown). Samples that are not finite or not positive
// are ignored here and below.
double SizeSlope(const std::vector<std::vector<SpeedSample>>& per_node);

// The pooled sigma above around log speeds less `slope` times log cost (0
// when unknown).
double CostScatter(const std::vector<std::vector<SpeedSample>>& per_node, double slope = 0);

// What the job's own samples say of one node's measured speed.
struct NodeMeasurementNoise {
  double speed_factor = 1;  // factor_i above (1 for a node without samples)
  double log_variance = 0;  // variance_i above (0 without samples or sigma)
  // The variance the slope's doubt adds to this node's speed brought to the
  // others' item sizes (size_variance_i above): an error of the slope moves
  // every node's speed together, so it counts for the node judged, not
  // again for the nodes it is judged against.
  double size_variance = 0;
};

// One per entry of `per_node` in its order, with the job's gamma and sigma.
std::vector<NodeMeasurementNoise> MeasurementNoise(
    const std::vector<std::vector<SpeedSample>>& per_node);

// Adds `sample` to `samples`, at most `cap` long: past it, the last sample
// absorbs the new one (their costs and seconds summed), as a coarser sample
// of the same work.
void AddSpeedSample(std::vector<SpeedSample>& samples, SpeedSample sample, size_t cap = 1024);

}  // namespace ballast::health
