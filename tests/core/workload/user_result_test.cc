// Tests of the results exec commands hand back (core/workload/user_result.h):
// reading a run's file strictly, merging exactly and in any order, the wire
// form, and the checks the coordinator makes before a merge.
#include "core/workload/user_result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/workload/result.h"

namespace ballast::workload {
namespace {

ResultSpec Spec() {
  ResultSpec spec;
  spec.merge = {{"bytes", MergeRule::kSum},
                {"largest", MergeRule::kMax},
                {"smallest", MergeRule::kMin},
                {"errors", MergeRule::kList}};
  spec.list_limit = 3;
  return spec;
}

UserFields Read(const std::string& text, uint64_t first_item) {
  auto back = ReadResultFile(text, Spec(), {first_item, first_item + 10}, "result file");
  EXPECT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(!back.ok() || back->failed.empty());
  return back.ok() ? back->fields : UserFields{};
}

TEST(UserResultTest, ReadsEachRuleFromARunsFile) {
  UserFields fields = Read(
      R"({"bytes": 1200, "largest": 7.5, "smallest": -2, "errors": ["a: empty", {"f": 1}]})", 40);
  EXPECT_EQ(fields.at("bytes").sum, 1200);
  EXPECT_EQ(fields.at("largest").extreme, 7.5);
  EXPECT_EQ(fields.at("smallest").extreme, -2);
  const FieldTotal& errors = fields.at("errors");
  EXPECT_EQ(errors.count, 2u);
  ASSERT_EQ(errors.kept.size(), 2u);
  EXPECT_EQ(errors.kept[0], (ListEntry{40, 0, "\"a: empty\""}));
  EXPECT_EQ(errors.kept[1], (ListEntry{40, 1, "{\"f\":1}"}));
  EXPECT_TRUE(Read("{}", 0).empty());
}

TEST(UserResultTest, RefusesWhatTheJobDidNotDeclareNamingTheField) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {R"({"byte": 3})",
       "result file: byte: a field the job's result.merge does not declare "
       "(declared: bytes, errors, largest, smallest)"},
      {R"({"bytes": 1.5})", "bytes: `sum` adds whole numbers"},
      {R"({"bytes": "12"})", "bytes: expected an integer in [-9007199254740992, 9007199254740992]"},
      {R"({"bytes": 9007199254740993})", "bytes: expected an integer in"},
      {R"({"largest": "big"})", "largest: expected a number"},
      {R"([1, 2])", "result file: expected a JSON object"},
      {R"({"bytes": )", "result file"},
      {std::string(R"({"errors": [")") + std::string(600, 'e') + "\"]}",
       "errors[0]: a list entry is 602 bytes of JSON, more than 256"},
  };
  for (const Case& c : cases) {
    auto fields = ReadResultFile(c.text, Spec(), {0, 10}, "result file");
    ASSERT_FALSE(fields.ok()) << c.text;
    EXPECT_EQ(fields.status().code(), StatusCode::kInvalid);
    EXPECT_NE(fields.status().message().find(c.expected), std::string::npos)
        << fields.status().message() << "\nexpected: " << c.expected;
  }
}

// `max` of 9007199254740993 was reported as 9007199254740992.0, and 1e-400
// became 0.0: a number the merge cannot keep as written is refused, naming
// its field, rather than changed without a word.
TEST(UserResultTest, ANumberMinOrMaxCannotKeepExactlyIsRefusedNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"({"largest": 9007199254740993})",
       "result file: largest: `min` and `max` keep numbers as doubles, exact for whole numbers up "
       "to 2^53 (9007199254740992), got 9007199254740993"},
      {R"({"smallest": -9007199254740993})", "smallest: `min` and `max` keep numbers as doubles"},
      {R"({"largest": 18446744073709551615})", "largest: `min` and `max` keep numbers as doubles"},
      {R"({"largest": 1e-400})",
       "result file: the number 1e-400 (in \"largest\") is too small for a double, which would "
       "read it as 0"},
      {R"({"errors": [{"tiny": -0.5e-330}]})", "the number -0.5e-330 (in \"tiny\") is too small"},
      {R"({"errors": [1, 1e-9999]})", "the number 1e-9999 (in \"errors\") is too small"},
      // Regression (issue 61): past 64 bits a whole number was a rounded
      // double, kept (1.8446744073709552e+19) instead of refused.
      {R"({"largest": 18446744073709551616})",
       "result file: the whole number 18446744073709551616 (in \"largest\") is past 64 bits"},
      {R"({"smallest": -18446744073709551616})", "the whole number -18446744073709551616"},
      {R"({"errors": [18446744073709551617]})",
       "the whole number 18446744073709551617 (in \"errors\") is past 64 bits"},
  };
  for (const auto& [text, expected] : refused) {
    auto back = ReadResultFile(text, Spec(), {0, 10}, "result file");
    ASSERT_FALSE(back.ok()) << text;
    EXPECT_NE(back.status().message().find(expected), std::string::npos)
        << back.status().message() << "\nexpected: " << expected;
  }
  // At the bounds, and zeros written any way, are kept as written.
  UserFields fields = Read(R"({"largest": 9007199254740992, "smallest": -9007199254740992})", 0);
  EXPECT_EQ(fields.at("largest").extreme, 9007199254740992.0);
  EXPECT_EQ(fields.at("smallest").extreme, -9007199254740992.0);
  for (const char* zero : {"0", "0.0", "-0e-400", "0.000e5", "1e-300"}) {
    SCOPED_TRACE(zero);
    fields = Read(std::string(R"({"largest": )") + zero + "}", 0);
    EXPECT_EQ(fields.at("largest").extreme, std::stod(zero));
  }
}

// A run names its failed items (kFailedItemsKey); its fields are the
// others'. What it names must be its own items, each once.
TEST(UserResultTest, ARunNamesItsFailedItemsBesideTheOthersFields) {
  auto back = ReadResultFile(
      R"({"bytes": 900, "failedItems": [{"item": 14, "error": "corrupt header"}, 12]})", Spec(),
      {10, 20}, "result file");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->fields.at("bytes").sum, 900);
  ASSERT_EQ(back->failed.size(), 2u);
  EXPECT_EQ(back->failed[0], (std::pair<uint64_t, std::string>{12, ""})) << "in item order";
  EXPECT_EQ(back->failed[1], (std::pair<uint64_t, std::string>{14, "corrupt header"}));
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {R"({"failedItems": [20]})", "failedItems[0]: expected an item of the run, 10 to 19, got 20"},
      {R"({"failedItems": [9]})", "failedItems[0]: expected an item of the run, 10 to 19"},
      {R"({"failedItems": [-1]})", "failedItems[0]: expected an item of the run"},
      {R"({"failedItems": [11, 11]})", "failedItems: item 11 is named twice"},
      {R"({"failedItems": 11})", "failedItems: expected a list of the run's items (10 to 19)"},
      {R"({"failedItems": [{"item": 11, "why": "x"}]})", "failedItems[0]"},
      {R"({"failedItems": [{"error": "x"}]})", "failedItems[0].item: missing"},
      {std::string(R"({"failedItems": [{"item": 11, "error": ")") + std::string(300, 'e') +
           R"("}]})",
       "failedItems[0].error: an error of at most 256 bytes, got 300"},
  };
  for (const Case& c : cases) {
    auto refused = ReadResultFile(c.text, Spec(), {10, 20}, "result file");
    ASSERT_FALSE(refused.ok()) << c.text;
    EXPECT_NE(refused.status().message().find(c.expected), std::string::npos)
        << refused.status().message() << "\nexpected: " << c.expected;
  }
}

TEST(UserResultTest, RefusesAFileLargerThanMaxBytesOrNestedTooDeep) {
  ResultSpec spec = Spec();
  spec.max_bytes = 64;
  auto large = ReadResultFile(R"({"bytes": 1})" + std::string(100, ' '), spec, {0, 1}, "f");
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.status().message().find("more than the job's result.maxBytes 64"),
            std::string::npos)
      << large.status().message();
  std::string deep = R"({"errors": )" + std::string(40, '[') + std::string(40, ']') + "}";
  EXPECT_FALSE(ReadResultFile(deep, Spec(), {0, 1}, "f").ok());
}

// Randomized: 60 items, each run's result merged in any grouping and order
// gives the same fields as merging item by item in order.
TEST(UserResultTest, MergesExactlyWhateverTheSplitAndOrder) {
  const unsigned seed = std::random_device{}();
  std::printf("MergesExactlyWhateverTheSplitAndOrder seed=%u\n", seed);
  SCOPED_TRACE(seed);
  std::mt19937 random(seed);
  std::vector<int64_t> bytes(60);
  for (int64_t& b : bytes) b = static_cast<int64_t>(random() % 100000) - 1000;
  // Item i's run: its bytes, and an error entry for every third item.
  auto run = [&](uint64_t begin, uint64_t end) {
    nlohmann::json file = nlohmann::json::object();
    int64_t sum = 0;
    double largest = -1e18;
    double smallest = 1e18;
    nlohmann::json errors = nlohmann::json::array();
    for (uint64_t i = begin; i < end; ++i) {
      sum += bytes[i];
      largest = std::max(largest, static_cast<double>(bytes[i]));
      smallest = std::min(smallest, static_cast<double>(bytes[i]));
      if (i % 3 == 0) errors.push_back("item " + std::to_string(i));
    }
    file = {{"bytes", sum}, {"largest", largest}, {"smallest", smallest}, {"errors", errors}};
    return Read(file.dump(), begin);
  };
  UserFields expected;
  for (uint64_t i = 0; i < bytes.size(); ++i) MergeFields(expected, run(i, i + 1));
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (uint64_t begin = 0; begin < bytes.size();) {
    const uint64_t end = std::min<uint64_t>(bytes.size(), begin + 1 + random() % 9);
    ranges.emplace_back(begin, end);
    begin = end;
  }
  std::shuffle(ranges.begin(), ranges.end(), random);
  UserFields merged;
  for (const auto& [begin, end] : ranges) MergeFields(merged, run(begin, end));
  EXPECT_EQ(merged.at("bytes").sum, expected.at("bytes").sum);
  EXPECT_EQ(merged.at("largest").extreme, expected.at("largest").extreme);
  EXPECT_EQ(merged.at("smallest").extreme, expected.at("smallest").extreme);
  const FieldTotal& errors = merged.at("errors");
  EXPECT_EQ(errors.count, 20u);
  ASSERT_EQ(errors.kept.size(), 3u);  // listLimit
  EXPECT_EQ(errors.kept[0].json, "\"item 0\"");
  EXPECT_EQ(errors.kept[1].json, "\"item 3\"");
  EXPECT_EQ(errors.kept[2].json, "\"item 6\"");
}

TEST(UserResultTest, ASumPastSixtyFourBitsIsMarkedNotWrapped) {
  UserFields total;
  const int64_t big = int64_t{1} << 53;
  for (int i = 0; i < 1100; ++i) {
    MergeFields(total, Read(nlohmann::json{{"bytes", big}}.dump(), static_cast<uint64_t>(i)));
  }
  EXPECT_TRUE(total.at("bytes").overflowed);
  EXPECT_EQ(total.at("bytes").sum, INT64_MAX);
  EXPECT_NE(FieldsSummary(total).find("(overflowed)"), std::string::npos);
}

TEST(UserResultTest, WireFormRoundTripsAndIsCheckedAgainstTheSpec) {
  UserFields fields = Read(R"({"bytes": 5, "largest": 2, "errors": ["x", "y"]})", 9);
  const nlohmann::json wire = FieldsToJson(fields);
  EXPECT_EQ(wire.at("errors").at("list"), nlohmann::json::parse(R"([[9,0,"x"],[9,1,"y"]])"));
  auto back = FieldsFromJson(wire, "fields");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, fields);
  EXPECT_TRUE(CheckFields(*back, Spec()).ok());

  ResultSpec other = Spec();
  other.merge["bytes"] = MergeRule::kMax;
  Status status = CheckFields(*back, other);
  EXPECT_NE(status.message().find("fields.bytes: merged by sum, the job declares max"),
            std::string::npos)
      << status.message();
  other = Spec();
  other.list_limit = 1;
  EXPECT_FALSE(CheckFields(*back, other).ok());
  other = Spec();
  other.merge.erase("largest");
  EXPECT_FALSE(CheckFields(*back, other).ok());

  nlohmann::json forged = wire;
  forged["errors"]["list"] = nlohmann::json::parse(R"([[9,1,"y"],[9,0,"x"]])");
  auto unsorted = FieldsFromJson(forged, "fields");
  ASSERT_TRUE(unsorted.ok());
  EXPECT_NE(CheckFields(*unsorted, Spec()).message().find("not in item order"), std::string::npos);
  forged = wire;
  forged["largest"] = {{"max", 1}, {"min", 2}, {"count", 1}};
  EXPECT_FALSE(FieldsFromJson(forged, "fields").ok());
  forged = wire;
  forged["errors"]["limit"] = 100000;
  EXPECT_FALSE(FieldsFromJson(forged, "fields").ok());
}

TEST(UserResultTest, ExecResultsCarryFieldsAndFailureReasonsThroughJson) {
  Result result = Result::ExecHandedBack(4, Read(R"({"bytes": 10, "errors": "e"})", 0));
  ASSERT_TRUE(result.Merge(Result::ExecFailed({4, 6}, 0, 1, "result file: bytes: expected")).ok());
  ASSERT_TRUE(result.Merge(Result::ExecHandedBack(2, Read(R"({"bytes": 7})", 6))).ok());
  EXPECT_EQ(result.exec().fields.at("bytes").sum, 17);
  EXPECT_EQ(result.FailedItems(), 2u);
  auto back = Result::FromJson(WorkloadKind::kExec, result.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, result);

  const std::vector<std::string> values = {"a", "b", "c", "d", "e.jpg", "f.jpg", "g", "h"};
  EXPECT_EQ(result.FailedValues(values, 10), (std::vector<std::string>{"e.jpg", "f.jpg"}));
  EXPECT_EQ(result.FailedValues(values, 1), (std::vector<std::string>{"e.jpg"}));
  const std::string summary = result.Summary({.values = &values});
  EXPECT_NE(summary.find("6 items succeeded, 2 failed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("bytes=17"), std::string::npos) << summary;
  EXPECT_NE(summary.find("(e.jpg, f.jpg)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("result file: bytes: expected"), std::string::npos) << summary;
  const nlohmann::json status = result.ToStatusJson(&values);
  EXPECT_EQ(status.at("exec").at("failedValues"), nlohmann::json::array({"e.jpg", "f.jpg"}));
  EXPECT_FALSE(result.ToStatusJson(nullptr).at("exec").contains("failedValues"));
}

TEST(UserResultTest, MergeRuleNamesRoundTrip) {
  for (MergeRule rule : {MergeRule::kSum, MergeRule::kMin, MergeRule::kMax, MergeRule::kList}) {
    EXPECT_EQ(ParseMergeRule(MergeRuleName(rule)), rule);
  }
  EXPECT_FALSE(ParseMergeRule("avg"));
}

}  // namespace
}  // namespace ballast::workload
