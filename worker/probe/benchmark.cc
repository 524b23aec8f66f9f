#include "worker/probe/benchmark.h"

#include <vector>

#include "worker/kernels/kernel.h"

namespace ballast::worker {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Runs the unit `repetitions` times. Returns the kernel's error, if any.
Status RunUnits(kernels::Kernel& kernel, uint64_t repetitions) {
  for (uint64_t i = 0; i < repetitions; ++i) {
    BALLAST_ASSIGN_OR_RETURN(workload::Result result, kernel.Compute(balance::Range{0, 1}));
    // 1229 primes below 10'000: a kernel that skipped work would score high.
    if (result.primes().count != 1229) {
      return Status::Unavailable("benchmark: the primes kernel miscounted");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<probe::BenchmarkScore> RunBenchmark(std::chrono::milliseconds budget) {
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kPrimes;
  spec.primes.limit = probe::kBenchmarkPrimesLimit;
  spec.primes.method = workload::PrimesSpec::Method::kTrial;
  spec.items = 1;
  BALLAST_ASSIGN_OR_RETURN(std::unique_ptr<kernels::Kernel> kernel, kernels::MakeKernel(spec));
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + budget;
  BALLAST_RETURN_IF_ERROR(RunUnits(*kernel, 1));  // warm-up: caches, frequency
  const double unit = Seconds(Clock::now() - start);
  const uint64_t reps =
      probe::RepetitionsPerSample(unit, Seconds(budget), probe::kBenchmarkSamples);
  std::vector<double> rates;
  double longest = 0;
  while (static_cast<int>(rates.size()) < probe::kBenchmarkSamples) {
    const Clock::time_point begin = Clock::now();
    // Stop when the next sample, as long as the longest so far, would end
    // after the deadline; the first sample always runs.
    if (!rates.empty() && begin + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(longest)) >
                              deadline) {
      break;
    }
    BALLAST_RETURN_IF_ERROR(RunUnits(*kernel, reps));
    const double took = Seconds(Clock::now() - begin);
    longest = std::max(longest, took);
    rates.push_back(static_cast<double>(reps) / std::max(took, 1e-9));
  }
  return probe::ScoreSamples(rates, reps);
}

}  // namespace ballast::worker
