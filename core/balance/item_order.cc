#include "core/balance/item_order.h"

#include <algorithm>
#include <numeric>
#include <variant>

#include "core/balance/policy_options.h"

namespace ballast::balance {

const char* ItemOrderName(ItemOrder order) {
  switch (order) {
    case ItemOrder::kPolicy:
      return "policy";
    case ItemOrder::kLargestFirst:
      return "largestFirst";
    case ItemOrder::kListed:
      return "listed";
  }
  return "policy";
}

std::optional<ItemOrder> ParseItemOrder(std::string_view name) {
  if (name == "policy") return ItemOrder::kPolicy;
  if (name == "largestFirst") return ItemOrder::kLargestFirst;
  if (name == "listed") return ItemOrder::kListed;
  return std::nullopt;
}

ItemOrder PolicyItemOrder(const PolicySpec& policy) {
  return std::visit([](const auto& options) { return options.kItemOrder; }, policy.options);
}

ItemOrder EffectiveItemOrder(ItemOrder order, const PolicySpec& policy) {
  return order == ItemOrder::kPolicy ? PolicyItemOrder(policy) : order;
}

std::vector<size_t> DealOrder(const std::vector<double>& costs, ItemOrder order) {
  std::vector<size_t> dealt(costs.size());
  std::iota(dealt.begin(), dealt.end(), size_t{0});
  if (order == ItemOrder::kLargestFirst) {
    std::stable_sort(dealt.begin(), dealt.end(),
                     [&costs](size_t a, size_t b) { return costs[a] > costs[b]; });
  }
  return dealt;
}

}  // namespace ballast::balance
