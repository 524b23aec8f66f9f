// Durations written by people on a command line: a number of seconds
// ("604800", "90.5") or Prometheus's form, whole numbers each followed by a
// unit, largest first ("7d", "1d12h", "90m"; units w, d, h, m, s).
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast {

// The longest duration text read, and the longest duration: 100 years.
inline constexpr size_t kMaxDurationText = 64;
inline constexpr double kMaxDurationSeconds = 100 * 365.0 * 86400;

// The seconds `text` stands for. Invalid naming `field` ("--window: expected
// seconds or a duration like 7d or 1d12h, got \"7x\"") for empty text, text
// longer than kMaxDurationText, a negative or non-finite number, an unknown
// or repeated unit, units out of order, or more than kMaxDurationSeconds.
StatusOr<double> ParseDuration(std::string_view text, std::string_view field);

// `seconds` in Prometheus's form without weeks ("7d", "1d12h", "90s"; "0s"
// for 0), rounded to whole seconds; ParseDuration reads it back. Requires 0 <= seconds <=
// kMaxDurationSeconds.
std::string FormatDuration(double seconds);

}  // namespace ballast
