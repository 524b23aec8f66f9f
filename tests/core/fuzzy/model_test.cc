// Tests of the fuzzy weight model (core/fuzzy/model.h): the golden Table 2 of
// Zubov & Kupin, rounding, lower-is-better, defaults and warnings.
#include "core/fuzzy/model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {
namespace {

// The three nodes of Table 1, as examples/nodes/seed000.yaml describes them.
std::vector<NodeFacts> Table1Nodes() {
  return {
      {"pi4b-master",
       {{"node-role.kubernetes.io/control-plane", "true"},
        {"ballast.io/cpu-model", "cortex-a72"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/ram-mb", "2048"},
        {"ballast.io/sd-gb", "8"},
        {"ballast.io/power-w", "6.4"},
        {"ballast.io/os-release", "2020-08-24"}}},
      {"pi4b-worker",
       {{"ballast.io/cpu-model", "cortex-a72"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/ram-mb", "2048"},
        {"ballast.io/sd-gb", "8"},
        {"ballast.io/power-w", "6.4"},
        {"ballast.io/os-release", "2020-08-24"}}},
      {"pi3b-worker",
       {{"ballast.io/cpu-model", "cortex-a53"},
        {"ballast.io/os-bits", "32"},
        {"ballast.io/ram-mb", "1024"},
        {"ballast.io/sd-gb", "4"},
        {"ballast.io/power-w", "5.1"},
        {"ballast.io/os-release", "2021-01-11"}}},
  };
}

// One column of Table 2: z_ij and mu_ij for the criteria z1..z7 (cpu, os-bits,
// ram, control-plane, sd, power, os-release), v_j and the weight.
struct Table2Column {
  std::string node;
  std::vector<double> values;
  std::vector<double> memberships;
  double score;
  double weight;
};

// Table 2 of the paper. The paper prints mu_6 = 5.1/6.4 as 0.8; we hold the
// exact quotient. Scores are the paper's three decimals.
const std::vector<Table2Column> kTable2 = {
    {"pi4b-master", {5, 5, 5, 3, 8, 6.4, 3}, {1, 1, 1, 0.6, 1, 5.1 / 6.4, 0.6}, 0.975, 5},
    {"pi4b-worker", {5, 5, 5, 5, 8, 6.4, 3}, {1, 1, 1, 1, 1, 5.1 / 6.4, 0.6}, 0.985, 5},
    {"pi3b-worker", {1, 1, 3, 5, 4, 5.1, 5}, {0.2, 0.2, 0.6, 1, 0.5, 1, 1}, 0.229, 1},
};

const std::vector<std::string> kTable1Criteria = {"cpu", "os-bits", "ram",       "control-plane",
                                                  "sd",  "power",   "os-release"};

void ExpectTable2(const WeightResult& result) {
  ASSERT_EQ(result.nodes.size(), kTable2.size());
  for (size_t j = 0; j < kTable2.size(); ++j) {
    const Table2Column& expected = kTable2[j];
    const NodeWeight& node = result.nodes[j];
    SCOPED_TRACE(expected.node);
    EXPECT_EQ(node.name, expected.node);
    ASSERT_EQ(node.criteria.size(), kTable1Criteria.size());
    for (size_t i = 0; i < kTable1Criteria.size(); ++i) {
      SCOPED_TRACE(kTable1Criteria[i]);
      EXPECT_EQ(node.criteria[i].name, kTable1Criteria[i]);
      EXPECT_DOUBLE_EQ(node.criteria[i].value, expected.values[i]);
      EXPECT_NEAR(node.criteria[i].membership, expected.memberships[i], 1e-12);
    }
    EXPECT_NEAR(node.score, expected.score, 0.002);
    EXPECT_EQ(node.weight, expected.weight);
  }
  // Relative weights are v_j / v_3 (the paper's 4.258 and 4.301 divide the
  // rounded scores; unrounded they are 4.253 and 4.297).
  EXPECT_NEAR(result.nodes[0].relative, 4.253, 0.001);
  EXPECT_NEAR(result.nodes[1].relative, 4.297, 0.001);
  EXPECT_DOUBLE_EQ(result.nodes[2].relative, 1.0);
}

TEST(FuzzyModelTest, GoldenTable2WithBuiltinProfile) {
  auto profile = BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto result = ComputeWeights(*profile, Table1Nodes());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectTable2(*result);
  // The workers lack the optional control-plane label: silently the norm.
  EXPECT_TRUE(result->warnings.empty()) << result->warnings.front();
}

TEST(FuzzyModelTest, GoldenTable2FromShippedFiles) {
  auto read = [](const std::string& path) {
    std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/" + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  ASSERT_FALSE(read("crds/profiles/raspberry-pi.yaml").empty());
  ASSERT_FALSE(read("examples/nodes/seed000.yaml").empty());
  auto profile = ParseProfile(read("crds/profiles/raspberry-pi.yaml"), "raspberry-pi.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto nodes = ParseNodes(read("examples/nodes/seed000.yaml"), "seed000.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  auto result = ComputeWeights(*profile, *nodes);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectTable2(*result);
  EXPECT_TRUE(result->warnings.empty());
}

TEST(FuzzyModelTest, BuiltinProfilesParseAndCarryTheirOwnName) {
  const std::vector<std::string> names = BuiltinProfileNames();
  ASSERT_FALSE(names.empty());
  EXPECT_NE(std::find(names.begin(), names.end(), "raspberry-pi"), names.end());
  for (const std::string& name : names) {
    auto profile = BuiltinProfile(name);
    ASSERT_TRUE(profile.ok()) << name << ": " << profile.status().ToString();
    EXPECT_EQ(profile->name, name);
    EXPECT_EQ(profile->rounding, Rounding::kCeil);
  }
  auto missing = BuiltinProfile("no-such-profile");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("raspberry-pi"), std::string::npos);
}

// A profile of one numeric criterion on label "z", for tests of the arithmetic.
Profile OneCriterion(Better better, double rank, Rounding rounding) {
  Criterion criterion;
  criterion.name = "z";
  criterion.label = "z";
  criterion.type = CriterionType::kNumeric;
  criterion.better = better;
  criterion.rank = rank;
  criterion.default_level = {1, ""};
  Profile profile;
  profile.name = "test";
  profile.rounding = rounding;
  profile.scale = PaperScale();
  profile.criteria = {criterion};
  return profile;
}

std::vector<NodeFacts> NodesWithZ(const std::vector<std::string>& values) {
  std::vector<NodeFacts> nodes;
  for (size_t j = 0; j < values.size(); ++j) {
    nodes.push_back({"n" + std::to_string(j), {{"z", values[j]}}});
  }
  return nodes;
}

struct RoundingCase {
  Rounding rounding;
  std::vector<double> weights;
};

TEST(FuzzyModelTest, RoundingModes) {
  // z = 2, 5, 6, 7 with rank 1: relative = 1, 2.5, 3 (exactly), 3.5.
  const std::vector<RoundingCase> cases = {
      {Rounding::kCeil, {1, 3, 3, 4}},
      {Rounding::kRound, {1, 3, 3, 4}},
      {Rounding::kNone, {1, 2.5, 3, 3.5}},
  };
  for (const RoundingCase& c : cases) {
    SCOPED_TRACE(std::string(RoundingName(c.rounding)));
    auto result = ComputeWeights(OneCriterion(Better::kHigher, 1, c.rounding),
                                 NodesWithZ({"2", "5", "6", "7"}));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->nodes.size(), c.weights.size());
    for (size_t j = 0; j < c.weights.size(); ++j) {
      EXPECT_DOUBLE_EQ(result->nodes[j].weight, c.weights[j]) << "node " << j;
    }
    EXPECT_DOUBLE_EQ(result->nodes[1].relative, 2.5);
  }
}

TEST(FuzzyModelTest, RoundWeightKeepsIntegersUnderNoise) {
  struct Case {
    double relative;
    Rounding rounding;
    double weight;
  };
  const std::vector<Case> cases = {
      {3.0, Rounding::kCeil, 3},         {3.0 + 1e-12, Rounding::kCeil, 3},
      {3.0 - 1e-12, Rounding::kCeil, 3}, {3.001, Rounding::kCeil, 4},
      {4.253, Rounding::kCeil, 5},       {2.4999, Rounding::kRound, 2},
      {2.5, Rounding::kRound, 3},        {4.253, Rounding::kNone, 4.253},
  };
  for (const Case& c : cases) {
    EXPECT_DOUBLE_EQ(RoundWeight(c.relative, c.rounding), c.weight)
        << c.relative << " " << RoundingName(c.rounding);
  }
}

TEST(FuzzyModelTest, LowerIsBetterUsesMinOverValue) {
  auto result = ComputeWeights(OneCriterion(Better::kLower, 0.5, Rounding::kNone),
                               NodesWithZ({"5.1", "6.4", "10.2"}));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const std::vector<double> memberships = {1, 5.1 / 6.4, 0.5};
  for (size_t j = 0; j < memberships.size(); ++j) {
    EXPECT_DOUBLE_EQ(result->nodes[j].criteria[0].membership, memberships[j]);
    EXPECT_DOUBLE_EQ(result->nodes[j].score, std::pow(memberships[j], 0.5));
  }
  // The least power-hungry node is the fastest: 1 / sqrt(0.5) = 1.414.
  EXPECT_NEAR(result->nodes[0].relative, std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(result->nodes[2].relative, 1.0);
}

TEST(FuzzyModelTest, HigherIsBetterUsesValueOverMax) {
  auto result =
      ComputeWeights(OneCriterion(Better::kHigher, 2, Rounding::kNone), NodesWithZ({"4", "8"}));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_DOUBLE_EQ(result->nodes[0].criteria[0].membership, 0.5);
  EXPECT_DOUBLE_EQ(result->nodes[0].score, 0.25);
  EXPECT_DOUBLE_EQ(result->nodes[1].score, 1.0);
  EXPECT_DOUBLE_EQ(result->nodes[1].relative, 4.0);
}

// A profile with one linguistic criterion on the CPU label and one numeric
// criterion on the SD label, both with defaults, as YAML would build it.
Profile CpuAndSd(bool optional) {
  auto profile = ParseProfile(R"(rounding: none
criteria:
  - name: cpu
    label: ballast.io/cpu-model
    type: linguistic
    rank: 1
    terms: {cortex-a72: norm, cortex-a53: significantly-below-norm, cortex-a76: 9}
    default: norm
  - name: sd
    label: ballast.io/sd-gb
    type: numeric
    rank: 1
    default: 8
    optional: )" + std::string(optional ? "true" : "false") +
                                  "\n",
                              "test.yaml");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

struct DefaultCase {
  std::string title;
  std::map<std::string, std::string> labels;  // of node pi-3
  bool sd_optional;
  double cpu;                         // z of cpu on pi-3
  double sd;                          // z of sd on pi-3
  std::vector<std::string> warnings;  // exactly, in order
};

TEST(FuzzyModelTest, MissingAndMalformedLabelsGetTheDefaultAndAWarning) {
  const std::string cpu = "node pi-3: criterion cpu (label ballast.io/cpu-model): ";
  const std::string sd = "node pi-3: criterion sd (label ballast.io/sd-gb): ";
  const std::vector<DefaultCase> cases = {
      {"all good",
       {{"ballast.io/cpu-model", "cortex-a76"}, {"ballast.io/sd-gb", "32"}},
       false,
       9,
       32,
       {}},
      {"unknown linguistic value",
       {{"ballast.io/cpu-model", "cortex-x9"}, {"ballast.io/sd-gb", "16"}},
       false,
       5,
       16,
       {cpu + "unknown value 'cortex-x9', using default 5 (norm)"}},
      {"linguistic values are case-sensitive",
       {{"ballast.io/cpu-model", "Cortex-A53"}, {"ballast.io/sd-gb", "16"}},
       false,
       5,
       16,
       {cpu + "unknown value 'Cortex-A53', using default 5 (norm)"}},
      {"both missing",
       {},
       false,
       5,
       8,
       {cpu + "label missing, using default 5 (norm)", sd + "label missing, using default 8"}},
      {"missing optional is silent", {{"ballast.io/cpu-model", "cortex-a53"}}, true, 1, 8, {}},
      {"malformed optional still warns",
       {{"ballast.io/cpu-model", "cortex-a53"}, {"ballast.io/sd-gb", "8GB"}},
       true,
       1,
       8,
       {sd + "malformed value '8GB' (expected a number in [1e-06, 1e+12]), using default 8"}},
      {"zero",
       {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "0"}},
       false,
       5,
       8,
       {sd + "malformed value '0' (expected a number in [1e-06, 1e+12]), using default 8"}},
      {"negative",
       {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "-4"}},
       false,
       5,
       8,
       {sd + "malformed value '-4' (expected a number in [1e-06, 1e+12]), using default 8"}},
      {"not finite",
       {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "inf"}},
       false,
       5,
       8,
       {sd + "malformed value 'inf' (expected a number in [1e-06, 1e+12]), using default 8"}},
      {"empty",
       {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", ""}},
       false,
       5,
       8,
       {sd + "malformed value '' (expected a number in [1e-06, 1e+12]), using default 8"}},
      {"trailing space",
       {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "16 "}},
       false,
       5,
       8,
       {sd + "malformed value '16 ' (expected a number in [1e-06, 1e+12]), using default 8"}},
  };
  for (const DefaultCase& c : cases) {
    SCOPED_TRACE(c.title);
    const std::vector<NodeFacts> nodes = {
        {"pi-4", {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "16"}}},
        {"pi-3", c.labels},
    };
    auto result = ComputeWeights(CpuAndSd(c.sd_optional), nodes);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const NodeWeight& pi3 = result->nodes[1];
    EXPECT_DOUBLE_EQ(pi3.criteria[0].value, c.cpu);
    EXPECT_DOUBLE_EQ(pi3.criteria[1].value, c.sd);
    EXPECT_EQ(result->warnings, c.warnings);
    // The default takes part in the membership like any value.
    const double max_cpu = std::max(5.0, c.cpu);
    const double max_sd = std::max(16.0, c.sd);
    EXPECT_DOUBLE_EQ(pi3.criteria[0].membership, c.cpu / max_cpu);
    EXPECT_DOUBLE_EQ(pi3.criteria[1].membership, c.sd / max_sd);
  }
}

// Regression: a 10 MiB label value gave a 10 MiB warning. The value is
// quoted cut to 80 characters, with its length; bytes that are not printable
// ASCII are escaped, so the warning is UTF-8 for `weights -o json`.
TEST(FuzzyModelTest, TenMebibyteLabelGivesAWarningOfAFewHundredBytes) {
  const std::string huge(10 << 20, '9');
  for (const std::string& value : {huge + "x", "cortex-x9\xe9" + huge}) {
    const std::vector<NodeFacts> nodes = {
        {"pi-4", {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/sd-gb", "16"}}},
        {"pi-3", {{"ballast.io/cpu-model", value}, {"ballast.io/sd-gb", huge + "x"}}},
    };
    auto result = ComputeWeights(CpuAndSd(false), nodes);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->warnings.size(), 2u);
    const size_t lengths[] = {value.size(), huge.size() + 1};  // cpu, then sd
    for (size_t i = 0; i < 2; ++i) {
      const std::string& warning = result->warnings[i];
      EXPECT_LT(warning.size(), 300u) << warning.substr(0, 300);
      EXPECT_NE(warning.find(fmt::format("... ({} characters)", lengths[i])), std::string::npos)
          << warning.substr(0, 300);
    }
  }
  auto escaped = ComputeWeights(
      CpuAndSd(false), {{"pi-3", {{"ballast.io/cpu-model", "x\xe9"}, {"ballast.io/sd-gb", "8"}}}});
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(escaped->warnings,
            std::vector<std::string>{"node pi-3: criterion cpu (label ballast.io/cpu-model): "
                                     "unknown value 'x\\xe9', using default 5 (norm)"});
}

TEST(FuzzyModelTest, WarningsAreGroupedByNodeInInputOrder) {
  const std::vector<NodeFacts> nodes = {{"b", {}}, {"a", {{"ballast.io/cpu-model", "z80"}}}};
  auto result = ComputeWeights(CpuAndSd(false), nodes);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->warnings.size(), 4u);
  EXPECT_EQ(result->warnings[0].rfind("node b: criterion cpu ", 0), 0u) << result->warnings[0];
  EXPECT_EQ(result->warnings[1].rfind("node b: criterion sd ", 0), 0u) << result->warnings[1];
  EXPECT_EQ(result->warnings[2].rfind("node a: criterion cpu ", 0), 0u) << result->warnings[2];
  EXPECT_EQ(result->warnings[3].rfind("node a: criterion sd ", 0), 0u) << result->warnings[3];
}

TEST(FuzzyModelTest, EmptyNodeListIsInvalid) {
  auto result = ComputeWeights(CpuAndSd(false), {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
  EXPECT_NE(result.status().message().find("no nodes"), std::string::npos);
}

TEST(FuzzyModelTest, ProfilesBuiltInCodeAreChecked) {
  const std::vector<NodeFacts> nodes = NodesWithZ({"1"});
  Profile no_criteria = OneCriterion(Better::kHigher, 1, Rounding::kCeil);
  no_criteria.criteria.clear();
  Profile zero_rank = OneCriterion(Better::kHigher, 0, Rounding::kCeil);
  Profile zero_default = OneCriterion(Better::kHigher, 1, Rounding::kCeil);
  zero_default.criteria[0].default_level = {0, ""};
  for (const Profile& profile : {no_criteria, zero_rank, zero_default}) {
    auto result = ComputeWeights(profile, nodes);
    EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
  }
}

TEST(FuzzyModelTest, OneNodeHasWeightOne) {
  auto result =
      ComputeWeights(OneCriterion(Better::kHigher, 1, Rounding::kCeil), NodesWithZ({"7"}));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_DOUBLE_EQ(result->nodes[0].score, 1.0);
  EXPECT_DOUBLE_EQ(result->nodes[0].weight, 1.0);
}

// Regression: cpu-ghz labels "1e200" and "1e-200" gave weights inf and NaN,
// `ballast weights` printed them and exited 0, and the adaptive policy then
// looped forever. A label outside [kMinNumber, kMaxNumber] is now malformed:
// the default, and a warning naming the node and the label.
TEST(FuzzyModelTest, AbsurdLabelValuesGetTheDefaultAndWeightsStayFinite) {
  for (Rounding rounding : {Rounding::kNone, Rounding::kCeil}) {
    auto result = ComputeWeights(OneCriterion(Better::kHigher, 1, rounding),
                                 NodesWithZ({"1e200", "1e-200", "1.5", "nan", "-inf", "1e13"}));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const std::vector<std::string> absurd = {"1e200", "1e-200", "nan", "-inf", "1e13"};
    ASSERT_EQ(result->warnings.size(), absurd.size());
    const std::vector<size_t> nodes = {0, 1, 3, 4, 5};
    for (size_t k = 0; k < absurd.size(); ++k) {
      EXPECT_EQ(result->warnings[k],
                "node n" + std::to_string(nodes[k]) + ": criterion z (label z): malformed value '" +
                    absurd[k] + "' (expected a number in [1e-06, 1e+12]), using default 1");
    }
    for (const NodeWeight& node : result->nodes) {
      EXPECT_TRUE(std::isfinite(node.weight) && node.weight >= 1)
          << node.name << " " << node.weight;
    }
    EXPECT_DOUBLE_EQ(result->nodes[2].relative, 1.5);  // 1.5 against the defaults' 1
  }
}

// The widest spread the bounds allow, raised to the largest rank, underflows
// every score but the best: the weights come from the log scores, and a
// ratio beyond kMaxRelativeWeight is clamped with a warning naming the node.
TEST(FuzzyModelTest, AWeightBeyondAMillionTimesTheLightestIsClampedWithAWarning) {
  auto result = ComputeWeights(OneCriterion(Better::kHigher, kMaxRank, Rounding::kCeil),
                               NodesWithZ({"1e12", "1e-6", "1e-3", "2e-6"}));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->nodes[0].weight, kMaxRelativeWeight);
  EXPECT_EQ(result->nodes[2].weight, kMaxRelativeWeight);
  EXPECT_EQ(result->nodes[1].weight, 1);
  // 2^100 = 1.27e30 times the lightest: clamped too.
  EXPECT_EQ(result->nodes[3].weight, kMaxRelativeWeight);
  ASSERT_EQ(result->warnings.size(), 3u);
  EXPECT_EQ(result->warnings[0],
            "node n0: score 1e1800 times the lowest, weight clamped to 1e+06 (a larger ratio "
            "leaves the lightest nodes no work)");
  EXPECT_NE(result->warnings[2].find("node n3: score 1e30 times"), std::string::npos)
      << result->warnings[2];
  // A spread below the cap is kept as the exact quotient: (2e-6/1e-6)^10.
  auto kept = ComputeWeights(OneCriterion(Better::kHigher, 10, Rounding::kNone),
                             NodesWithZ({"1e-6", "2e-6"}));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_DOUBLE_EQ(kept->nodes[1].weight, 1024);
  EXPECT_TRUE(kept->warnings.empty());
  // A ratio of exactly the cap is kept, silently.
  auto at_cap =
      ComputeWeights(OneCriterion(Better::kHigher, 1, Rounding::kNone), NodesWithZ({"1", "1e6"}));
  ASSERT_TRUE(at_cap.ok()) << at_cap.status().ToString();
  EXPECT_DOUBLE_EQ(at_cap->nodes[1].weight, kMaxRelativeWeight);
  EXPECT_TRUE(at_cap->warnings.empty()) << at_cap->warnings.front();
}

TEST(FuzzyModelTest, ProfilesWithAbsurdRanksOrLevelsAreRefused) {
  Profile rank = OneCriterion(Better::kHigher, 1e300, Rounding::kNone);
  auto refused = ComputeWeights(rank, NodesWithZ({"1", "2"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "profile test: criterion z: rank must be in (0, 100], got 1e+300");
  Profile level = OneCriterion(Better::kHigher, 1, Rounding::kNone);
  level.criteria[0].default_level = {1e-200, ""};
  refused = ComputeWeights(level, NodesWithZ({"1", "2"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "profile test: criterion z: default: must be in [1e-06, 1e+12], got 1e-200");
}

}  // namespace
}  // namespace ballast::fuzzy
