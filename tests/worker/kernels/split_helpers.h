// Test helpers for the kernels: compute a whole job by random sub-ranges, on
// one thread or several, and merge the parts as the coordinator would.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "worker/kernels/kernel.h"

namespace ballast::kernels::testing {

// Cuts [0, items) into random contiguous ranges of 1 to max_size items.
inline std::vector<balance::Range> RandomSplit(uint64_t items, uint64_t max_size,
                                               std::mt19937_64& random) {
  std::vector<balance::Range> ranges;
  for (uint64_t begin = 0; begin < items;) {
    const uint64_t size = 1 + random() % max_size;
    const uint64_t end = begin + size < items ? begin + size : items;
    ranges.push_back({begin, end});
    begin = end;
  }
  std::shuffle(ranges.begin(), ranges.end(), random);
  return ranges;
}

// Computes every range on `threads` threads (each takes the next range) and
// merges the results; fails the test on any error.
inline workload::Result ComputeAll(Kernel& kernel, workload::WorkloadKind kind,
                                   const std::vector<balance::Range>& ranges, int threads) {
  std::vector<workload::Result> parts(ranges.size(), workload::Result::Empty(kind));
  std::vector<Status> errors(ranges.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < ranges.size(); i = next++) {
        auto result = kernel.Compute(ranges[i]);
        if (result.ok()) {
          parts[i] = std::move(result).value();
        } else {
          errors[i] = result.status();
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  workload::Result total = workload::Result::Empty(kind);
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_TRUE(errors[i].ok()) << ranges[i].ToString() << ": " << errors[i].ToString();
    EXPECT_TRUE(total.Merge(parts[i]).ok());
  }
  return total;
}

// A fresh random seed, printed so that a failure can be replayed.
inline uint64_t PrintedSeed(const char* test) {
  const uint64_t seed = std::random_device{}();
  std::printf("%s seed=%llu\n", test, static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace ballast::kernels::testing
