// ProfileFromJson: a WeightProfile custom resource as the Kubernetes API
// server hands it over (a JSON object), read into the same Profile that
// ParseProfile reads from YAML, with the same rules. Errors name the field's
// path and what was there:
//
//   spec.criteria[1].rank: expected a number > 0, got "high"
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {

// The profile of `object` ({apiVersion, kind, metadata: {name}, spec}; other
// top-level keys a server adds, such as status, are ignored). Returns Invalid
// naming the path for a wrong apiVersion or kind, a missing name, an unknown
// key in spec or a criterion, a wrong type, a rank or number <= 0, an unknown
// term, duplicate criterion names or no criteria.
StatusOr<Profile> ProfileFromJson(const nlohmann::json& object);

}  // namespace ballast::fuzzy
