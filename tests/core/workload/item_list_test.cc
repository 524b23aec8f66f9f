// Tests of item lists (core/workload/item_list.h) and of attaching them to a
// workload (workload.h AttachItems): what a list may hold, where an error is
// named, and the lines a command reads.
#include "core/workload/item_list.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/workload/workload.h"

namespace ballast::workload {
namespace {

// Why ParseItemLines refused `text`; "" when it did not.
std::string RefusalOf(std::string_view text, LineFormat format, std::string_view where) {
  auto list = ParseItemLines(text, format, where);
  return list.ok() ? "" : list.status().message();
}

TEST(ItemListTest, ReadsOneValueALineSkippingBlankLinesAndCarriageReturns) {
  auto list = ParseItemLines("photos/a.jpg\n\n  \nphotos/b c.jpg\r\nphotos/d.jpg",
                             LineFormat::kValue, "list.txt");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->values,
            (std::vector<std::string>{"photos/a.jpg", "photos/b c.jpg", "photos/d.jpg"}));
  EXPECT_TRUE(list->costs.empty());
}

TEST(ItemListTest, ReadsCostsAsDuAndFindPrintThem) {
  auto list = ParseItemLines("20480\ta.jpg\n512   b dir/c.jpg\n1.5e3 d.jpg\n",
                             LineFormat::kCostValue, "sizes");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->values, (std::vector<std::string>{"a.jpg", "b dir/c.jpg", "d.jpg"}));
  EXPECT_EQ(list->costs, (std::vector<double>{20480, 512, 1500}));
}

TEST(ItemListTest, NamesTheLineAndWhatIsWrong) {
  struct Case {
    std::string text;
    LineFormat format;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"a\nb\x01x\n", LineFormat::kValue,
       "sizes:2: an item's value holds the control character U+0001 at byte 1"},
      {"a\n\xff\xfe\n", LineFormat::kValue, "sizes:2: an item's value is not UTF-8"},
      {"10 a\nnocost\n", LineFormat::kCostValue, "sizes:2: expected \"<cost> <value>\""},
      {"10 a\nx1 b\n", LineFormat::kCostValue, "sizes:2: expected a cost (a number > 0)"},
      {"10 a\n\n0 b\n", LineFormat::kCostValue, "sizes:3: expected a cost > 0"},
      {"-3 a\n", LineFormat::kCostValue, "sizes:1: expected a cost > 0"},
      {"nan a\n", LineFormat::kCostValue, "sizes:1: expected a cost > 0"},
      {"1e300 a\n", LineFormat::kCostValue, "sizes:1: expected a cost > 0 and <= 1e+15"},
      {"10\t\n", LineFormat::kCostValue, "sizes:1: expected a value after the cost 10"},
      {"5 a\n7   \n", LineFormat::kCostValue, "sizes:2: expected a value after the cost 7"},
      {"\n \n", LineFormat::kValue, "sizes: no items"},
      {std::string(kMaxItemValueBytes + 1, 'v'), LineFormat::kValue,
       "sizes:1: an item's value is 4097 bytes"},
  };
  for (const Case& c : cases) {
    auto list = ParseItemLines(c.text, c.format, "sizes");
    ASSERT_FALSE(list.ok()) << c.expected;
    EXPECT_EQ(list.status().code(), StatusCode::kInvalid);
    EXPECT_NE(list.status().message().find(c.expected), std::string::npos)
        << list.status().message() << "\nexpected: " << c.expected;
  }
}

TEST(ItemListTest, RefusesMoreItemsOrBytesThanTheBounds) {
  std::string many;
  for (size_t i = 0; i <= kMaxListedItems; ++i) many += "x\n";
  auto too_many = ParseItemLines(many, LineFormat::kValue, "many");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("many:100001: more than 100000 items"),
            std::string::npos)
      << too_many.status().message();

  std::string long_values;
  const std::string value(4000, 'p');
  while (long_values.size() <= kMaxItemListBytes) long_values += value + "\n";
  EXPECT_EQ(RefusalOf(long_values, LineFormat::kValue, "long"),
            "long:197: the list takes more than 768 KiB as sent to every worker (its values and "
            "costs as JSON)");
}

// The bound counted 3 bytes a value and 24 a cost, whatever they were:
// lists with costs stopped near 28,000 items. It counts the list as the
// workers receive it, exactly.
TEST(ItemListTest, TheListsBytesAreItsJsonAsSent) {
  const std::vector<std::string> values = {"a.jpg", "say \"hi\"", "c:\\x"};
  const std::vector<double> costs = {2048000, 0.1, 1.5e15 / 2};
  size_t bytes = 0;
  for (const std::string& value : values) bytes += nlohmann::json(value).dump().size() + 1;
  for (const double cost : costs) bytes += nlohmann::json(cost).dump().size() + 1;
  EXPECT_EQ(ItemListBytes(values, costs), bytes);
  EXPECT_EQ(ItemListBytes({"a.jpg"}, {2048000}), 8u + 10u);  // "a.jpg", 2048000.0,

  // 35,000 costed paths of 8 bytes take 21 bytes each and fit; counted as
  // 24 a cost and 3 a value they took 35 and did not.
  std::string costed;
  for (int i = 0; i < 35'000; ++i) costed += fmt::format("2048000\tp/{:06d}\n", i);
  auto fits = ParseItemLines(costed, LineFormat::kCostValue, "sizes");
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_EQ(fits->values.size(), 35'000u);
  EXPECT_EQ(ItemListBytes(fits->values, fits->costs), 35'000u * 21);

  // A list of one-byte values takes 4 bytes each: the item bound comes first.
  std::string small;
  for (size_t i = 0; i < kMaxListedItems; ++i) small += "x\n";
  EXPECT_TRUE(ParseItemLines(small, LineFormat::kValue, "small").ok());
  // Quotes count twice, as sent.
  std::string quoted;
  for (int i = 0; i < 72'000; ++i) quoted += "\"\"\"\"\n";  // 4 quotes: 11 bytes sent
  EXPECT_EQ(
      RefusalOf(quoted, LineFormat::kValue, "quoted").rfind("quoted:71494: the list takes", 0), 0u);
}

// The offset was &c - value.data() with c a copy of the byte: a garbage
// number that changed from run to run.
TEST(ItemListTest, ARefusedCharactersOffsetIsItsByteInTheValue) {
  const Status status = CheckItemValue("abc\x7f", "list.txt:3");
  EXPECT_EQ(status.message(),
            "list.txt:3: an item's value holds the control character U+007F at byte 3");
  EXPECT_EQ(CheckItemValue("\ta", "w").message(),
            "w: an item's value holds the control character U+0009 at byte 0");
  EXPECT_EQ(CheckItemValue("\xc3\xa9t\xc3\xa9\x1b", "w").message(),
            "w: an item's value holds the control character U+001B at byte 5");
}

// U+0085 (a line break to some tools) and U+FEFF were accepted; a BOM
// before the first line made the first value start with an invisible
// character.
TEST(ItemListTest, InvisibleAndLineBreakingCharactersAreRefusedAndALeadingBomIsDropped) {
  struct Case {
    std::string value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"a\xc2\x85"
       "b",
       "w: an item's value holds the control character U+0085 at byte 1"},
      {"\xc2\x9f", "w: an item's value holds the control character U+009F at byte 0"},
      {"ab\xe2\x80\xa8", "w: an item's value holds the line break U+2028 at byte 2"},
      {"\xe2\x80\xa9", "w: an item's value holds the line break U+2029 at byte 0"},
      {"\xef\xbb\xbf"
       "a",
       "w: an item's value holds the invisible byte-order mark U+FEFF at byte 0"},
  };
  for (const Case& c : cases) EXPECT_EQ(CheckItemValue(c.value, "w").message(), c.expected);
  // Their neighbours are text.
  for (const char* fine :
       {"\xc2\xa0", "\xc2\xa9", "\xe2\x80\xa7", "\xef\xbb\xbe", "\xf0\x9f\x93\xb7"}) {
    EXPECT_TRUE(CheckItemValue(fine, "w").ok()) << fine;
  }
  auto list = ParseItemLines(
      "\xef\xbb\xbf"
      "a.jpg\nb.jpg\n",
      LineFormat::kValue, "bom.txt");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->values, (std::vector<std::string>{"a.jpg", "b.jpg"}));
  auto costed = ParseItemLines(
      "\xef\xbb\xbf"
      "12 a.jpg\n",
      LineFormat::kCostValue, "bom.txt");
  ASSERT_TRUE(costed.ok()) << costed.status().message();
  EXPECT_EQ(costed->costs, std::vector<double>{12});
  // Only before the first line: elsewhere it is in a value.
  EXPECT_EQ(RefusalOf("a.jpg\n\xef\xbb\xbf"
                      "b.jpg\n",
                      LineFormat::kValue, "bom.txt"),
            "bom.txt:2: an item's value holds the invisible byte-order mark U+FEFF at byte 0");
}

// "  12 a.jpg" was refused as `got ""`: the blanks `wc -c` puts before its
// numbers are skipped, and a bad cost is shown as written.
TEST(ItemListTest, ACostMayFollowBlanksAndABadOneIsShownAsWritten) {
  auto list = ParseItemLines("  12 a.jpg\n\t 7\tb.jpg\n1234 c.jpg\n", LineFormat::kCostValue, "wc");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->values, (std::vector<std::string>{"a.jpg", "b.jpg", "c.jpg"}));
  EXPECT_EQ(list->costs, (std::vector<double>{12, 7, 1234}));
  EXPECT_EQ(RefusalOf("1 a\n   12k b.jpg\n", LineFormat::kCostValue, "wc"),
            "wc:2: expected a cost (a number > 0) before the value, got \"12k\"");
  EXPECT_EQ(RefusalOf("   12\n", LineFormat::kCostValue, "wc"),
            "wc:1: expected \"<cost> <value>\" (format cost-value), got \"12\"");
}

TEST(ItemListTest, ItemLinesAreTheValuesOfTheRangeOneALine) {
  const std::vector<std::string> values = {"a", "b c", "d", "e"};
  EXPECT_EQ(ItemLines(values, 1, 3), "b c\nd\n");
  EXPECT_EQ(ItemLines(values, 2, 2), "");
}

TEST(ItemListTest, LineFormatNamesRoundTrip) {
  for (LineFormat format : {LineFormat::kValue, LineFormat::kCostValue}) {
    EXPECT_EQ(ParseLineFormat(LineFormatName(format)), format);
  }
  EXPECT_FALSE(ParseLineFormat("csv"));
}

WorkloadSpec ExecSpecOf() {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kExec;
  spec.exec.command = {"true"};
  return spec;
}

TEST(AttachItemsTest, GivesAnExecWorkloadItsValuesAndCosts) {
  WorkloadSpec spec = ExecSpecOf();
  ASSERT_TRUE(AttachItems(&spec, {{"a", "b", "c"}, {1, 2, 3}}, "spec.items.list").ok());
  EXPECT_EQ(spec.items, 3u);
  ASSERT_NE(spec.item_values, nullptr);
  EXPECT_EQ((*spec.item_values)[2], "c");
  ASSERT_NE(spec.item_costs, nullptr);
  EXPECT_EQ((*spec.item_costs)[1], 2);
  EXPECT_TRUE(ValidateWorkload(spec).ok());

  WorkloadSpec uncosted = ExecSpecOf();
  ASSERT_TRUE(AttachItems(&uncosted, {{"a"}, {}}, "list").ok());
  EXPECT_EQ(uncosted.item_costs, nullptr);
}

TEST(AttachItemsTest, RefusesOtherWorkloadsAndMismatchedLists) {
  WorkloadSpec primes;
  primes.kind = WorkloadKind::kPrimes;
  primes.primes.limit = 100;
  Status status = AttachItems(&primes, {{"a"}, {}}, "spec.items.list");
  EXPECT_NE(status.message().find("spec.items.list: a list of items is for exec workloads"),
            std::string::npos)
      << status.message();

  WorkloadSpec spec = ExecSpecOf();
  status = AttachItems(&spec, {{"a", "b"}, {1}}, "list");
  EXPECT_NE(status.message().find("1 costs for 2 items"), std::string::npos) << status.message();
  status = AttachItems(&spec, {{"a", ""}, {}}, "list");
  EXPECT_NE(status.message().find("list[1]: an item's value is empty"), std::string::npos)
      << status.message();
  status = AttachItems(&spec, {{"a"}, {-1}}, "list");
  EXPECT_NE(status.message().find("list[0]: expected a cost > 0"), std::string::npos)
      << status.message();
}

TEST(AttachItemsTest, SpecsWithEqualListsCompareEqual) {
  WorkloadSpec a = ExecSpecOf();
  WorkloadSpec b = ExecSpecOf();
  ASSERT_TRUE(AttachItems(&a, {{"x", "y"}, {}}, "a").ok());
  ASSERT_TRUE(AttachItems(&b, {{"x", "y"}, {}}, "b").ok());
  EXPECT_EQ(a, b);
  WorkloadSpec c = ExecSpecOf();
  ASSERT_TRUE(AttachItems(&c, {{"x", "z"}, {}}, "c").ok());
  EXPECT_FALSE(a == c);
  WorkloadSpec d = ExecSpecOf();
  ASSERT_TRUE(AttachItems(&d, {{"x", "y"}, {1, 1}}, "d").ok());
  EXPECT_FALSE(a == d);
}

TEST(AttachItemsTest, TheListTravelsToWorkersAndBack) {
  WorkloadSpec spec = ExecSpecOf();
  spec.exec.result.merge = {{"bytes", MergeRule::kSum}, {"names", MergeRule::kList}};
  spec.exec.result.keep_dir = "/data/results";
  ASSERT_TRUE(AttachItems(&spec, {{"a.jpg", "b.jpg"}, {10, 20.5}}, "list").ok());
  auto back = WorkloadFromJson(WorkloadToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, spec);

  nlohmann::json tampered = WorkloadToJson(spec);
  tampered["values"][1] = "b\nc";
  auto refused = WorkloadFromJson(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("control character"), std::string::npos)
      << refused.status().message();
  tampered = WorkloadToJson(spec);
  tampered["costs"] = {1};
  refused = WorkloadFromJson(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("workload.costs: expected a list of 2 costs"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace ballast::workload
