// ItemList: reading and checking lists of items by value (workload/item_list.h).
#include "core/workload/item_list.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/common/json_read.h"
#include "core/common/utf8.h"

namespace ballast::workload {
namespace {

constexpr size_t kCostBytes = 24;  // what a cost adds to a list on the wire

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// "cost<spaces or tab>value" into its parts.
Status SplitCostValue(std::string_view line, std::string_view where, double* cost,
                      std::string_view* value) {
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
  if (value.empty()) return Status::Invalid(fmt::format("{}: an item's value is empty", where));
  if (value.size() > kMaxItemValueBytes) {
    return Status::Invalid(fmt::format("{}: an item's value is {} bytes, more than {}: \"{}\"",
                                       where, value.size(), kMaxItemValueBytes,
                                       json_read::Cut(value)));
  }
  if (FindInvalidUtf8(value) != std::string_view::npos) {
    return Status::Invalid(fmt::format("{}: an item's value is not UTF-8 text", where));
  }
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return Status::Invalid(
          fmt::format("{}: an item's value holds the control character 0x{:02x} at byte {}", where,
                      byte, &c - value.data()));
    }
  }
  return Status::Ok();
}

Status CheckItemCost(double cost, std::string_view where) {
  if (!std::isfinite(cost) || cost <= 0 || cost > kMaxItemCost) {
    return Status::Invalid(
        fmt::format("{}: expected a cost > 0 and <= {:g}, got {}", where, kMaxItemCost, cost));
  }
  return Status::Ok();
}

size_t ItemListBytes(const std::vector<std::string>& values, const std::vector<double>& costs) {
  size_t bytes = kCostBytes * costs.size();
  for (const std::string& value : values) bytes += value.size() + 3;  // quotes and comma
  return bytes;
}

StatusOr<ItemList> ParseItemLines(std::string_view text, LineFormat format,
                                  std::string_view where) {
  ItemList list;
  size_t bytes = 0;
  size_t line_number = 0;
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
      BALLAST_RETURN_IF_ERROR(SplitCostValue(line, at, &cost, &value));
      list.costs.push_back(cost);
      bytes += kCostBytes;
    }
    BALLAST_RETURN_IF_ERROR(CheckItemValue(value, at));
    if (list.values.size() == kMaxListedItems) {
      return Status::Invalid(fmt::format("{}: more than {} items", at, kMaxListedItems));
    }
    bytes += value.size() + 3;
    if (bytes > kMaxItemListBytes) {
      return Status::Invalid(fmt::format(
          "{}: the list is longer than {} KiB (its values and costs travel to every worker)", at,
          kMaxItemListBytes >> 10));
    }
    list.values.emplace_back(value);
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
