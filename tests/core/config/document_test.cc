#include "core/config/document.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
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
  auto parsed = ParseYaml(text, "doc.yaml", limits);
  EXPECT_FALSE(parsed.ok()) << text.substr(0, 200);
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid);
  return parsed.status().message();
}

TEST(YamlDocumentLimits, AliasesWithinTheBudgetStillRead) {
  auto root = ParseYaml("base: &base {cpu: a53}\nnodes: [*base, *base]\n", "doc.yaml");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  ASSERT_EQ(root->tree["nodes"].size(), 2u);
  EXPECT_EQ(root->tree["nodes"][1]["cpu"], "a53");
}

TEST(YamlDocumentLimits, NestingAtTheLimitParsesOneMoreIsRefusedWithFileAndLine) {
  YamlLimits limits;
  limits.max_depth = 5;
  EXPECT_TRUE(ParseYaml(FlowNested(5), "doc.yaml", limits).ok());
  EXPECT_EQ(MessageOf("a:\n  b: " + FlowNested(5), limits),
            "doc.yaml:2:9: nested deeper than 5 maps and lists");
}

// yaml-cpp itself stops at 2,000 levels; the readers' walks must not see more
// than 64, and a 60,000-deep text must be refused, not crash the parser.
TEST(YamlDocumentLimits, NestedSixtyThousandDeepIsRefusedNotACrash) {
  EXPECT_EQ(MessageOf(FlowNested(60000)), "doc.yaml:1:65: nested deeper than 64 maps and lists");
  std::string block;
  for (int i = 0; i < 100; ++i) block += std::string(2 * i, ' ') + "k:\n";
  EXPECT_NE(MessageOf(block).find("doc.yaml:65:"), std::string::npos);
}

// Nine levels of ten aliases are 10^8 scalars to any reader that walks the
// tree; the text is 500 bytes. The refusal names the alias that breaks the
// budget, and comes at once.
TEST(YamlDocumentLimits, BillionLaughsAliasBombIsRefusedAtTheAlias) {
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

TEST(YamlDocumentLimits, RepeatedLongScalarCountsItsBytes) {
  YamlLimits limits;
  limits.min_alias_budget = 10000;
  const std::string text = "s: &s \"" + std::string(1000, 'x') + "\"\nlist: [" +
                           std::string("*s, ") + "*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n";
  EXPECT_NE(MessageOf(text, limits).find("doc.yaml:2:"), std::string::npos);
  limits.min_alias_budget = 20000;
  EXPECT_TRUE(ParseYaml(text, "doc.yaml", limits).ok());
}

TEST(YamlDocumentLimits, AliasThatNestsPastTheLimitIsRefused) {
  YamlLimits limits;
  limits.max_depth = 5;
  const std::string text = "a: &a [[[1]]]\nb: [[*a]]\n";
  EXPECT_EQ(MessageOf(text, limits),
            "doc.yaml:2:6: alias 'a' nests the document deeper than 5 maps and lists");
}

TEST(YamlDocumentLimits, AliasInsideTheNodeItNamesIsRefusedAsACycle) {
  EXPECT_EQ(MessageOf("a: &a [1, *a]\n"),
            "doc.yaml:1:11: alias 'a' is inside the node it names (a cycle)");
  EXPECT_EQ(MessageOf("a: &a {b: *a}\n"),
            "doc.yaml:1:11: alias 'a' is inside the node it names (a cycle)");
}

TEST(YamlDocumentLimits, SizeIsCheckedBeforeParsing) {
  YamlLimits limits;
  limits.max_bytes = 10;
  EXPECT_EQ(MessageOf("a: [1, 2, 3]", limits), "doc.yaml: 12 bytes is over the limit of 10 bytes");
  EXPECT_TRUE(ParseYaml("a: [1, 2]", "doc.yaml", limits).ok());
}

// yaml-cpp spends ~460 bytes on each node: 2 MB of "[a,a,...]" grew the
// process by 460 MB, and the size limit alone allowed 8 million nodes.
TEST(YamlDocumentLimits, NodesPastTheLimitAreRefusedBeforeYamlCppBuildsThem) {
  YamlLimits limits;
  limits.max_nodes = 4;
  EXPECT_TRUE(ParseYaml("[a, b, c]", "doc.yaml", limits).ok());
  EXPECT_EQ(MessageOf("[a, b, c, d]", limits),
            "doc.yaml:1:11: more than 4 maps, lists and scalars");
}

TEST(YamlDocumentLimits, SyntaxErrorStillNamesTheLine) {
  EXPECT_NE(MessageOf("a: 1\nb: [2\n").find("doc.yaml:"), std::string::npos);
  EXPECT_NE(MessageOf("a: *undefined\n").find("not valid YAML"), std::string::npos);
}

TEST(YamlDocumentLimits, EveryShippedYamlFileIsWithinTheDefaultLimits) {
  int files = 0;
  for (const char* dir : {"examples", "crds"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::string(BALLAST_SOURCE_DIR) + "/" + dir)) {
      if (entry.path().extension() != ".yaml") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      auto parsed = ParseYaml(text.str(), entry.path().filename().string());
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      ++files;
    }
  }
  EXPECT_GT(files, 10);
}

using nlohmann::json;

json TreeOf(std::string_view text) {
  auto document = ParseYaml(text, "doc.yaml");
  EXPECT_TRUE(document.ok()) << document.status().ToString();
  return document.ok() ? document->tree : json();
}

// What `kubectl apply` of the same file would send: kubectl's reader is
// YAML 1.1's (go-yaml v2), so yes/no/on/off are booleans and 017 is octal.
TEST(YamlDocumentTree, PlainScalarsAreTypedAsTheCoreSchemaTypesThemQuotedOnesAreStrings) {
  const json tree = TreeOf(
      "int: 8\nneg: -3\nhex: 0x1F\noct: 0o17\nfloat: 2.5\nexp: 1e3\naffirm: true\nnegate: False\n"
      "nothing: ~\nempty:\nword: none\nswitch: on\nquoted: \"8\"\nsingle: 'true'\n"
      "big: 18446744073709551615\nhuge: 99999999999999999999\nversion: 1.2.3\n");
  EXPECT_EQ(tree["int"], 8);
  EXPECT_TRUE(tree["int"].is_number_integer());
  EXPECT_EQ(tree["neg"], -3);
  EXPECT_EQ(tree["hex"], 31);
  EXPECT_EQ(tree["oct"], 15);
  EXPECT_EQ(tree["float"], 2.5);
  EXPECT_EQ(tree["exp"], 1000.0);
  EXPECT_EQ(tree["affirm"], true);
  EXPECT_EQ(tree["negate"], false);
  EXPECT_TRUE(tree["nothing"].is_null());
  EXPECT_TRUE(tree["empty"].is_null());
  EXPECT_EQ(tree["word"], "none");
  EXPECT_EQ(tree["switch"], true);  // YAML 1.1, as kubectl reads it
  EXPECT_EQ(tree["quoted"], "8");
  EXPECT_EQ(tree["single"], "true");
  EXPECT_EQ(tree["big"].get<uint64_t>(), 18446744073709551615ULL);
  EXPECT_TRUE(tree["huge"].is_number_float());
  EXPECT_EQ(tree["version"], "1.2.3");
}

// kubectl sends `n: sum` as {"false": "sum"}; `ballast run` kept "n", so the
// same file meant two things.
TEST(YamlDocumentTree, APlainKeyYamlReadsAsABooleanIsTrueOrFalseAsKubectlSendsIt) {
  const json tree =
      TreeOf("n: 1\nYes: 2\n'y': 3\n\"off\": 4\nname: 5\n8: 6\nnull-ish: {On: 7, \"ON\": 8}\n");
  EXPECT_EQ(tree, json::parse(R"({"false": 1, "true": 2, "y": 3, "off": 4, "name": 5, "8": 6,
                                  "null-ish": {"true": 7, "ON": 8}})"));
  // Two keys that are one boolean are one key written twice, as in kubectl.
  EXPECT_EQ(MessageOf("y: 1\nyes: 2\n"), "doc.yaml:2:1: true: written twice in one map");
}

TEST(YamlDocumentTree, PlainScalarResolutionEdgeCases) {
  for (const char* yes : {"yes", "Yes", "YES", "on", "On", "ON", "y", "Y", "true", "True"}) {
    EXPECT_EQ(ResolvePlainScalar(yes), true) << yes;
  }
  for (const char* no : {"no", "No", "NO", "off", "Off", "OFF", "n", "N", "false", "FALSE"}) {
    EXPECT_EQ(ResolvePlainScalar(no), false) << no;
  }
  EXPECT_EQ(ResolvePlainScalar("yEs"), "yEs");
  EXPECT_EQ(ResolvePlainScalar("017"), 15);
  EXPECT_EQ(ResolvePlainScalar("0"), 0);
  EXPECT_EQ(ResolvePlainScalar("-017"), -15);
  EXPECT_EQ(ResolvePlainScalar("09"), 9.0);  // not octal: a float, as kubectl reads it
  EXPECT_TRUE(ResolvePlainScalar(".inf").is_number_float());
  EXPECT_LT(ResolvePlainScalar("-.inf").get<double>(), 0);
  EXPECT_TRUE(std::isnan(ResolvePlainScalar(".nan").get<double>()));
  EXPECT_EQ(ResolvePlainScalar("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ResolvePlainScalar("+5"), 5);
  EXPECT_EQ(ResolvePlainScalar(".5"), 0.5);
  EXPECT_EQ(ResolvePlainScalar("1e"), "1e");
  EXPECT_EQ(ResolvePlainScalar("0x"), "0x");
  EXPECT_EQ(ResolvePlainScalar("0o8"), "0o8");
  EXPECT_EQ(ResolvePlainScalar("1e999").get<double>(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ResolvePlainScalar("-"), "-");
  EXPECT_EQ(ResolvePlainScalar("12abc"), "12abc");
}

TEST(YamlDocumentTree, EveryValueHasItsPositionByPath) {
  auto document = ParseYaml("spec:\n  nodes:\n    - name: a\n      speed: 0.5\n", "c.yaml");
  ASSERT_TRUE(document.ok());
  const SourceMap& source = document->source;
  ASSERT_TRUE(source.Find("spec.nodes[0].speed"));
  EXPECT_EQ(source.Find("spec.nodes[0].speed")->line, 4);
  EXPECT_EQ(source.Find("spec.nodes[0].speed")->column, 14);
  // A path that was not written falls back to its nearest written ancestor.
  EXPECT_EQ(source.Find("spec.nodes[0].labels.x")->line, 3);
  EXPECT_EQ(source.Find("spec.nodes[0].name")->line, 3);
}

TEST(YamlDocumentTree, LocatePutsTheFileAndLineOfTheMessagesPathInFront) {
  auto document = ParseYaml("a:\n  b: [1, 2]\n", "x.yaml");
  ASSERT_TRUE(document.ok());
  const SourceMap& source = document->source;
  EXPECT_EQ(source.Locate(Status::Invalid("a.b[1]: expected a string, got 2")).message(),
            "x.yaml:2:10: a.b[1]: expected a string, got 2");
  EXPECT_EQ(source.Locate(Status::Invalid("a.c: missing")).message(),
            "x.yaml:1:1: a.c: missing");  // a block map is where its key is
  EXPECT_EQ(source.Locate(Status::Invalid("no path here")).message(), "x.yaml: no path here");
  EXPECT_TRUE(source.Locate(Status::Ok()).ok());
  EXPECT_EQ(source.Locate(Status::NotFound("a: gone")).code(), StatusCode::kNotFound);
  // A tree from the API server has no file: the message stays as it is.
  EXPECT_EQ(SourceMap().Locate(Status::Invalid("a: x")).message(), "a: x");
}

TEST(YamlDocumentTree, AKeyWrittenTwiceOrAKeyThatIsNotAScalarIsRefusedWithItsLine) {
  EXPECT_EQ(MessageOf("a: 1\nb:\n  c: 1\n  c: 2\n"), "doc.yaml:4:3: b.c: written twice in one map");
  EXPECT_NE(MessageOf("? [1, 2]\n: x\n").find("expected a key that is a string"),
            std::string::npos);
}

TEST(YamlDocumentTree, TextThatIsNotUtf8IsRefusedSoEveryTreeDumpsAsJson) {
  EXPECT_NE(MessageOf("name: \"ACME board \xe9\"\n").find("doc.yaml:1:19: byte 0xe9 is not UTF-8"),
            std::string::npos);
  const json tree = TreeOf("name: \"caf\xc3\xa9\"\n");
  EXPECT_EQ(tree.dump(), "{\"name\":\"caf\xc3\xa9\"}");
}

// Regression (the job fuzz target): yaml-cpp read a key holding NUL and
// other control bytes into garbage that was not UTF-8, so the tree did not
// dump. YAML allows no control characters but tab, line feed and carriage
// return: they are refused with their line.
TEST(YamlDocumentTree, ControlCharactersAreRefusedWithTheirLine) {
  const std::string text("n\0\0\0\x02\ns : & workload: *s\n", 25);
  EXPECT_EQ(MessageOf(text),
            "doc.yaml:1:2: byte 0x00 is a control character, which YAML does not allow");
  EXPECT_NE(MessageOf("a: 1\nb: \"\x7f\"\n").find("doc.yaml:2:5: byte 0x7f"), std::string::npos);
  EXPECT_NE(MessageOf("a: \"\xc2\x9b\"\n").find("doc.yaml:1:5: byte 0xc2"), std::string::npos);
  EXPECT_EQ(TreeOf("a: \"tab\there\"\r\nb: \"\xc2\x85 next line\"\n")["a"], "tab\there");
}

TEST(YamlDocumentTree, AnEmptyDocumentIsNull) { EXPECT_TRUE(TreeOf("").is_null()); }

}  // namespace
}  // namespace ballast::config
