// ItemList: reading and checking lists of items by value (workload/item_list.h).
#include "core/workload/item_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/common/utf8.h"

namespace ballast::workload {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// A byte-order mark: what an editor may put before a file's first line.
constexpr std::string_view kByteOrderMark = "\xef\xbb\xbf";

// "cost<spaces or tab>value" into its parts; blanks before the cost are
// skipped (`wc -c` right-aligns its numbers).
Status SplitCostValue(std::string_view line, std::string_view where, double* cost,
                      std::string_view* value) {
  line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
  const size_t gap = line.find_first_of(" \t");
  const std::string_view number = line.substr(0, gap);
  if (gap == std::string_view::npos) {
    return Status::Invalid(
        fmt::format("{}: expected \"<cost> <value>\" (format cost-value), got \"{}\"", where,
                    json_read::Cut(line)));
  }
  double parsed = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), parsed);
  if (error != std::errc() || end != number.data() + number.size()) {
    return Status::Invalid(
        fmt::format("{}: expected a cost (a number > 0) before the value, got \"{}\"", where,
                    json_read::Cut(number)));
  }
  BALLAST_RETURN_IF_ERROR(CheckItemCost(parsed, where));
  const size_t start = line.find_first_not_of(" \t", gap);
  if (start == std::string_view::npos) {
    return Status::Invalid(
        fmt::format("{}: expected a value after the cost {}, got nothing", where, number));
  }
  *cost = parsed;
  *value = line.substr(start);
  return Status::Ok();
}

// The code point of the UTF-8 character at `text[i]` (valid UTF-8), and its
// length in `*length`.
char32_t CodePointAt(std::string_view text, size_t i, size_t* length) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (byte(0) < 0x80) {
    *length = 1;
    return byte(0);
  }
  const size_t n = byte(0) >= 0xf0 ? 4 : byte(0) >= 0xe0 ? 3 : 2;
  char32_t point = byte(0) & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) point = (point << 6) | (byte(k) & 0x3f);
  *length = n;
  return point;
}

// What is wrong with `point` in a value that is one line of a file, or
// nullptr: C0 and C1 control characters and DEL (U+0085 is a line break to
// some tools), Unicode's line and paragraph separators, and the byte-order
// mark, which no one sees.
const char* RefusedInValue(char32_t point) {
  if (point < 0x20 || (point >= 0x7f && point <= 0x9f)) return "the control character";
  if (point == 0x2028 || point == 0x2029) return "the line break";
  if (point == 0xfeff) return "the invisible byte-order mark";
  return nullptr;
}

// The bytes `text` takes as a JSON string, quotes included (DumpJson: a
// control character is \u00XX, or two bytes for \b \f \n \r \t).
size_t JsonStringBytes(std::string_view text) {
  size_t bytes = text.size() + 2;
  for (const char c : text) {
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      bytes += 1;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      bytes += 5;
    }
  }
  return bytes;
}

// The bytes a value or a cost adds to the list as sent: its JSON and a comma.
size_t ValueBytes(std::string_view value) { return JsonStringBytes(value) + 1; }
size_t CostBytes(double cost) { return DumpJson(nlohmann::json(cost)).size() + 1; }

Status TooLong(std::string_view where) {
  return Status::InvalidAt(
      std::string(where),
      fmt::format("the list takes more than {} KiB as sent to every worker (its values and costs "
                  "as JSON)",
                  kMaxItemListBytes >> 10));
}

// `status` with its text and without a path: what a line of a text list is
// refused with (a line is not a field).
Status AtLine(const Status& status) {
  return status.ok() ? status : Status(status.code(), status.message());
}

}  // namespace

const char* LineFormatName(LineFormat format) {
  return format == LineFormat::kValue ? "value" : "cost-value";
}

std::optional<LineFormat> ParseLineFormat(std::string_view name) {
  if (name == "value") return LineFormat::kValue;
  if (name == "cost-value") return LineFormat::kCostValue;
  return std::nullopt;
}

Status CheckItemValue(std::string_view value, std::string_view where) {
  const std::string at(where);
  if (value.empty()) return Status::InvalidAt(at, "an item's value is empty");
  if (value.size() > kMaxItemValueBytes) {
    return Status::InvalidAt(
        at, fmt::format("an item's value is {} bytes, more than {}: \"{}\"", value.size(),
                        kMaxItemValueBytes, json_read::Cut(value)));
  }
  if (FindInvalidUtf8(value) != std::string_view::npos) {
    return Status::InvalidAt(at, "an item's value is not UTF-8 text");
  }
  size_t length = 0;
  for (size_t i = 0; i < value.size(); i += length) {
    const char32_t point = CodePointAt(value, i, &length);
    if (const char* what = RefusedInValue(point)) {
      return Status::InvalidAt(at, fmt::format("an item's value holds {} U+{:04X} at byte {}", what,
                                               static_cast<uint32_t>(point), i));
    }
  }
  return Status::Ok();
}

Status CheckItemCost(double cost, std::string_view where) {
  if (!std::isfinite(cost) || cost <= 0 || cost > kMaxItemCost) {
    return Status::InvalidAt(
        std::string(where),
        fmt::format("expected a cost > 0 and <= {:g}, got {}", kMaxItemCost, cost));
  }
  return Status::Ok();
}

size_t ItemListBytes(const std::vector<std::string>& values, const std::vector<double>& costs) {
  size_t bytes = 0;
  for (const std::string& value : values) bytes += ValueBytes(value);
  for (const double cost : costs) bytes += CostBytes(cost);
  return bytes;
}

Status CheckItemListBytes(const std::vector<std::string>& values, const std::vector<double>& costs,
                          std::string_view where) {
  return ItemListBytes(values, costs) > kMaxItemListBytes ? TooLong(where) : Status::Ok();
}

std::string ItemPlace(const ItemPlaces* places, uint64_t item) {
  if (places == nullptr || item >= places->at.size()) return fmt::format("item {}", item);
  return places->lines ? fmt::format("line {}", places->at[item])
                       : fmt::format("list[{}]", places->at[item]);
}

std::string ItemPlacesOf(const ItemPlaces* places, uint64_t begin, uint64_t end, size_t max) {
  if (end <= begin + 1) return ItemPlace(places, begin);
  if (places == nullptr || end > places->at.size()) {
    return fmt::format("items {}-{}", begin, end - 1);
  }
  std::string text = places->lines ? "lines " : "";
  for (uint64_t i = begin; i < end && i - begin < max; ++i) {
    if (i > begin) text += ", ";
    text +=
        places->lines ? fmt::format("{}", places->at[i]) : fmt::format("list[{}]", places->at[i]);
  }
  return end - begin > max ? text + ", ..." : text;
}

StatusOr<ItemList> ParseItemLines(std::string_view text, LineFormat format,
                                  std::string_view where) {
  ItemList list;
  size_t bytes = 0;
  size_t line_number = 0;
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  while (!text.empty()) {
    ++line_number;
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsBlank(line)) continue;
    const std::string at = fmt::format("{}:{}", where, line_number);
    std::string_view value = line;
    if (format == LineFormat::kCostValue) {
      double cost = 0;
      BALLAST_RETURN_IF_ERROR(AtLine(SplitCostValue(line, at, &cost, &value)));
      list.costs.push_back(cost);
      bytes += CostBytes(cost);
    }
    BALLAST_RETURN_IF_ERROR(AtLine(CheckItemValue(value, at)));
    if (list.values.size() == kMaxListedItems) {
      return Status::Invalid(fmt::format("{}: more than {} items", at, kMaxListedItems));
    }
    bytes += ValueBytes(value);
    if (bytes > kMaxItemListBytes) return AtLine(TooLong(at));
    list.values.emplace_back(value);
    list.lines.push_back(static_cast<uint32_t>(line_number));
  }
  if (list.values.empty()) return Status::Invalid(fmt::format("{}: no items", where));
  return list;
}

std::string ItemLines(const std::vector<std::string>& values, uint64_t begin, uint64_t end) {
  std::string text;
  for (uint64_t i = begin; i < end; ++i) {
    text += values[i];
    text += '\n';
  }
  return text;
}

}  // namespace ballast::workload
