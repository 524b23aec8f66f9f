// Tests of the command line's durations (core/common/duration.h),
// table-driven: what reads, what is refused and why, and the round trip.
#include "core/common/duration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ballast {
namespace {

TEST(DurationTest, SecondsAndPrometheusUnitsRead) {
  const std::vector<std::pair<std::string, double>> cases = {
      {"0", 0},       {"60", 60},        {"90.5", 90.5}, {"604800", 604800}, {"7d", 604800},
      {"1w", 604800}, {"1d12h", 129600}, {"90m", 5400},  {"2h30m15s", 9015}, {"1w2d3h4m5s", 788645},
      {"007s", 7},
  };
  for (const auto& [text, seconds] : cases) {
    auto parsed = ParseDuration(text, "--window");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_DOUBLE_EQ(*parsed, seconds) << text;
  }
}

TEST(DurationTest, WhatIsNotADurationIsRefusedNamingTheField) {
  for (const std::string& text : std::vector<std::string>{
           "", "7x", "d", "7d1", "1h1d", "1d1d", "1ms", "-5", "1e3", "inf", "nan", "0x10", " 60",
           "60 ", "1.5h", ".5", "5.", "7 d", std::string(65, '1')}) {
    auto parsed = ParseDuration(text, "--window");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid) << text;
    EXPECT_EQ(parsed.status().message().rfind("--window: expected seconds or a duration", 0), 0u)
        << parsed.status().message();
  }
}

TEST(DurationTest, LongerThanAHundredYearsIsRefused) {
  EXPECT_TRUE(ParseDuration("36500d", "--window").ok());
  auto parsed = ParseDuration("36501d", "--window");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "--window: 36501d is longer than the 36500d allowed");
  EXPECT_FALSE(ParseDuration(std::string(60, '9') + "s", "--window").ok());
}

TEST(DurationTest, FormatReadsBack) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "0s"},      {59.6, "1m"},      {60, "1m"},     {90, "1m30s"},
      {604800, "7d"}, {129600, "1d12h"}, {3601, "1h1s"}, {kMaxDurationSeconds, "36500d"},
  };
  for (const auto& [seconds, text] : cases) {
    EXPECT_EQ(FormatDuration(seconds), text) << seconds;
    auto parsed = ParseDuration(text, "x");
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_DOUBLE_EQ(*parsed, std::round(seconds)) << text;
  }
}

}  // namespace
}  // namespace ballast
