// PolicyNamed and ReadPolicy: a PolicySpec as a test writes it, its options
// typed as a command line's `name:key=value` or a YAML file's plain values
// would be ("8" a number, "false" a boolean, "none" a string), read by the
// one reader of policies (balance::PolicyFromJson).
//
// Thread-safety: pure functions.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/balance/policy_options.h"
#include "core/config/document.h"

namespace ballast::testing_support {

inline StatusOr<balance::PolicySpec> ReadPolicy(
    const std::string& name, const std::map<std::string, std::string>& options = {},
    const std::string& label = "") {
  nlohmann::json node = {{"name", name}};
  for (const auto& [key, value] : options) node[key] = config::ResolvePlainScalar(value);
  if (!label.empty()) node["label"] = label;
  return balance::PolicyFromJson(node, "policy");
}

// The policy; a test failure (and adaptive's defaults) when it does not read.
inline balance::PolicySpec PolicyNamed(const std::string& name,
                                       const std::map<std::string, std::string>& options = {},
                                       const std::string& label = "") {
  auto spec = ReadPolicy(name, options, label);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : balance::PolicySpec{};
}

}  // namespace ballast::testing_support
