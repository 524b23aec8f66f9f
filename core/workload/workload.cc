// Item mappings, defaults and validation of WorkloadSpec (workload/workload.h).
#include "core/workload/workload.h"

#include <fmt/format.h>

#include <cassert>

namespace ballast::workload {
namespace {

// floor(a * b / c), exact; requires c > 0 and the quotient below 2^64. Portable: 32-bit ARM
// has no 128-bit integer type, so the 128-bit product is formed from 32-bit halves and divided
// by binary long division.
uint64_t MulDiv(uint64_t a, uint64_t b, uint64_t c) {
  constexpr uint64_t kLow = 0xffffffffu;
  const uint64_t lo_lo = (a & kLow) * (b & kLow);
  const uint64_t hi_lo = (a >> 32) * (b & kLow);
  const uint64_t lo_hi = (a & kLow) * (b >> 32);
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & kLow) + lo_hi;               // < 2^64
  uint64_t remainder = (a >> 32) * (b >> 32) + (hi_lo >> 32) + (cross >> 32);  // < c
  const uint64_t low = (cross << 32) | (lo_lo & kLow);
  uint64_t quotient = 0;
  for (int bit = 63; bit >= 0; --bit) {
    const bool carry = (remainder >> 63) != 0;  // 2 * remainder + 1 would pass 2^64: > c
    remainder = (remainder << 1) | ((low >> bit) & 1);
    quotient <<= 1;
    if (carry || remainder >= c) {
      remainder -= c;
      quotient |= 1;
    }
  }
  return quotient;
}

// floor(i * total / parts) without overflow; requires i <= parts.
uint64_t EvenCut(uint64_t i, uint64_t total, uint64_t parts) { return MulDiv(i, total, parts); }

// The number of odd candidates 1, 3, 5, .. below limit.
uint64_t OddCandidates(uint64_t limit) { return limit / 2; }

// The first number of the trial span that starts at odd candidate index j.
uint64_t TrialLo(uint64_t j) { return j == 0 ? 0 : 2 * j + 1; }

Status CheckPrimes(const PrimesSpec& primes, uint64_t items) {
  if (primes.limit < 2 || primes.limit > kMaxPrimesLimit) {
    return Status::Invalid(fmt::format("primes.limit: expected a whole number in [2, {}], got {}",
                                       kMaxPrimesLimit, primes.limit));
  }
  const uint64_t most =
      primes.method == PrimesSpec::Method::kTrial ? OddCandidates(primes.limit) : primes.limit;
  if (items > most) {
    return Status::Invalid(fmt::format(
        "items: expected at most {} for primes below {} ({}), got {}", most, primes.limit,
        primes.method == PrimesSpec::Method::kTrial ? "one odd candidate per item"
                                                    : "one number per item",
        items));
  }
  return Status::Ok();
}

Status CheckMatmul(const MatmulSpec& matmul, uint64_t items) {
  if (matmul.n == 0 || matmul.n > kMaxMatmulN) {
    return Status::Invalid(fmt::format("matmul.size: expected a whole number in [1, {}], got {}",
                                       kMaxMatmulN, matmul.n));
  }
  if (matmul.block == 0 || matmul.n % matmul.block != 0) {
    return Status::Invalid(fmt::format("matmul.block: expected a divisor of size = {}, got {}",
                                       matmul.n, matmul.block));
  }
  const uint64_t side = matmul.n / matmul.block;
  if (items != side * side) {
    return Status::Invalid(fmt::format(
        "items: expected (n/block)^2 = {} (one per block of C), got {}", side * side, items));
  }
  return Status::Ok();
}

Status CheckExec(const ExecSpec& exec, uint64_t items) {
  if (exec.command.empty() || exec.command[0].empty()) {
    return Status::Invalid("exec.command: expected a non-empty list of strings");
  }
  if (items > kMaxExecItems) {
    return Status::Invalid(
        fmt::format("items: expected at most {} for exec, got {}", kMaxExecItems, items));
  }
  return Status::Ok();
}

template <typename T>
bool SameList(const std::shared_ptr<const std::vector<T>>& a,
              const std::shared_ptr<const std::vector<T>>& b) {
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

}  // namespace

bool WorkloadSpec::operator==(const WorkloadSpec& other) const {
  return kind == other.kind && primes == other.primes && matmul == other.matmul &&
         exec == other.exec && items == other.items && cost == other.cost &&
         SameList(item_values, other.item_values) && SameList(item_costs, other.item_costs);
}

Status AttachItems(WorkloadSpec* spec, ItemList list, std::string_view path) {
  const std::string at_list(path);
  if (spec->kind != WorkloadKind::kExec) {
    return Status::InvalidAt(
        at_list,
        fmt::format(
            "a list of items is for exec workloads; {} numbers its own items (give a count)",
            WorkloadKindName(spec->kind)));
  }
  if (list.values.empty()) return Status::InvalidAt(at_list, "no items");
  if (!list.costs.empty() && list.costs.size() != list.values.size()) {
    return Status::InvalidAt(
        at_list, fmt::format("{} costs for {} items", list.costs.size(), list.values.size()));
  }
  if (list.values.size() > kMaxListedItems) {
    return Status::InvalidAt(
        at_list, fmt::format("{} items, more than {}", list.values.size(), kMaxListedItems));
  }
  BALLAST_RETURN_IF_ERROR(CheckItemListBytes(list.values, list.costs, path));
  for (size_t i = 0; i < list.values.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    BALLAST_RETURN_IF_ERROR(CheckItemValue(list.values[i], at));
    if (!list.costs.empty()) BALLAST_RETURN_IF_ERROR(CheckItemCost(list.costs[i], at));
  }
  ItemPlaces places{.lines = !list.lines.empty(), .at = std::move(list.lines)};
  if (!places.lines) {
    places.at.resize(list.values.size());
    for (size_t i = 0; i < places.at.size(); ++i) places.at[i] = static_cast<uint32_t>(i);
  }
  if (!list.costs.empty() && list.order == balance::ItemOrder::kLargestFirst) {
    const std::vector<size_t> dealt = balance::DealOrder(list.costs, list.order);
    list.values = balance::Dealt(list.values, dealt);
    list.costs = balance::Dealt(list.costs, dealt);
    places.at = balance::Dealt(places.at, dealt);
  }
  spec->item_places = std::make_shared<const ItemPlaces>(std::move(places));
  spec->items = list.values.size();
  spec->item_values = std::make_shared<const std::vector<std::string>>(std::move(list.values));
  spec->item_costs = list.costs.empty()
                         ? nullptr
                         : std::make_shared<const std::vector<double>>(std::move(list.costs));
  return ValidateWorkload(*spec);
}

double MeanItemCost(const WorkloadSpec& spec) {
  if (spec.item_costs == nullptr || spec.item_costs->empty()) return 1;
  double sum = 0;
  for (const double cost : *spec.item_costs) sum += cost;
  return sum / static_cast<double>(spec.item_costs->size());
}

ItemNames NamesOf(const WorkloadSpec& spec) {
  return {.values = spec.item_values.get(), .places = spec.item_places.get()};
}

const char* WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kPrimes:
      return "primes";
    case WorkloadKind::kMatmul:
      return "matmul";
    case WorkloadKind::kExec:
      return "exec";
  }
  return "unknown";
}

uint64_t DefaultItems(const WorkloadSpec& spec) {
  switch (spec.kind) {
    case WorkloadKind::kPrimes:
      if (spec.primes.method == PrimesSpec::Method::kTrial) {
        return OddCandidates(spec.primes.limit);
      }
      return (spec.primes.limit + kSieveItemWidth - 1) / kSieveItemWidth;
    case WorkloadKind::kMatmul: {
      if (spec.matmul.block == 0) return 0;
      const uint64_t side = spec.matmul.n / spec.matmul.block;
      return side * side;
    }
    case WorkloadKind::kExec:
      return 0;
  }
  return 0;
}

balance::CostShape DefaultCost(const WorkloadSpec& spec) {
  if (spec.kind == WorkloadKind::kPrimes && spec.primes.method == PrimesSpec::Method::kTrial) {
    return balance::CostShape::kLinear;
  }
  return balance::CostShape::kUniform;
}

Status ValidateWorkload(const WorkloadSpec& spec) {
  if (spec.items == 0) return Status::Invalid("items: expected a whole number > 0, got 0");
  const bool listed = spec.item_values != nullptr || spec.item_costs != nullptr;
  if (listed && spec.kind != WorkloadKind::kExec) {
    return Status::Invalid("items: a list of items is for exec workloads");
  }
  if (spec.item_values != nullptr && spec.item_values->size() != spec.items) {
    return Status::Invalid(
        fmt::format("items: {} values for {} items", spec.item_values->size(), spec.items));
  }
  if (spec.item_costs != nullptr && spec.item_costs->size() != spec.items) {
    return Status::Invalid(
        fmt::format("items: {} costs for {} items", spec.item_costs->size(), spec.items));
  }
  switch (spec.kind) {
    case WorkloadKind::kPrimes:
      return CheckPrimes(spec.primes, spec.items);
    case WorkloadKind::kMatmul:
      return CheckMatmul(spec.matmul, spec.items);
    case WorkloadKind::kExec:
      return CheckExec(spec.exec, spec.items);
  }
  return Status::Invalid("kind: unknown workload");
}

balance::Range PrimesItemSpan(const WorkloadSpec& spec, uint64_t item) {
  return PrimesRangeSpan(spec, {item, item + 1});
}

balance::Range PrimesRangeSpan(const WorkloadSpec& spec, balance::Range items) {
  assert(spec.kind == WorkloadKind::kPrimes && items.end <= spec.items);
  if (items.empty()) return {};
  const uint64_t limit = spec.primes.limit;
  if (spec.primes.method == PrimesSpec::Method::kSieve) {
    return {EvenCut(items.begin, limit, spec.items), EvenCut(items.end, limit, spec.items)};
  }
  const uint64_t candidates = OddCandidates(limit);
  const uint64_t first = EvenCut(items.begin, candidates, spec.items);
  const uint64_t last = EvenCut(items.end, candidates, spec.items);
  return {TrialLo(first), last == candidates ? limit : TrialLo(last)};
}

uint32_t MatmulBlocksPerSide(const MatmulSpec& spec) { return spec.n / spec.block; }

BlockIndex MatmulBlock(const MatmulSpec& spec, uint64_t item) {
  const uint32_t side = MatmulBlocksPerSide(spec);
  return {static_cast<uint32_t>(item / side), static_cast<uint32_t>(item % side)};
}

int MatmulEntry(const MatmulSpec& spec, Matrix which, uint32_t row, uint32_t col) {
  const uint64_t n = spec.n;
  const uint64_t key = (which == Matrix::kA ? 0 : n * n) + row * n + col;
  return MatmulEntryOfKey(Mix64(spec.seed), key);
}

uint64_t MatmulWeight(const MatmulSpec& spec, uint32_t row, uint32_t col) {
  return Mix64(uint64_t{row} * spec.n + col) | 1;
}

double LargestItemShare(const WorkloadSpec& spec) {
  const balance::CostModel declared(spec.items, spec.cost, spec.item_costs);
  return declared.items() > 0 ? declared.MaxItemCost() / static_cast<double>(declared.items()) : 0;
}

std::string ItemsDigest(const WorkloadSpec& spec) {
  if (spec.item_values == nullptr) return "";
  // FNV-1a, 64 bits: not a defence against anyone, a check that the list is
  // the one the job started with.
  uint64_t hash = 0xcbf29ce484222325ULL;
  auto add = [&hash](std::string_view bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
  };
  for (size_t i = 0; i < spec.item_values->size(); ++i) {
    add((*spec.item_values)[i]);
    add(std::string_view("\n", 1));
    if (spec.item_costs != nullptr) add(fmt::format("{}\t", (*spec.item_costs)[i]));
  }
  return fmt::format("fnv1a64:{:016x}:{}", hash, spec.item_values->size());
}

}  // namespace ballast::workload
