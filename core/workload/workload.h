// WorkloadSpec: what a job computes, and how its items [0, N) map to work.
//
// A job file's `workload:` node names exactly one built-in workload:
//   primes  count the primes below `limit` (trial division or primesieve)
//   matmul  C = A x B for n x n matrices generated from a seed, one item per block of C
//   exec    the user's command, once per sub-range (or per item)
// WorkloadSpecFromJson reads it (with the job's optional top-level `items:`)
// from a job's tree (a YAML file or the API server's JSON, config/document.h),
// WorkloadToJson / WorkloadFromJson carry it from the coordinator to workers,
// and the functions below say which numbers, blocks or items an item stands for.
// docs/workloads.md is the user-facing description of all of this.
//
// Thread-safety: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/item_list.h"
#include "core/workload/user_result.h"

namespace ballast::workload {

enum class WorkloadKind { kPrimes, kMatmul, kExec };

// "primes" | "matmul" | "exec".
const char* WorkloadKindName(WorkloadKind kind);

struct PrimesSpec {
  enum class Method { kTrial, kSieve };
  uint64_t limit = 0;  // count the primes p < limit; limit >= 2
  Method method = Method::kTrial;
  // Sum the primes too (the result's checksum). Without it the sieve runs at
  // primesieve's own counting speed; the result's sum is then 0.
  bool checksum = true;
  bool operator==(const PrimesSpec&) const = default;
};

struct MatmulSpec {
  uint32_t n = 0;      // A, B and C are n x n
  uint32_t block = 0;  // C is computed in block x block tiles; n % block == 0
  uint64_t seed = 0;   // A and B are generated from it (MatmulEntry); YAML takes < 2^63
  bool operator==(const MatmulSpec&) const = default;
};

struct ExecSpec {
  std::vector<std::string> command;  // argv; command[0] is looked up in PATH
  bool per_item = false;             // run once per item instead of once per sub-range
  // Start the command once per worker thread and hand it each run as a line
  // on its stdin (worker/kernels/command_server.h): a dear start paid once.
  bool serve = false;
  uint32_t retries = 2;  // extra attempts after a non-zero exit
  // Commands a worker runs at once, 1..kMaxConcurrency; 0: one per CPU the
  // worker may use (its cgroup's quota, else its cores; worker/cpu_budget.h).
  uint32_t concurrency = 0;
  // In the endgame an idle worker may run a copy of the last worker's
  // remaining items at the same time (adaptive's backups); the first result
  // is merged. The contract of docs/getting-started.md, "Your own job" (a
  // command may run again for the same range, writing beside and renaming)
  // makes that safe; false for a command that must never run twice at once.
  bool backups = true;
  std::string image;  // container image on Kubernetes; unused locally
  ResultSpec result;  // what the command hands back (user_result.h)
  bool operator==(const ExecSpec&) const = default;
};

// One job's workload. Only the member named by `kind` is meaningful.
struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kPrimes;
  PrimesSpec primes;
  MatmulSpec matmul;
  ExecSpec exec;
  uint64_t items = 0;  // the job is items [0, items); always resolved (> 0)
  balance::CostShape cost = balance::CostShape::kUniform;  // declared relative item cost
  // Items given by value (item_list.h; exec only): item i is (*item_values)[i].
  // Null: the items are their numbers.
  std::shared_ptr<const std::vector<std::string>> item_values;
  // Item i costs (*item_costs)[i] (relative; any positive unit). Null: `cost`.
  std::shared_ptr<const std::vector<double>> item_costs;
  // Where the user listed item i (item_list.h ItemPlaces): set with
  // `item_values`, to name an item as the user numbers it. Not compared.
  std::shared_ptr<const ItemPlaces> item_places;
  // Equal when every field and the lists' contents are equal.
  bool operator==(const WorkloadSpec& other) const;
};

// Limits on the inputs (beyond them a job would not end, or would not be exact).
inline constexpr uint64_t kMaxPrimesLimit = 1'000'000'000'000'000ULL;  // 10^15
inline constexpr uint32_t kMaxMatmulN = 65536;
inline constexpr uint64_t kMaxExecItems = 1'000'000'000'000ULL;
inline constexpr uint32_t kMaxConcurrency = 256;
// Width of one default sieve item: 10^10 is 2385 items.
inline constexpr uint64_t kSieveItemWidth = uint64_t{1} << 22;

// Reads the `workload` object at `path`, a union with exactly one of
// `primes`, `matmul`, `exec`; `items` is the job's top-level `items` when
// written. Returns the spec with `items` and `cost` resolved; Invalid
// "<path>.<field>: ..." for an unknown key, a bad value, zero or two members,
// or items that do not fit the workload (exec requires them).
StatusOr<WorkloadSpec> WorkloadSpecFromJson(const nlohmann::json& workload,
                                            std::optional<uint64_t> items, std::string_view path);

// The items of a job's inline list (`itemsFrom.list`, docs/workloads.md), or
// of a scenario's, which lists items as a job does: each entry a value (cost
// 1) or {value, cost}. Costs are kept only when one is written. Returns
// Invalid "<path>[i]...: ..." for a list that is empty or longer than
// kMaxListedItems, an entry of another shape (a bare number: a value YAML
// read as a number must be quoted), or a cost not in (0, kMaxItemCost].
// Values are checked when they are attached (AttachItems, CheckItemValue).
// The mean declared cost of an item in the job's own units: the mean of its
// listed costs; 1 where its items carry none (a shape's costs are relative,
// in items).
double MeanItemCost(const WorkloadSpec& spec);

// The names of `spec`'s items: its values and places, when listed.
ItemNames NamesOf(const WorkloadSpec& spec);

StatusOr<ItemList> InlineItemsFromJson(const nlohmann::json& list, std::string_view path);

// Gives `spec` (an exec workload) the items of `list`, dealt in list.order
// when costs are given (balance/item_order.h: largest first by default, so
// item i is then the i-th largest), as listed otherwise. Sets items to the
// list's size. Invalid "<path>: ..." (its path as data; "<path>[i]: ..." for
// an item) for another workload kind (primes and matmul number their own
// items), a list past item_list.h's bounds or a bad value or cost; Invalid
// "items: ..." for a spec the items do not fit.
Status AttachItems(WorkloadSpec* spec, ItemList list, std::string_view path);

// The default number of items: trial limit/2 (one per odd candidate), sieve
// ceil(limit / kSieveItemWidth), matmul (n/block)^2; exec has none (0).
uint64_t DefaultItems(const WorkloadSpec& spec);
// The declared cost shape: trial primes linear, everything else uniform.
balance::CostShape DefaultCost(const WorkloadSpec& spec);

// The costliest item's share of the job's declared cost (1/items for equal
// costs; 0 for no items): what the largest-item bound of its physical limit
// takes of the measured work (balance::JobLimit).
double LargestItemShare(const WorkloadSpec& spec);

// A digest of the items a job lists (their values and costs, in the dealt
// order): "fnv1a64:<16 hex digits>:<count>". "" for a job that numbers its
// items. A job's list is fixed at its start: a list read again (an operator
// restarted) with another digest is another job.
std::string ItemsDigest(const WorkloadSpec& spec);

// Checks a resolved spec (the same rules WorkloadSpecFromJson applies). Returns Ok or
// Invalid with a message naming the field.
Status ValidateWorkload(const WorkloadSpec& spec);

// {"primes": {"limit": .., "method": ..}, "items": .., "costModel": ..} (or
// "matmul" / "exec" with the keys a job writes), and a listed job's items as
// two lists of one length, "values" and "costs". Never fails. This is the
// wire, not a file: a user spells an item's cost `cost` (a job's and a
// scenario's itemsFrom.list); the wire keeps "costs" because a worker's
// image may be another version than the coordinator's (helm's
// worker.image.tag, a user's own image with the bundle) and nothing promises
// that they match, so renaming it would make such a worker refuse its leases.
nlohmann::json WorkloadToJson(const WorkloadSpec& spec);
// The inverse, read with the job's own member readers: a missing, mistyped or
// unknown field is Invalid naming it ("workload.items: missing"), and the
// result must pass ValidateWorkload.
StatusOr<WorkloadSpec> WorkloadFromJson(const nlohmann::json& json);

// --- primes ---------------------------------------------------------------
// The numbers [lo, hi) that item `item` of a primes job stands for; the spans
// of items 0..items-1 tile [0, limit) in order, none empty. Trial: the odd
// candidates 1, 3, 5, .. are spread evenly over the items (by default one each:
// item i is 2i+1, item 0 also holds 0 and 2); sieve: [0, limit) is cut evenly.
// Requires kind == kPrimes and item < items.
balance::Range PrimesItemSpan(const WorkloadSpec& spec, uint64_t item);
// The numbers covered by the items of `items` (the union of their spans).
balance::Range PrimesRangeSpan(const WorkloadSpec& spec, balance::Range items);

// --- matmul ---------------------------------------------------------------
enum class Matrix { kA, kB };
// Blocks of C per side: n / block.
uint32_t MatmulBlocksPerSide(const MatmulSpec& spec);
// Item b is block (b / side, b % side) of C, in row-major order.
struct BlockIndex {
  uint32_t row = 0;
  uint32_t col = 0;
};
BlockIndex MatmulBlock(const MatmulSpec& spec, uint64_t item);
// Entry (row, col) of A or B: an integer in [-8, 8], from SplitMix64 (see
// Mix64) of the seed and the entry's position:
//   key = (which == kA ? 0 : n*n) + row*n + col
//   entry = Mix64(Mix64(seed) + key) % 17 - 8
// so every product and partial sum of C is an exact integer in double.
int MatmulEntry(const MatmulSpec& spec, Matrix which, uint32_t row, uint32_t col);
// The weight of C(row, col) in the position-weighted checksum:
// Mix64(row*n + col) | 1 (odd, so no entry is ignored mod 2^64).
uint64_t MatmulWeight(const MatmulSpec& spec, uint32_t row, uint32_t col);

// SplitMix64's output for state x (Steele, Lea, Flood 2014): add the golden
// gamma 0x9E3779B97F4A7C15, then the variant-13 finalizer.
inline uint64_t Mix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// MatmulEntry for a caller that filled many entries: `mixed_seed` is
// Mix64(spec.seed) and `key` the entry's key as above. The same value.
inline int MatmulEntryOfKey(uint64_t mixed_seed, uint64_t key) {
  return static_cast<int>(Mix64(mixed_seed + key) % 17) - 8;
}

}  // namespace ballast::workload
