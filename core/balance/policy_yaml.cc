#include "core/balance/policy_yaml.h"

namespace ballast::balance {

StatusOr<PolicySpec> ParsePolicySpec(const config::YamlNode& node) {
  PolicySpec spec;
  if (node.IsScalar()) {
    BALLAST_ASSIGN_OR_RETURN(spec.name, node.AsString());
  } else {
    if (!node.IsMap()) return node.Error("a policy name or a map with name and options");
    BALLAST_ASSIGN_OR_RETURN(config::YamlNode name, node.Require("name"));
    BALLAST_ASSIGN_OR_RETURN(spec.name, name.AsString());
    for (const auto& [key, value] : node.Entries()) {
      if (key == "name") continue;
      if (key == "label") {
        BALLAST_ASSIGN_OR_RETURN(spec.label, value.AsString());
        continue;
      }
      BALLAST_ASSIGN_OR_RETURN(spec.options[key], value.AsString());
    }
  }
  // Check the name and the options now, so the error can name the line.
  auto policy = MakePolicy(spec);
  if (!policy.ok()) return node.Fail(policy.status().message());
  return spec;
}

}  // namespace ballast::balance
