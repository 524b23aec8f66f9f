// The parts of a WeightedJob's status that are plain data: conditions in the
// metav1.Condition shape, and the merge patch that turns one status into
// another.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ballast::controller {

struct Condition {
  std::string type;  // Ready, Progressing, Complete, Failed, Suspended
  bool status = false;
  std::string reason;  // CamelCase
  std::string message;
};

// Sets `condition` in status["conditions"] with observedGeneration
// `generation`; lastTransitionTime becomes `now` only when the condition is
// new or its status flips. Returns true when anything changed.
bool SetCondition(nlohmann::json& status, const Condition& condition, int64_t generation,
                  const std::string& now);

// True when status["conditions"] has `type` with status "True".
bool ConditionTrue(const nlohmann::json& status, const std::string& type);

// The JSON merge patch {"status": ...} that turns `from` into `to`: every
// top-level key of `to` whose value differs, and null for keys `from` has
// and `to` has not. Empty object when they are equal.
nlohmann::json StatusPatch(const nlohmann::json& from, const nlohmann::json& to);

// "42%": completed / items rounded down, "100%" only when all are done.
std::string ProgressText(uint64_t completed, uint64_t items);

}  // namespace ballast::controller
