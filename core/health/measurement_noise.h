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
// since the worker's previous such report. For node i with samples (c_k, t_k):
//
//   r_k      = log(c_k / t_k) - m_i       m_i: the median of log(c_k / t_k)
//                                          over node i's samples
//   sigma    = 1.4826 * median |r_k| * sqrt(K / (K - N)), pooled over the
//              K samples of the N nodes with two samples or more (one
//              throttled board's two speeds do not make the scatter; a node
//              of one sample tells none; a node's own median takes one
//              degree of freedom). Every sample counts once: weighted by
//              cost, the few dearest items would be their nodes' medians
//              and the scatter would read as none.
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
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace ballast::health {

// One report's finished work: its declared cost (> 0) and the computing
// seconds it took (> 0).
struct SpeedSample {
  double cost = 0;
  double busy_seconds = 0;
};

// Fewer pooled samples (of nodes with two or more): sigma is 0 (unknown;
// judged as if the costs were exact, as before this was measured).
inline constexpr size_t kMinScatterSamples = 6;

// The pooled sigma above (0 when unknown). Samples that are not finite or
// not positive are ignored.
double CostScatter(const std::vector<std::vector<SpeedSample>>& per_node);

// variance_i above, one per entry of `per_node` in its order (0 for a node
// without samples or when sigma is unknown).
std::vector<double> MeasurementVariances(const std::vector<std::vector<SpeedSample>>& per_node);

// Adds `sample` to `samples`, at most `cap` long: past it, the last sample
// absorbs the new one (their costs and seconds summed), as a coarser sample
// of the same work.
void AddSpeedSample(std::vector<SpeedSample>& samples, SpeedSample sample, size_t cap = 1024);

}  // namespace ballast::health
