// PolicySpec: the policy a job or scenario runs, with its options typed per
// policy, and the one reader that makes it from what a user wrote:
//   policy: adaptive
//   policy: {name: selfsched, chunk: 8}
//   policies: [adaptive, {name: adaptive, label: no-comp, compensation: none}]
// (the same tree whether it came from a YAML file, the API server or
// `--policy name:key=value` on a command line; config/document.h). Options are
// checked when they are read, so MakePolicy never fails.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/balance/item_order.h"
#include "core/balance/policy.h"
#include "core/common/status.h"

namespace ballast::balance {

// Each options type names its policy (kName: as a user writes it, in
// results and in messages) and says the order the policy deals a job's
// listed items in when the job leaves it to the policy (kItemOrder;
// item_order.h, PolicyItemOrder, says why each).
//
// equal: N/P of the job's cost each; weighted: cost in proportion to the weights.
struct EqualOptions {
  static constexpr std::string_view kName = "equal";
  static constexpr ItemOrder kItemOrder = ItemOrder::kListed;
  bool operator==(const EqualOptions&) const = default;
};
struct WeightedOptions {
  static constexpr std::string_view kName = "weighted";
  static constexpr ItemOrder kItemOrder = ItemOrder::kLargestFirst;
  bool operator==(const WeightedOptions&) const = default;
};
// Chunks are counted in items; for a job with one cost per item
// (JobInfo::item_costs), in items of mean cost (a chunk of 8 is worth 8 mean
// items, and holds at least one item).
// selfsched: a fixed chunk per request; 0: the policy picks one.
struct SelfSchedOptions {
  static constexpr std::string_view kName = "selfsched";
  static constexpr ItemOrder kItemOrder = ItemOrder::kLargestFirst;
  uint64_t chunk = 0;
  bool operator==(const SelfSchedOptions&) const = default;
};
// guided and factoring: no chunk below min_chunk.
struct GuidedOptions {
  static constexpr std::string_view kName = "guided";
  static constexpr ItemOrder kItemOrder = ItemOrder::kListed;
  uint64_t min_chunk = 1;
  bool operator==(const GuidedOptions&) const = default;
};
struct FactoringOptions {
  static constexpr std::string_view kName = "factoring";
  static constexpr ItemOrder kItemOrder = ItemOrder::kListed;
  uint64_t min_chunk = 1;
  bool operator==(const FactoringOptions&) const = default;
};
// mms: the tail's chunk; 0: the policy picks one.
struct MmsOptions {
  static constexpr std::string_view kName = "mms";
  static constexpr ItemOrder kItemOrder = ItemOrder::kLargestFirst;
  uint64_t chunk = 0;
  bool operator==(const MmsOptions&) const = default;
};
// adaptive: each part of the policy can be turned off (docs/simulator.md).
struct AdaptiveOptions {
  static constexpr std::string_view kName = "adaptive";
  static constexpr ItemOrder kItemOrder = ItemOrder::kLargestFirst;
  bool compensation = true;  // Method 3 (written `compensation: method3`, or `none`)
  bool stealing = true;
  bool rebalance = true;
  bool slow_start = true;
  bool prefetch = true;  // only when JobInfo::inputs_move
  bool backup = true;
  bool hedge = true;
  // Learn a per-item start cost from the job's reports (balance/learned_cost.h)
  // and split, steal and predict by it; only for jobs that declare costs (a
  // shape other than uniform, or one cost per item).
  bool learn_costs = true;
  double min_report_seconds = 0.05;  // in [1e-6, 3600]
  bool operator==(const AdaptiveOptions&) const = default;
};

// One alternative per policy, in the order they are documented (and
// PolicyNames() lists them).
using PolicyOptions = std::variant<EqualOptions, WeightedOptions, SelfSchedOptions, GuidedOptions,
                                   FactoringOptions, MmsOptions, AdaptiveOptions>;

struct PolicySpec {
  PolicyOptions options = AdaptiveOptions{};
  std::string label;  // how results are labelled; "" for the name

  // "equal", "weighted", "selfsched", "guided", "factoring", "mms", "adaptive".
  std::string name() const;
  std::string display() const { return label.empty() ? name() : label; }
  bool operator==(const PolicySpec&) const = default;
};

// The names of every policy, in the order they are documented.
const std::vector<std::string>& PolicyNames();

// The policy written at `node`: a name, or an object with `name`, an optional
// `label` and the policy's options. Booleans are true or false ("on" and
// "off" are taken too, as the simulator's scenarios write them); numbers are
// numbers. Returns Invalid "<path>: ..." for a wrong form or an unknown name,
// "<path>.<option>: ..." for an unknown option or a value out of range.
StatusOr<PolicySpec> PolicyFromJson(const nlohmann::json& node, std::string_view path);

// Builds the policy. Never fails: the options were checked when read.
std::unique_ptr<Policy> MakePolicy(const PolicySpec& spec);

}  // namespace ballast::balance
