// Tests of the history file of `ballast run --history` (core/fuzzy/history_file.h):
// a round trip, ages, and bad files named with their field.
#include "core/fuzzy/history_file.h"

#include <gtest/gtest.h>

#include <string>

namespace ballast::fuzzy {
namespace {

TEST(HistoryFileTest, RoundTripAndAges) {
  HistoryFile file;
  file.workloads["primes"] = {{"pi4b-a", 812.5, 12, 1000, 0.25}, {"pi3b", 101.25, 3.5, 1100}};
  auto parsed = ParseHistoryFile(FormatHistoryFile(file), "h.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& records = parsed->workloads.at("primes");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].node, "pi3b");  // sorted by node
  EXPECT_DOUBLE_EQ(records[1].speed, 812.5);
  const auto history = HistoryAt(records, 1500);
  EXPECT_DOUBLE_EQ(history[0].age_seconds, 400);
  EXPECT_DOUBLE_EQ(history[1].samples, 12);
  EXPECT_DOUBLE_EQ(history[1].spread, 0.25);
  const auto back = RecordsAt(history, 1500);
  EXPECT_EQ(back[0].time, 1100);
  EXPECT_EQ(back[1].time, 1000);
}

TEST(HistoryFileTest, AFileWithoutWorkloadsIsEmpty) {
  auto parsed = ParseHistoryFile(R"({"version": 1})", "h.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->workloads.empty());
}

TEST(HistoryFileTest, BadFilesNameTheField) {
  const std::string good = R"("node": "a", "speed": 1, "samples": 1, "time": 5)";
  struct Case {
    std::string text;
    std::string says;
  } cases[] = {
      {"not json", "h.json"},
      {R"({"version": 2})", "h.json: version: expected an integer in [1, 1]"},
      {R"({"version": 1, "extra": 0})", "unknown field \"extra\""},
      {R"({"version": 1, "workloads": []})", "workloads: expected an object"},
      {R"({"version": 1, "workloads": {"primes": {}}})", "workloads.primes: expected an array"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": -1, "samples": 1,
          "time": 5}]}})",
       "workloads.primes[0].speed: expected a number > 0"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 0,
          "time": 5}]}})",
       "workloads.primes[0].samples"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 1,
          "time": -5}]}})",
       "workloads.primes[0].time"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 1,
          "time": 5, "spread": -1}]}})",
       "workloads.primes[0].spread: expected a number in [0, 1e6]"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "Bad_Name", "speed": 1,
          "samples": 1, "time": 5}]}})",
       "workloads.primes[0].node"},
      {R"({"version": 1, "workloads": {"primes": [{)" + good + "}, {" + good + "}]}}",
       "node a listed twice"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1e999,
          "samples": 1, "time": 5}]}})",
       "h.json"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseHistoryFile(c.text, "h.json");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid) << c.text;
    EXPECT_NE(parsed.status().message().find(c.says), std::string::npos)
        << parsed.status().message();
  }
}

TEST(HistoryFileTest, OversizedFilesAreRefusedBeforeParsing) {
  const std::string huge(kMaxHistoryBytes + 1, ' ');
  EXPECT_FALSE(ParseHistoryFile(huge, "h.json").ok());
}

}  // namespace
}  // namespace ballast::fuzzy
