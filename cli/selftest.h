// `ballast selftest` without the network: the WeightedJob it submits, the
// answer it expects (computed here, by a sieve of its own, independent of the
// workers' kernels), and the verdict on the job as the API server returns it.
// cli/selftest_command.cc only carries these to and from the API server.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/status.h"
#include "core/workload/result.h"

namespace ballast::cli::selftest {

// The limits of --limit: a sieve of 10^8 bits is 12.5 MB, a second of work
// here and a few on a Raspberry Pi.
inline constexpr uint64_t kMinLimit = 2;
inline constexpr uint64_t kMaxLimit = 100'000'000;

struct Spec {
  std::string ns = "default";                        // where the job runs
  std::string name = "ballast-selftest";             // the WeightedJob's name
  std::string profile = "raspberry-pi";              // its spec.profile
  uint64_t limit = 20000;                            // it counts the primes below this
  std::map<std::string, std::string> node_selector;  // its spec.nodeSelector
  int timeout_seconds = 300;                         // how long to wait; also the job's deadline
};

// Returns Ok, or Invalid naming the flag that is wrong (--name and
// --namespace must be DNS-1123 labels, --profile a DNS-1123 subdomain,
// --limit in [kMinLimit, kMaxLimit], --timeout > 0, node-selector keys
// non-empty).
Status Validate(const Spec& spec);

// The WeightedJob that counts the primes below spec.limit by trial division
// with the adaptive policy; its deadline is the timeout and it deletes
// itself 10 minutes after it finishes, in case the selftest dies before it
// deletes the job. Requires Validate(spec) to be Ok.
nlohmann::json Job(const Spec& spec);

// The primes below `limit` (count and sum mod 2^64) by a sieve of
// Eratosthenes. Requires kMinLimit <= limit <= kMaxLimit.
workload::Result ExpectedPrimes(uint64_t limit);

enum class Verdict {
  kWaiting,  // not finished yet
  kPassed,   // Succeeded with the expected result
  kFailed,   // Failed, or Succeeded with another result, or a malformed one
};

struct Assessment {
  Verdict verdict = Verdict::kWaiting;
  // kWaiting: the progress line ("Running 42% (63000/150000 items), 3
  // workers"); kPassed: what matched; kFailed: what differed or why it failed.
  std::string message;
};

// The verdict on `job` (a WeightedJob as the API server returns it) against
// `expected`. Never fails: a status it cannot read is kFailed saying which
// field is wrong.
Assessment Assess(const nlohmann::json& job, const workload::Result& expected);

}  // namespace ballast::cli::selftest
