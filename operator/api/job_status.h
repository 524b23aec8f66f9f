// The parts of a WeightedJob's status that are plain data: the merge patch
// that turns one status into another, and the progress text. (The typed
// status and its conditions: weighted_job.h.)
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ballast::api {

// The JSON merge patch {"status": ...} that turns `from` into `to`: every
// top-level key of `to` whose value differs, and null for keys `from` has
// and `to` has not. Empty object when they are equal.
nlohmann::json StatusPatch(const nlohmann::json& from, const nlohmann::json& to);

// "42%": completed / items rounded down, "100%" only when all are done.
std::string ProgressText(uint64_t completed, uint64_t items);

}  // namespace ballast::api
