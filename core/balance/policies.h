// Factories of the concrete policies, one per policy's options; MakePolicy
// (policy_options.h) is the public way in. The options were checked when
// they were read (PolicyFromJson), so none fails.
//
// Thread-safety: pure factories.
#pragma once

#include <memory>
#include <string>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/common/status.h"

namespace ballast::balance {

std::unique_ptr<Policy> MakePolicyOf(const EqualOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const WeightedOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const SelfSchedOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const GuidedOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const FactoringOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const MmsOptions& options);
std::unique_ptr<Policy> MakePolicyOf(const AdaptiveOptions& options);

}  // namespace ballast::balance
