// The seed of a randomized test: BALLAST_TEST_SEED when set (to replay a
// failure the test printed), otherwise a fresh one. Header-only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>

namespace ballast::testing_support {

inline uint64_t TestSeed() {
  if (const char* env = std::getenv("BALLAST_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

}  // namespace ballast::testing_support
