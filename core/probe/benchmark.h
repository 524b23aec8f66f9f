// The pure half of the probe's optional micro-benchmark (docs/probe.md,
// `ballast-worker probe --benchmark`): how many repetitions of the unit of
// work a sample holds, and the score of the measured samples — their median,
// spread and the bucketed label value ballast.io/bench-score. The timing loop
// that measures the samples is worker/probe/benchmark.cc.
//
// The unit of work is the built-in primes workload's trial division (seed
// 000): counting the primes below kBenchmarkPrimesLimit on one core. A score
// is that unit's runs per second.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::probe {

inline constexpr uint64_t kBenchmarkPrimesLimit = 10'000;
inline constexpr int kBenchmarkSamples = 5;

// The score of a benchmark: units per second of each sample, summarised.
struct BenchmarkScore {
  double median = 0;         // runs per second, the median sample
  double min = 0;            // the slowest sample
  double max = 0;            // the fastest sample
  double spread = 0;         // (max - min) / median; 0 for one sample
  int samples = 0;           // samples measured
  uint64_t repetitions = 0;  // units of work in each sample
  std::string bucket;        // the label value: median on the E6 series
};

// Repetitions of the unit in each of `samples` samples so that they together
// take about `share` of `budget_seconds`, given one warm-up unit took
// `unit_seconds`. Returns at least 1 (also for a unit slower than the budget,
// or non-positive or non-finite inputs), at most 1'000'000.
uint64_t RepetitionsPerSample(double unit_seconds, double budget_seconds, int samples,
                              double share = 0.8);

// The score of `rates` (units per second of each sample) with `repetitions`
// units per sample. Returns Invalid when `rates` is empty or a rate is not a
// finite positive number (naming its index).
StatusOr<BenchmarkScore> ScoreSamples(const std::vector<double>& rates, uint64_t repetitions);

// `score` rounded to the nearest value, on a log scale, of the E6 series
// (1, 1.5, 2.2, 3.3, 4.7, 6.8 times a power of ten), written as a valid label
// value: "4.7", "22", "1500", "0.068". Neighbouring values are about 1.47x
// apart, so a node's bucket only changes when its median moves by about
// a fifth (less at a bucket's edge). Returns "" for a score that is not a
// finite positive number; values are clamped to [0.001, 1e9].
std::string BucketScore(double score);

}  // namespace ballast::probe
