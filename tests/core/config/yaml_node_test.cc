#include "core/config/yaml_node.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ballast::config {
namespace {

std::string FlowNested(int depth) {
  return std::string(depth, '[') + "1" + std::string(depth, ']');
}

// "Billion laughs": level 0 is a scalar, each further level a list of ten
// aliases of the one before; `levels` of them expand to 10^(levels-1) scalars.
std::string AliasBomb(int levels) {
  std::string text = "l0: &l0 \"lol\"\n";
  for (int level = 1; level < levels; ++level) {
    text += fmt::format("l{}: &l{} [", level, level);
    for (int i = 0; i < 10; ++i) text += fmt::format("{}*l{}", i ? ", " : "", level - 1);
    text += "]\n";
  }
  return text;
}

std::string MessageOf(std::string_view text, const YamlLimits& limits = {}) {
  auto parsed = YamlNode::Parse(text, "doc.yaml", limits);
  EXPECT_FALSE(parsed.ok()) << text.substr(0, 200);
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid);
  return parsed.status().message();
}

TEST(YamlNodeLimits, AliasesWithinTheBudgetStillRead) {
  auto root = YamlNode::Parse("base: &base {cpu: a53}\nnodes: [*base, *base]\n", "doc.yaml");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  auto nodes = root->Require("nodes");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->Elements().size(), 2u);
  EXPECT_EQ(*nodes->Elements()[1].Require("cpu")->AsString(), "a53");
}

TEST(YamlNodeLimits, NestingAtTheLimitParsesOneMoreIsRefusedWithFileAndLine) {
  YamlLimits limits;
  limits.max_depth = 5;
  EXPECT_TRUE(YamlNode::Parse(FlowNested(5), "doc.yaml", limits).ok());
  EXPECT_EQ(MessageOf("a:\n  b: " + FlowNested(5), limits),
            "doc.yaml:2:9: nested deeper than 5 maps and lists");
}

// yaml-cpp itself stops at 2,000 levels; the readers' walks must not see more
// than 64, and a 60,000-deep text must be refused, not crash the parser.
TEST(YamlNodeLimits, NestedSixtyThousandDeepIsRefusedNotACrash) {
  EXPECT_EQ(MessageOf(FlowNested(60000)), "doc.yaml:1:65: nested deeper than 64 maps and lists");
  std::string block;
  for (int i = 0; i < 100; ++i) block += std::string(2 * i, ' ') + "k:\n";
  EXPECT_NE(MessageOf(block).find("doc.yaml:65:"), std::string::npos);
}

// Nine levels of ten aliases are 10^8 scalars to any reader that walks the
// tree; the text is 500 bytes. The refusal names the alias that breaks the
// budget, and comes at once.
TEST(YamlNodeLimits, BillionLaughsAliasBombIsRefusedAtTheAlias) {
  const auto start = std::chrono::steady_clock::now();
  const std::string message = MessageOf(AliasBomb(9));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(message.find("doc.yaml:7:15:"), std::string::npos) << message;
  EXPECT_NE(message.find("alias 'l5' takes what aliases repeat past 1048576 nodes and bytes"),
            std::string::npos)
      << message;
  std::printf("alias bomb of 9 levels refused in %.3f ms\n", seconds * 1e3);
}

TEST(YamlNodeLimits, RepeatedLongScalarCountsItsBytes) {
  YamlLimits limits;
  limits.min_alias_budget = 10000;
  const std::string text = "s: &s \"" + std::string(1000, 'x') + "\"\nlist: [" +
                           std::string("*s, ") + "*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n";
  EXPECT_NE(MessageOf(text, limits).find("doc.yaml:2:"), std::string::npos);
  limits.min_alias_budget = 20000;
  EXPECT_TRUE(YamlNode::Parse(text, "doc.yaml", limits).ok());
}

TEST(YamlNodeLimits, AliasThatNestsPastTheLimitIsRefused) {
  YamlLimits limits;
  limits.max_depth = 5;
  const std::string text = "a: &a [[[1]]]\nb: [[*a]]\n";
  EXPECT_EQ(MessageOf(text, limits),
            "doc.yaml:2:6: alias 'a' nests the document deeper than 5 maps and lists");
}

TEST(YamlNodeLimits, AliasInsideTheNodeItNamesIsRefusedAsACycle) {
  EXPECT_EQ(MessageOf("a: &a [1, *a]\n"),
            "doc.yaml:1:11: alias 'a' is inside the node it names (a cycle)");
  EXPECT_EQ(MessageOf("a: &a {b: *a}\n"),
            "doc.yaml:1:11: alias 'a' is inside the node it names (a cycle)");
}

TEST(YamlNodeLimits, SizeIsCheckedBeforeParsing) {
  YamlLimits limits;
  limits.max_bytes = 10;
  EXPECT_EQ(MessageOf("a: [1, 2, 3]", limits), "doc.yaml: 12 bytes is over the limit of 10 bytes");
  EXPECT_TRUE(YamlNode::Parse("a: [1, 2]", "doc.yaml", limits).ok());
}

// yaml-cpp spends ~460 bytes on each node: 2 MB of "[a,a,...]" grew the
// process by 460 MB, and the size limit alone allowed 8 million nodes.
TEST(YamlNodeLimits, NodesPastTheLimitAreRefusedBeforeYamlCppBuildsThem) {
  YamlLimits limits;
  limits.max_nodes = 4;
  EXPECT_TRUE(YamlNode::Parse("[a, b, c]", "doc.yaml", limits).ok());
  EXPECT_EQ(MessageOf("[a, b, c, d]", limits),
            "doc.yaml:1:11: more than 4 maps, lists and scalars");
}

TEST(YamlNodeLimits, SyntaxErrorStillNamesTheLine) {
  EXPECT_NE(MessageOf("a: 1\nb: [2\n").find("doc.yaml:"), std::string::npos);
  EXPECT_NE(MessageOf("a: *undefined\n").find("not valid YAML"), std::string::npos);
}

TEST(YamlNodeLimits, EveryShippedYamlFileIsWithinTheDefaultLimits) {
  int files = 0;
  for (const char* dir : {"examples", "crds"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::string(BALLAST_SOURCE_DIR) + "/" + dir)) {
      if (entry.path().extension() != ".yaml") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      auto parsed = YamlNode::Parse(text.str(), entry.path().filename().string());
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      ++files;
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace ballast::config
