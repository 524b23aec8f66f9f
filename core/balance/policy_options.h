// PolicySpec: a policy's name and its options, as a job or scenario selects it
//   policies: [adaptive, {name: selfsched, chunk: 8}, {name: adaptive, label: no-comp,
//   compensation: none}]
// and the factory that builds a Policy from it.
//
// Thread-safety: values and a pure factory.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/balance/policy.h"
#include "core/common/status.h"

namespace ballast::balance {

struct PolicySpec {
  std::string name;
  // How results are labelled; defaults to the name.
  std::string label;
  // Option name -> value as written (numbers and words).
  std::map<std::string, std::string> options;

  const std::string& display() const { return label.empty() ? name : label; }
};

// The names of every policy, in the order they are documented.
const std::vector<std::string>& PolicyNames();
// The options a policy accepts (empty for none); nullptr for an unknown name.
const std::vector<std::string>* PolicyOptionNames(const std::string& name);
// Builds the policy. Returns Invalid naming the policy and the option when the
// name is unknown or an option is unknown or out of range.
StatusOr<std::unique_ptr<Policy>> MakePolicy(const PolicySpec& spec);

}  // namespace ballast::balance
