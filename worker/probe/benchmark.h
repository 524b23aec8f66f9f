// The probe's optional micro-benchmark (`ballast-worker probe --benchmark`,
// docs/probe.md): times the built-in primes workload's trial-division kernel
// on the calling thread (one core) — one warm-up unit, then
// probe::kBenchmarkSamples samples of a calibrated number of units — and
// scores the samples with probe::ScoreSamples.
//
// Thread-safety: RunBenchmark runs on the calling thread only and keeps no
// state; it keeps that thread's core busy for about `budget`.
#pragma once

#include <chrono>

#include "core/common/status.h"
#include "core/probe/benchmark.h"

namespace ballast::worker {

// Measures the node. The whole takes about `budget` (at most two units of
// work more on a node where one unit exceeds the budget); fewer samples are
// taken when the budget runs out, never fewer than one. Returns Unavailable
// when the kernel fails, and the score otherwise.
StatusOr<probe::BenchmarkScore> RunBenchmark(std::chrono::milliseconds budget);

}  // namespace ballast::worker
