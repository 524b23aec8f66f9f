// ItemList: a job's items given by value (file paths, URLs, keys), one item a
// line, each with an optional cost, instead of the integers [0, N).
//
// A job names its list under `items:` (docs/workloads.md): inline, from a
// ConfigMap's key (Kubernetes) or from a file (`ballast run`). Text lists are
// read here, a line at a time:
//   value           format "value" (the default): the whole line is the value
//   cost<ws>value   format "cost-value": a number > 0, spaces or a tab, then
//                   the value, as `du -b` and `find -printf '%s\t%p\n'` print
// Blank lines are no items; a trailing "\r" is dropped (a file written on
// Windows), and so is a byte-order mark before the first line. A value is
// what the command receives (a line of the file named by BALLAST_ITEMS_FILE,
// or BALLAST_VALUE), so it is bounded, its bytes are UTF-8, and it holds no
// control character (C0, DEL or C1, U+0085 among them), no line or paragraph
// separator (U+2028, U+2029) and no byte-order mark (U+FEFF).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/item_order.h"
#include "core/common/status.h"

namespace ballast::workload {

// Bounds of a list: it travels to every worker in one message of at most
// protocol::kMaxBodyBytes (1 MiB), so values and costs together, as that
// message holds them (JSON), stay under it with room for the rest.
inline constexpr size_t kMaxListedItems = 100'000;
inline constexpr size_t kMaxItemValueBytes = 4096;  // a path, as PATH_MAX
// Each value as a JSON string and each cost as a JSON number, with a comma
// each (ItemListBytes).
inline constexpr size_t kMaxItemListBytes = size_t{768} << 10;
inline constexpr double kMaxItemCost = 1e15;  // a petabyte, in bytes

enum class LineFormat { kValue, kCostValue };

// "value" | "cost-value".
const char* LineFormatName(LineFormat format);
std::optional<LineFormat> ParseLineFormat(std::string_view name);

struct ItemList {
  std::vector<std::string> values;
  std::vector<double> costs;  // empty, or one per value
  // A text list's: the line each value was on (1-based; blank lines count).
  // Empty for an inline list, whose items are named by their index.
  std::vector<uint32_t> lines = {};
  // How AttachItems deals them when they have costs (balance/item_order.h);
  // kPolicy must be resolved for the job's policy first (EffectiveItemOrder),
  // else it deals as listed.
  balance::ItemOrder order = balance::ItemOrder::kPolicy;
};

// Where a job's listed items were written, in the order they are dealt:
// item i was on line at[i] of a text list (a file, a ConfigMap's key), or at
// index at[i] of an inline list (spec.itemsFrom.list). Items with costs are
// dealt largest first by default (balance/item_order.h), so an item's number
// is not the user's; its place is.
struct ItemPlaces {
  bool lines = true;  // false: indexes of an inline list
  std::vector<uint32_t> at;
};

// What names a job's items for people: their values and their places (each
// null when the job has none).
struct ItemNames {
  const std::vector<std::string>* values = nullptr;
  const ItemPlaces* places = nullptr;
};

// "line 38" or "list[37]" for item `item`; "item N" (its dealt number) when
// `places` is null or does not reach it.
std::string ItemPlace(const ItemPlaces* places, uint64_t item);
// The places of items [begin, end), at most `max` of them with ", ..." after:
// "line 38", "lines 38, 12, 7, ...", "list[3], list[0]"; "items B-E" (dealt
// numbers) without places.
std::string ItemPlacesOf(const ItemPlaces* places, uint64_t begin, uint64_t end, size_t max);

// Ok when `value` may be an item's value: 1..kMaxItemValueBytes bytes of
// UTF-8 without the characters above. Otherwise Invalid "<where>: ..." saying
// what is wrong with it (the value cut, common/json_read.h Cut; a refused
// character as U+XXXX with its byte offset in the value), about the field at
// `where` (Status::InvalidAt: its path() is `where`).
Status CheckItemValue(std::string_view value, std::string_view where);
// Ok when `cost` is finite, > 0 and <= kMaxItemCost; Invalid about the field
// at `where` otherwise.
Status CheckItemCost(double cost, std::string_view where);

// The items of a text list, one per non-blank line. Invalid
// "<where>:<line>: ..." for a bad value or cost, more than kMaxListedItems
// items, or more than kMaxItemListBytes; Invalid "<where>: no items" for a
// list with none. A line is not a field: these errors carry no path.
StatusOr<ItemList> ParseItemLines(std::string_view text, LineFormat format, std::string_view where);

// The bytes the list takes against kMaxItemListBytes: each value as a JSON
// string (its bytes and two quotes; `"` and `\` escaped) and each cost as a
// JSON number (DumpJson: 2048000 is "2048000.0"), each with a comma.
size_t ItemListBytes(const std::vector<std::string>& values, const std::vector<double>& costs);
// Ok, or Invalid "<where>: the list takes more than 768 KiB ..." (about the
// field at `where`) when ItemListBytes is over kMaxItemListBytes.
Status CheckItemListBytes(const std::vector<std::string>& values, const std::vector<double>& costs,
                          std::string_view where);

// The values of items [begin, end) one per line, each ending in "\n": what
// the command reads from BALLAST_ITEMS_FILE. Requires end <= values.size().
std::string ItemLines(const std::vector<std::string>& values, uint64_t begin, uint64_t end);

}  // namespace ballast::workload
