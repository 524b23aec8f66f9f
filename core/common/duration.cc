#include "core/common/duration.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ballast {

namespace {

struct Unit {
  char name;
  double seconds;
};

// Largest first: the order units must come in.
constexpr Unit kUnits[] = {
    {'w', 7 * 86400.0}, {'d', 86400.0}, {'h', 3600.0}, {'m', 60.0}, {'s', 1.0}};
constexpr size_t kUnitCount = sizeof(kUnits) / sizeof(kUnits[0]);

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "123" or "1.5": digits with at most one '.' between digits.
bool IsPlainNumber(std::string_view text) {
  const size_t dot = text.find('.');
  for (size_t i = 0; i < text.size(); ++i) {
    if (i != dot && !IsDigit(text[i])) return false;
  }
  return dot == std::string_view::npos || (dot > 0 && dot + 1 < text.size());
}

// The seconds of "7d", "1d12h": -1 when the text is not in that form.
double UnitsSeconds(std::string_view text) {
  double total = 0;
  size_t next_unit = 0;  // units before this one have been passed
  size_t i = 0;
  while (i < text.size()) {
    const size_t digits = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == digits || i == text.size()) return -1;
    size_t unit = next_unit;
    while (unit < kUnitCount && kUnits[unit].name != text[i]) ++unit;
    if (unit == kUnitCount) return -1;  // unknown, repeated or out of order
    total += std::strtod(std::string(text.substr(digits, i - digits)).c_str(), nullptr) *
             kUnits[unit].seconds;
    next_unit = unit + 1;
    ++i;
  }
  return total;
}

}  // namespace

StatusOr<double> ParseDuration(std::string_view text, std::string_view field) {
  const auto invalid = [&] {
    return Status::Invalid(fmt::format(
        "{}: expected seconds or a duration like 7d or 1d12h (units w, d, h, m, s), got \"{}\"",
        field, text.substr(0, kMaxDurationText)));
  };
  if (text.empty() || text.size() > kMaxDurationText) return invalid();
  const double seconds =
      IsPlainNumber(text) ? std::strtod(std::string(text).c_str(), nullptr) : UnitsSeconds(text);
  if (!(seconds >= 0) || !std::isfinite(seconds)) return invalid();
  if (seconds > kMaxDurationSeconds) {
    return Status::Invalid(fmt::format("{}: {} is longer than the {} allowed", field, text,
                                       FormatDuration(kMaxDurationSeconds)));
  }
  return seconds;
}

std::string FormatDuration(double seconds) {
  auto left = static_cast<int64_t>(std::llround(seconds));
  if (left == 0) return "0s";
  std::string out;
  for (const Unit& unit : kUnits) {
    if (unit.name == 'w') continue;  // "14d" reads better than "2w"
    const auto size = static_cast<int64_t>(unit.seconds);
    if (left >= size) {
      out += fmt::format("{}{}", left / size, unit.name);
      left %= size;
    }
  }
  return out;
}

}  // namespace ballast
