// Factories of the concrete policies; MakePolicy (policy_options.h) is the
// public way in. Each returns Invalid naming the option that is wrong.
//
// Thread-safety: pure factories.
#pragma once

#include <memory>
#include <string>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/common/status.h"

namespace ballast::balance {

StatusOr<std::unique_ptr<Policy>> MakeEqualPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeWeightedPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeSelfSchedPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeGuidedPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeFactoringPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeMmsPolicy(const PolicySpec& spec);
StatusOr<std::unique_ptr<Policy>> MakeAdaptivePolicy(const PolicySpec& spec);

// Reads option `key` of `spec` as a number in [min, max], or `fallback` when
// absent. Invalid: "policy selfsched: option chunk: expected a number in [1, inf), got 'x'".
StatusOr<double> OptionNumber(const PolicySpec& spec, const std::string& key, double fallback,
                              double min, double max);
// Reads option `key` as one of `choices`, or `fallback` when absent.
StatusOr<std::string> OptionChoice(const PolicySpec& spec, const std::string& key,
                                   const std::string& fallback,
                                   const std::vector<std::string>& choices);

}  // namespace ballast::balance
