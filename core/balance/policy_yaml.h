// ParsePolicySpec: a policy as jobs and scenarios write it, a name or a map
//   adaptive
//   {name: selfsched, chunk: 8}
//   {name: adaptive, label: no-comp, compensation: none}
//
// Thread-safety: a pure function.
#pragma once

#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/config/yaml_node.h"

namespace ballast::balance {

// Returns the spec, or Invalid naming the line when the form is wrong or the
// policy or one of its options is unknown or out of range.
StatusOr<PolicySpec> ParsePolicySpec(const config::YamlNode& node);

}  // namespace ballast::balance
