#include "core/common/bounded_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace ballast {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(BoundedJson, ParsesWhatIsWithinTheLimits) {
  auto parsed = ParseBoundedJson(R"({"a": [1, 2, {"b": "c"}], "d": null})", "body");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ((*parsed)["a"][2]["b"], "c");
  EXPECT_TRUE((*parsed)["d"].is_null());
}

TEST(BoundedJson, DepthAtTheLimitParsesOneMoreIsRefused) {
  JsonLimits limits;
  limits.max_depth = 10;
  EXPECT_TRUE(ParseBoundedJson(Nested(10), "body", limits).ok());
  auto deep = ParseBoundedJson(Nested(11), "body", limits);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(deep.status().message(), "body: nested deeper than 10 arrays or objects");
}

// Guards the coordinator's crash: a report nested 60,000 deep overflowed the
// stack of code that walked the parsed value.
TEST(BoundedJson, ArrayNestedSixtyThousandDeepIsRefusedWithoutRecursion) {
  auto deep = ParseBoundedJson(Nested(60000), "report");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nested deeper than 64"), std::string::npos);
  // Unbalanced: the parse stops at the limit, long before the end.
  EXPECT_FALSE(ParseBoundedJson(std::string(1000000, '{'), "report").ok());
}

TEST(BoundedJson, SizeIsCheckedBeforeParsing) {
  JsonLimits limits;
  limits.max_bytes = 8;
  auto big = ParseBoundedJson("[1,2,3,4,5]", "body", limits);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), "body: 11 bytes is over the limit of 8 bytes");
}

TEST(BoundedJson, GarbageNamesWhereParsingStopped) {
  for (const char* text : {"", "{", "[1,]", "{\"a\" 1}", "nul", "1 2", "\"\\u12\""}) {
    auto parsed = ParseBoundedJson(text, "body");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message().rfind("body: not JSON at byte ", 0), 0u)
        << parsed.status().message();
  }
}

// The library's message quotes the whole token it last read, a control
// character as 8 bytes: 243 tabs and a bad literal once made a 2 KiB error
// (found by fuzz_result).
TEST(BoundedJson, AnErrorStaysShortWhateverTheTextHeld) {
  const std::string text = std::string(1000, '\t') + "I0" + std::string(1000, '\t') + "I0";
  auto parsed = ParseBoundedJson(text, "body");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().rfind("body: not JSON at byte ", 0), 0u);
  EXPECT_LE(parsed.status().message().size(), 400u) << parsed.status().message();
}

// 1e-400 read as 0 without a word (a result file's `max` became 0.0).
TEST(BoundedJson, ANumberThatUnderflowsToZeroIsRefusedNamingItsKey) {
  auto top = ParseBoundedJson(R"({"a": 1, "least": 1e-400})", "result");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().message(),
            "result: the number 1e-400 (in \"least\") is too small for a double, which would read "
            "it as 0");
  auto nested = ParseBoundedJson(R"({"a": {"b": 1}, "c": [2, -0.00001e-320]})", "body");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("the number -0.00001e-320 (in \"c\")"),
            std::string::npos)
      << nested.status().message();
  auto bare = ParseBoundedJson("[1E-999]", "body");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().message(),
            "body: the number 1E-999 is too small for a double, which would read it as 0");
  // Zeros however written, and small numbers a double holds, are numbers.
  auto fine = ParseBoundedJson("[0, 0.0, -0.0, 0e-999, 0.000E+5, 1e-300, 4.9e-324]", "body");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->size(), 7u);
}

// Regression (issue 61): a whole number past 64 bits was read as a double,
// rounded: a result file's `max` of 18446744073709551616 + 1 became
// 1.8446744073709552e+19, a `list` entry written back as that.
TEST(BoundedJson, AWholeNumberPast64BitsIsRefusedNotRounded) {
  auto max = ParseBoundedJson(R"({"largest": 18446744073709551617})", "result");
  ASSERT_FALSE(max.ok());
  EXPECT_EQ(max.status().message(),
            "result: the whole number 18446744073709551617 (in \"largest\") is past 64 bits "
            "(-2^63 to 2^64 - 1), which would round it");
  for (const char* text : {"[18446744073709551616]", "[-9223372036854775809]",
                           "[123456789012345678901234567890123456789012345678901234567890]"}) {
    auto parsed = ParseBoundedJson(text, "body");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find("is past 64 bits"), std::string::npos)
        << parsed.status().message();
    EXPECT_LE(parsed.status().message().size(), 160u) << parsed.status().message();
  }
  // The edges of 64 bits are whole numbers still; with a point or an
  // exponent a number is a double by its writer's choice.
  auto fine = ParseBoundedJson(
      "[18446744073709551615, -9223372036854775808, 18446744073709551616.0, 1.8e19, 2e300]",
      "body");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ((*fine)[0].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ((*fine)[1].get<int64_t>(), INT64_MIN);
}

}  // namespace
}  // namespace ballast
