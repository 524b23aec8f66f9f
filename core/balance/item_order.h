// ItemOrder: the order a job's listed items are dealt to its workers. Items
// whose costs the job declares are dealt largest first by default, as LPT
// scheduling does (Graham 1969: the longest jobs first, within 4/3 of the
// best makespan): the few large items start early, on whichever nodes the
// policy gives them, and the many small ones are left for the tail, where
// stealing and backups can even the nodes out. Dealt as listed, a large item
// that comes last is the job's end on whatever node drew it, and no steal
// can split it.
//
// The deal is a stable sort by declared cost, largest first: item i of the
// job is the i-th largest, ties in list order, so the same list is dealt the
// same way on every read (a restarted operator resumes the same job). Item
// numbers (BALLAST_START, BALLAST_ITEM, a result's list entries) are positions
// in the dealt order; values and costs travel with their items.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace ballast::balance {

struct PolicySpec;  // policy_options.h

enum class ItemOrder {
  kPolicy,        // the job's policy's own (PolicyItemOrder): the default
  kLargestFirst,  // by declared cost, largest first
  kListed,        // as the list gives them: the user says the order matters
};

// "policy" | "largestFirst" | "listed".
const char* ItemOrderName(ItemOrder order);
std::optional<ItemOrder> ParseItemOrder(std::string_view name);

// The order a policy deals items in, as its options carry it (each options
// type's kItemOrder, policy_options.h), chosen as measured on Pareto-sized
// items (bench/pareto-seeds: 20 draws, declared costs exact and off by up to
// 30 % and 60 %): largest first for weighted, selfsched, mms and adaptive,
// which it brings on average from 0.68-0.85 to 0.72-0.96 of the limit; as
// listed for equal, guided and factoring, which it does not help (equal gives
// every node the same share whatever is in it; guided and factoring hand
// their largest chunks out first, and a chunk of the largest items goes to
// whoever asks). `simulate` of a scenario with item costs shows both for
// every policy. Never kPolicy; the policy's name and label play no part.
ItemOrder PolicyItemOrder(const PolicySpec& policy);

// `order` with kPolicy resolved for `policy`.
ItemOrder EffectiveItemOrder(ItemOrder order, const PolicySpec& policy);

// The listed index of each dealt item: dealt[i] is the list position of the
// i-th item dealt. Identity for kListed; for kLargestFirst a stable sort of
// `costs` by decreasing cost (an empty `costs` deals as listed). Requires
// kPolicy resolved (EffectiveItemOrder).
std::vector<size_t> DealOrder(const std::vector<double>& costs, ItemOrder order);

// `items` rearranged so that out[i] = items[dealt[i]]. Requires dealt to be a
// permutation of [0, items.size()).
template <typename T>
std::vector<T> Dealt(const std::vector<T>& items, const std::vector<size_t>& dealt) {
  std::vector<T> out;
  out.reserve(items.size());
  for (size_t index : dealt) out.push_back(items[index]);
  return out;
}

}  // namespace ballast::balance
