// Tests of the WeightProfile and node-fact files (core/fuzzy/profile.h):
// ParseYaml, the one reader of each kind (profile_json.h), and the file and
// line in front of its error.
//
// Every bad document marks the line its error must name with a "# <-"
// comment; the test checks that the message starts with "<file>:<that line>:"
// and names the field's path and what was expected.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/fuzzy/profile.h"
#include "core/fuzzy/profile_json.h"
#include "tests/support/marked_line.h"

namespace ballast::fuzzy {
namespace {

using ::ballast::testing::ExpectInvalidAtMarkedLine;

struct BadDocument {
  std::string title;
  std::string yaml;
  std::string expectation;  // a substring the message must contain
};

void ExpectNamesFileLineAndExpectation(const Status& status, const BadDocument& c,
                                       const std::string& file) {
  ExpectInvalidAtMarkedLine(status, c.yaml, file);
  EXPECT_NE(status.message().find(c.expectation), std::string::npos)
      << "message does not say '" << c.expectation << "': " << status.message();
}

const char kHead[] = R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata:
  name: t
spec:
)";

TEST(FuzzyProfileFileTest, BadProfilesNameFileLineAndExpectation) {
  const std::string head = kHead;
  const std::string scale_terms =
      "a term of the scale (above-norm, below-norm, norm, significantly-above-norm, "
      "significantly-below-norm) or a number in [1e-06, 1e+12], got ";
  const std::vector<BadDocument> cases = {
      {"unknown key in a criterion", head + R"(  criteria:
    - name: cpu
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      weight: 3  # <-
      terms: {cortex-a72: norm}
      default: norm
)",
       "spec.criteria[0].weight: unknown field \"weight\" (allowed: name, label, type"},
      {"missing label", head + R"(  criteria:
    - name: cpu  # <-
      type: linguistic
      rank: 0.8
      terms: {cortex-a72: norm}
      default: norm
)",
       "spec.criteria[0].label: missing"},
      {"zero rank", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 0  # <-
      default: 8
)",
       "spec.criteria[0].rank: expected a number > 0 and <= 100, got 0"},
      {"negative rank", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: -0.5  # <-
      default: 8
)",
       "expected a number > 0 and <= 100, got -0.5"},
      {"rank not a number", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: high  # <-
      default: 8
)",
       "expected a number > 0 and <= 100, got \"high\""},
      {"unknown term in terms", head + R"(  criteria:
    - name: cpu
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      terms:
        cortex-a72: nrom  # <-
      default: norm
)",
       "spec.criteria[0].terms.cortex-a72: expected " + scale_terms + "\"nrom\""},
      {"unknown term as default", head + R"(  criteria:
    - name: cpu
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      terms: {cortex-a72: norm}
      default: fast  # <-
)",
       "spec.criteria[0].default: expected " + scale_terms + "\"fast\""},
      {"zero number as a term", head + R"(  criteria:
    - name: cpu
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      terms:
        cortex-a72: 0  # <-
      default: norm
)",
       "got 0"},
      {"non-positive default", head + R"(  criteria:
    - name: power
      label: ballast.io/power-w
      type: numeric
      better: lower
      rank: 0.02
      default: -6.4  # <-
)",
       "spec.criteria[0].default: expected a term of the scale"},
      {"missing default", head + R"(  criteria:
    - name: power  # <-
      label: ballast.io/power-w
      type: numeric
      rank: 0.02
)",
       "spec.criteria[0].default: missing"},
      {"missing type", head + R"(  criteria:
    - name: power  # <-
      label: ballast.io/power-w
      rank: 0.02
      default: 6.4
)",
       "spec.criteria[0].type: missing"},
      {"unknown type", head + R"(  criteria:
    - name: power
      label: ballast.io/power-w
      type: fuzzy  # <-
      rank: 0.02
      default: 6.4
)",
       "spec.criteria[0].type: expected one of numeric, linguistic, got \"fuzzy\""},
      {"unknown better", head + R"(  criteria:
    - name: power
      label: ballast.io/power-w
      type: numeric
      better: smaller  # <-
      rank: 0.02
      default: 6.4
)",
       "spec.criteria[0].better: expected one of higher, lower, got \"smaller\""},
      {"linguistic without terms", head + R"(  criteria:
    - name: cpu  # <-
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      default: norm
)",
       "spec.criteria[0].terms: missing (type: linguistic)"},
      {"numeric with terms", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 0.02
      terms: {big: norm}  # <-
      default: 8
)",
       "spec.criteria[0].terms: only for type: linguistic"},
      {"optional not a bool", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 0.02
      default: 8
      optional: maybe  # <-
)",
       "spec.criteria[0].optional: expected true or false, got \"maybe\""},
      // Quoted, `yes` is text (plain, it is a boolean, as `kubectl apply` reads it).
      {"optional written 'yes'", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 0.02
      default: 8
      optional: 'yes'  # <-
)",
       "spec.criteria[0].optional: expected true or false, got \"yes\""},
      {"duplicate criterion", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 0.02
      default: 8
    - name: sd  # <-
      label: ballast.io/sd-gb
      type: numeric
      rank: 0.02
      default: 8
)",
       "spec.criteria[1].name: duplicate criterion name \"sd\" (first at line 7)"},
      {"empty criteria", head + "  criteria: []  # <-\n",
       "spec.criteria: expected a non-empty list of criteria, got []"},
      {"criteria missing", R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata: {name: t}
spec:  # <-
  rounding: ceil
)",
       "spec.criteria: missing"},
      {"bad rounding", head + R"(  rounding: floor  # <-
  criteria: []
)",
       "spec.rounding: expected one of ceil, round, none, got \"floor\""},
      {"negative scale number", head + R"(  scale:
    norm: -5  # <-
  criteria: []
)",
       "spec.scale.norm: expected a number in [1e-06, 1e+12], got -5"},
      // Absurd numbers: a membership ratio raised to such a rank, or between
      // such levels, underflows to a zero score and an infinite weight.
      {"absurd scale number", head + R"(  scale:
    norm: 1e300  # <-
  criteria: []
)",
       "spec.scale.norm: expected a number in [1e-06, 1e+12], got 1e+300"},
      {"absurd rank", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 1e300  # <-
      default: 8
)",
       "spec.criteria[0].rank: expected a number > 0 and <= 100, got 1e+300"},
      {"absurd default", head + R"(  criteria:
    - name: sd
      label: ballast.io/sd-gb
      type: numeric
      rank: 1
      default: 1e-200  # <-
)",
       "spec.criteria[0].default: expected a term of the scale"},
      {"unknown spec key", head + R"(  criterias: []  # <-
)",
       "spec.criterias: unknown field \"criterias\" (allowed: rounding, scale, criteria)"},
      {"unknown top-level key", R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata: {name: t}
spek: {}  # <-
)",
       "spek: unknown field \"spek\" (allowed: apiVersion, kind, metadata, spec, status)"},
      {"wrong kind", R"(apiVersion: ballast.io/v1alpha1
kind: WeightedJob  # <-
metadata: {name: t}
spec: {}
)",
       "kind: expected WeightProfile, got \"WeightedJob\""},
      {"wrong apiVersion", R"(apiVersion: ballast.io/v1  # <-
kind: WeightProfile
metadata: {name: t}
spec: {}
)",
       "apiVersion: expected ballast.io/v1alpha1, got \"ballast.io/v1\""},
      {"no metadata name", R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata:  # <-
  labels: {a: b}
spec: {}
)",
       "metadata.name: missing"},
      {"kind without apiVersion", R"(kind: WeightProfile  # <-
metadata: {name: t}
spec: {criteria: []}
)",
       "apiVersion: missing"},
      // A file of the spec alone: paths start at the top of the file.
      {"bare spec", R"(criteria:
  - name: sd
    label: ballast.io/sd-gb
    type: numeric
    rank: 0  # <-
    default: 8
)",
       "criteria[0].rank: expected a number > 0 and <= 100, got 0"},
      {"not YAML", R"(criteria:
  - name: cpu
    rank: 0.8: 2  # <-
    terms: {cortex-a72: norm}
)",
       "not valid YAML"},
      {"not a map", "- just  # <-\n- a list\n", "document: expected a WeightProfile"},
  };
  for (const BadDocument& c : cases) {
    SCOPED_TRACE(c.title);
    auto profile = ParseProfile(c.yaml, "profiles/bad.yaml");
    ExpectNamesFileLineAndExpectation(profile.status(), c, "profiles/bad.yaml");
  }
}

TEST(FuzzyProfileFileTest, WeightProfileResource) {
  auto profile = ParseProfile(R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata:
  name: lab
  labels: {team: hpc}
  annotations: {note: "metadata keys other than name are ignored"}
spec:
  rounding: round
  criteria:
    - name: power
      label: ballast.io/power-w
      type: numeric
      better: lower
      rank: 0.02
      default: 6.4
      description: Watts at full load.
)",
                              "lab.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "lab");
  EXPECT_EQ(profile->rounding, Rounding::kRound);
  EXPECT_EQ(profile->scale, PaperScale());
  ASSERT_EQ(profile->criteria.size(), 1u);
  const Criterion& power = profile->criteria[0];
  EXPECT_EQ(power.name, "power");
  EXPECT_EQ(power.label, "ballast.io/power-w");
  EXPECT_EQ(power.type, CriterionType::kNumeric);
  EXPECT_EQ(power.better, Better::kLower);
  EXPECT_DOUBLE_EQ(power.rank, 0.02);
  EXPECT_DOUBLE_EQ(power.default_level.value, 6.4);
  EXPECT_EQ(power.default_level.term, "");
  EXPECT_FALSE(power.optional);
  EXPECT_EQ(power.description, "Watts at full load.");
}

TEST(FuzzyProfileFileTest, BareSpecTakesTheFileNameAndExtendsTheScale) {
  auto profile = ParseProfile(R"(scale:
  norm: 4
  blazing: 12
criteria:
  - name: cpu
    label: ballast.io/cpu-model
    type: linguistic
    rank: 0.8
    terms:
      cortex-a72: norm
      cortex-a76: blazing
      cortex-a53: 1.5
      "": below-norm
    default: significantly-below-norm
    optional: true
)",
                              "some/dir/my-profile.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "my-profile");
  EXPECT_EQ(profile->rounding, Rounding::kCeil);  // the paper's
  EXPECT_DOUBLE_EQ(profile->scale.at("norm"), 4);
  EXPECT_DOUBLE_EQ(profile->scale.at("blazing"), 12);
  EXPECT_DOUBLE_EQ(profile->scale.at("above-norm"), 3);  // kept from the paper
  const Criterion& cpu = profile->criteria.at(0);
  EXPECT_EQ(cpu.better, Better::kHigher);  // the default
  EXPECT_TRUE(cpu.optional);
  ASSERT_EQ(cpu.terms.size(), 4u);
  EXPECT_DOUBLE_EQ(cpu.terms.at("cortex-a72").value, 4);
  EXPECT_EQ(cpu.terms.at("cortex-a72").term, "norm");
  EXPECT_DOUBLE_EQ(cpu.terms.at("cortex-a76").value, 12);
  EXPECT_DOUBLE_EQ(cpu.terms.at("cortex-a53").value, 1.5);
  EXPECT_EQ(cpu.terms.at("cortex-a53").term, "");
  EXPECT_DOUBLE_EQ(cpu.terms.at("").value, 3);
  EXPECT_DOUBLE_EQ(cpu.default_level.value, 1);
  EXPECT_EQ(cpu.default_level.ToString(), "1 (significantly-below-norm)");
  EXPECT_EQ(cpu.terms.at("cortex-a53").ToString(), "1.5");
}

// The one reader: a profile written as a YAML file and the same object as the
// API server hands it to the operator (`kubectl get weightprofile lab -o
// json`: numbers as numbers, metadata the server adds, a status) read to the
// same profile.
TEST(FuzzyProfileFileTest, YamlFileAndTheSameObjectAsJsonReadToEqualProfiles) {
  const char yaml[] = R"(apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata:
  name: lab
spec:
  rounding: none
  scale: {norm: 4, blazing: 12}
  criteria:
    - name: cpu
      label: ballast.io/cpu-model
      type: linguistic
      rank: 0.8
      terms:
        cortex-a72: norm
        cortex-a76: blazing
        cortex-a53: 1.5
        cortex-a55: "2.5"
        "64": above-norm
      default: significantly-below-norm
      optional: true
      description: CPU core of the board.
    - name: power
      label: ballast.io/power-w
      type: numeric
      better: lower
      rank: 0.02
      default: 6.4
)";
  const char from_server[] = R"({
  "apiVersion": "ballast.io/v1alpha1",
  "kind": "WeightProfile",
  "metadata": {
    "creationTimestamp": "2026-01-05T10:00:00Z",
    "generation": 1,
    "name": "lab",
    "resourceVersion": "4711",
    "uid": "0b6f3c4e-0000-0000-0000-000000000001"
  },
  "spec": {
    "criteria": [
      {
        "better": "higher",
        "default": "significantly-below-norm",
        "description": "CPU core of the board.",
        "label": "ballast.io/cpu-model",
        "name": "cpu",
        "optional": true,
        "rank": 0.8,
        "terms": {"64": "above-norm", "cortex-a53": 1.5, "cortex-a55": "2.5",
                  "cortex-a72": "norm", "cortex-a76": "blazing"},
        "type": "linguistic"
      },
      {"better": "lower", "default": 6.4, "label": "ballast.io/power-w", "name": "power",
       "rank": 0.02, "type": "numeric"}
    ],
    "rounding": "none",
    "scale": {"blazing": 12, "norm": 4}
  },
  "status": {"conditions": []}
})";
  auto from_file = ParseProfile(yaml, "lab.yaml");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto from_api = ProfileFromJson(nlohmann::json::parse(from_server));
  ASSERT_TRUE(from_api.ok()) << from_api.status().ToString();
  EXPECT_TRUE(*from_file == *from_api);
  // What both read, so that equal does not mean equally empty.
  EXPECT_EQ(from_file->rounding, Rounding::kNone);
  EXPECT_DOUBLE_EQ(from_file->scale.at("blazing"), 12);
  ASSERT_EQ(from_file->criteria.size(), 2u);
  EXPECT_EQ(from_file->criteria[0].terms.size(), 5u);
  EXPECT_DOUBLE_EQ(from_file->criteria[0].terms.at("cortex-a55").value, 2.5);
  EXPECT_EQ(from_file->criteria[0].terms.at("64").term, "above-norm");
  EXPECT_EQ(from_file->criteria[1].better, Better::kLower);

  // And a refusal names the same path, with the file and line in front.
  std::string bad_yaml = yaml;
  bad_yaml.replace(bad_yaml.find("rank: 0.02"), 10, "rank: 200");
  nlohmann::json bad_object = nlohmann::json::parse(from_server);
  bad_object["spec"]["criteria"][1]["rank"] = 200;
  const std::string message = "spec.criteria[1].rank: expected a number > 0 and <= 100, got 200";
  EXPECT_EQ(ParseProfile(bad_yaml, "lab.yaml").status().message(), "lab.yaml:26:13: " + message);
  EXPECT_EQ(ProfileFromJson(bad_object).status().message(), message);
}

TEST(FuzzyProfileFileTest, ShippedProfileEncodesTable1) {
  auto profile = BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  struct Expected {
    std::string name;
    std::string label;
    CriterionType type;
    Better better;
    double rank;
    bool optional;
  };
  const std::vector<Expected> expected = {
      {"cpu", "ballast.io/cpu-model", CriterionType::kLinguistic, Better::kHigher, 0.8, false},
      {"os-bits", "ballast.io/os-bits", CriterionType::kLinguistic, Better::kHigher, 0.1, false},
      {"ram", "ballast.io/ram-mb", CriterionType::kLinguistic, Better::kHigher, 0.02, false},
      {"control-plane", "node-role.kubernetes.io/control-plane", CriterionType::kLinguistic,
       Better::kHigher, 0.02, true},
      {"sd", "ballast.io/sd-gb", CriterionType::kNumeric, Better::kHigher, 0.02, false},
      {"power", "ballast.io/power-w", CriterionType::kNumeric, Better::kLower, 0.02, false},
      {"os-release", "ballast.io/os-release", CriterionType::kLinguistic, Better::kHigher, 0.02,
       false},
  };
  ASSERT_EQ(profile->criteria.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Criterion& c = profile->criteria[i];
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(c.name, expected[i].name);
    EXPECT_EQ(c.label, expected[i].label);
    EXPECT_EQ(c.type, expected[i].type);
    EXPECT_EQ(c.better, expected[i].better);
    EXPECT_DOUBLE_EQ(c.rank, expected[i].rank);
    EXPECT_EQ(c.optional, expected[i].optional);
    EXPECT_FALSE(c.description.empty());
  }
  // The linguistic assignments of Table 1.
  const auto& cpu = profile->criteria[0].terms;
  EXPECT_EQ(cpu.at("cortex-a72").term, "norm");
  EXPECT_EQ(cpu.at("cortex-a53").term, "significantly-below-norm");
  EXPECT_GT(cpu.at("cortex-a76").value, cpu.at("cortex-a72").value);
  EXPECT_EQ(profile->criteria[1].terms.at("64").term, "norm");
  EXPECT_EQ(profile->criteria[1].terms.at("32").term, "significantly-below-norm");
  EXPECT_EQ(profile->criteria[2].terms.at("2048").term, "norm");
  EXPECT_EQ(profile->criteria[2].terms.at("1024").term, "below-norm");
  EXPECT_EQ(profile->criteria[3].terms.at("true").term, "above-norm");
  EXPECT_EQ(profile->criteria[3].terms.at("").term, "above-norm");
  EXPECT_EQ(profile->criteria[3].default_level.term, "norm");
  EXPECT_EQ(profile->criteria[6].terms.at("2020-08-24").term, "below-norm");
  EXPECT_EQ(profile->criteria[6].terms.at("2021-01-11").term, "norm");
}

TEST(FuzzyNodesFileTest, NodesListIgnoresOtherKeys) {
  auto nodes = ParseNodes(R"(name: a scenario file also has these
policies: [equal, adaptive]
nodes:
  - name: pi4b-1
    speed: 4.3
    latency: 0.002
    changes: [{at: 10, speed: 2}]
    labels:
      ballast.io/cpu-model: cortex-a72
      ballast.io/ram-mb: 2048
      node-role.kubernetes.io/control-plane:
  - name: pi3b-1
)",
                          "cluster.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "pi4b-1");
  const std::map<std::string, std::string> labels = {
      {"ballast.io/cpu-model", "cortex-a72"},
      {"ballast.io/ram-mb", "2048"},
      {"node-role.kubernetes.io/control-plane", ""},
  };
  EXPECT_EQ((*nodes)[0].labels, labels);
  EXPECT_EQ((*nodes)[1].name, "pi3b-1");
  EXPECT_TRUE((*nodes)[1].labels.empty());
}

// Trimmed from `kubectl get nodes -o yaml` on a k3s cluster.
const char kKubectlNodes[] = R"(apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      k3s.io/node-args: '["server"]'
    creationTimestamp: "2024-03-01T10:00:00Z"
    labels:
      beta.kubernetes.io/arch: arm64
      kubernetes.io/arch: arm64
      kubernetes.io/hostname: pi4b-master
      node-role.kubernetes.io/control-plane: "true"
      node-role.kubernetes.io/master: "true"
      ballast.io/cpu-model: cortex-a72
    name: pi4b-master
    resourceVersion: "1234"
    uid: 0b6f3c4e-0000-0000-0000-000000000000
  spec:
    podCIDR: 10.42.0.0/24
  status:
    capacity:
      cpu: "4"
      memory: 1891264Ki
- apiVersion: v1
  kind: Node
  metadata:
    labels:
      kubernetes.io/arch: arm
      kubernetes.io/hostname: pi3b-worker
      ballast.io/cpu-model: cortex-a53
    name: pi3b-worker
kind: List
metadata:
  resourceVersion: ""
)";

TEST(FuzzyNodesFileTest, KubectlNodeListAndSingleNode) {
  auto nodes = ParseNodes(kKubectlNodes, "nodes.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "pi4b-master");
  EXPECT_EQ((*nodes)[0].labels.size(), 6u);
  EXPECT_EQ((*nodes)[0].labels.at("node-role.kubernetes.io/control-plane"), "true");
  EXPECT_EQ((*nodes)[1].name, "pi3b-worker");
  EXPECT_EQ((*nodes)[1].labels.at("ballast.io/cpu-model"), "cortex-a53");

  std::string node_list = kKubectlNodes;
  node_list.replace(node_list.find("kind: List"), 10, "kind: NodeList");
  auto as_node_list = ParseNodes(node_list, "nodes.yaml");
  ASSERT_TRUE(as_node_list.ok()) << as_node_list.status().ToString();
  EXPECT_EQ(as_node_list->size(), 2u);

  auto single = ParseNodes(R"(apiVersion: v1
kind: Node
metadata:
  name: pi5
  labels: {ballast.io/cpu-model: cortex-a76}
)",
                           "node.yaml");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  ASSERT_EQ(single->size(), 1u);
  EXPECT_EQ((*single)[0].name, "pi5");
  EXPECT_EQ((*single)[0].labels.at("ballast.io/cpu-model"), "cortex-a76");
}

// `kubectl get nodes -o json` reads as `-o yaml` does.
TEST(FuzzyNodesFileTest, NodeListAsJsonReadsAsTheYaml) {
  const char from_server[] = R"({"apiVersion": "v1", "kind": "List", "metadata": {},
  "items": [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "pi4b-master", "labels": {"beta.kubernetes.io/arch": "arm64",
       "kubernetes.io/arch": "arm64", "kubernetes.io/hostname": "pi4b-master",
       "node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/master": "true",
       "ballast.io/cpu-model": "cortex-a72"}},
     "status": {"capacity": {"cpu": "4"}}},
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "pi3b-worker", "labels": {"kubernetes.io/arch": "arm",
       "kubernetes.io/hostname": "pi3b-worker", "ballast.io/cpu-model": "cortex-a53"}}}
  ]})";
  auto from_file = ParseNodes(kKubectlNodes, "nodes.yaml");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto from_api = NodeFactsFromJson(nlohmann::json::parse(from_server));
  ASSERT_TRUE(from_api.ok()) << from_api.status().ToString();
  EXPECT_EQ(*from_file, *from_api);
  EXPECT_EQ(from_api->size(), 2u);
}

TEST(FuzzyNodesFileTest, BadNodesNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"empty nodes", "nodes: []  # <-\n", "nodes: expected a non-empty list of nodes, got []"},
      {"empty items", "kind: NodeList\nitems: []  # <-\n",
       "items: expected a non-empty list of nodes, got []"},
      {"no nodes key", "workers: 3  # <-\n", "nodes: missing"},
      {"no items key", "kind: List  # <-\n", "items: missing"},
      {"missing name", R"(nodes:
  - name: a
  - speed: 2  # <-
)",
       "nodes[1].name: missing"},
      {"empty name", R"(nodes:
  - name: ""  # <-
)",
       "nodes[0].name: expected a DNS-1123 subdomain"},
      {"name not a string", R"(nodes:
  - name: [a]  # <-
)",
       "nodes[0].name: expected a string, got [\"a\"]"},
      {"labels not a map", R"(nodes:
  - name: a
    labels: [ballast.io/cpu-model]  # <-
)",
       "nodes[0].labels: expected a map of label: value, got [\"ballast.io/cpu-model\"]"},
      {"label value not a string", R"(nodes:
  - name: a
    labels:
      ballast.io/cpu-model: {family: cortex}  # <-
)",
       "nodes[0].labels.ballast.io/cpu-model: expected a label value (a string), got "
       "{\"family\":\"cortex\"}"},
      {"duplicate node", R"(nodes:
  - name: a
  - name: a  # <-
)",
       "nodes[1]: duplicate node name 'a' (first at nodes[0])"},
      {"not a Node item", R"(kind: List
items:
  - kind: Node
    metadata: {name: a}
  - kind: Pod  # <-
    metadata: {name: p}
)",
       "items[1].kind: expected Node, got \"Pod\""},
      {"unknown kind", "kind: Deployment  # <-\n",
       "kind: expected one of NodeList, List, Node, got \"Deployment\""},
      {"item without metadata", R"(kind: NodeList
items:
  - kind: Node  # <-
    spec: {}
)",
       "items[0].metadata: missing"},
      // Guards `ballast weights` printing a name that is not one Kubernetes
      // allows (a path, control bytes) as it was written.
      {"node name with a slash", "nodes:\n  - name: ../x  # <-\n",
       "nodes[0].name: expected a DNS-1123 subdomain"},
      {"node name with a control byte", "kind: Node\nmetadata:\n  name: \"a\\tb\"  # <-\n",
       "got 'a\\x09b'"},
      {"not a map", "- a  # <-\n- b\n", "document: expected a map with `nodes:`"},
      {"not YAML", "nodes:\n  - name: a: b  # <-\n", "not valid YAML"},
  };
  for (const BadDocument& c : cases) {
    SCOPED_TRACE(c.title);
    auto nodes = ParseNodes(c.yaml, "nodes.yaml");
    ExpectNamesFileLineAndExpectation(nodes.status(), c, "nodes.yaml");
  }
}

}  // namespace
}  // namespace ballast::fuzzy
