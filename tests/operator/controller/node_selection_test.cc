#include "operator/controller/node_selection.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

// The view of a Node pi4b-0 as the API server would hand it over.
api::NodeView NodeWithReady(const std::string& ready, json labels = json::object(),
                            json taints = json::array()) {
  return api::ReadNode(
      {{"metadata", {{"name", "pi4b-0"}, {"labels", labels}}},
       {"spec", {{"taints", taints}}},
       {"status", {{"conditions", json::array({{{"type", "Ready"}, {"status", ready}}})}}}});
}

TEST(Ineligibility, NodeSelectorMustMatchEveryLabel) {
  const api::NodeView node = NodeWithReady("True", {{"pool", "seed000"}, {"arch", "arm64"}});
  EXPECT_EQ(Ineligibility(node, {{"pool", "seed000"}}, json::array()), "");
  EXPECT_EQ(Ineligibility(node, {{"pool", "other"}}, json::array()),
            "node pi4b-0: label pool is 'seed000', the job selects 'other'");
  EXPECT_EQ(Ineligibility(node, {{"zone", "a"}}, json::array()),
            "node pi4b-0: no label zone (the job selects 'a')");
}

// A value someone else wrote is quoted cut, with its length, whatever its size.
TEST(Ineligibility, LongSelectorValueIsQuotedCut) {
  const api::NodeView node = NodeWithReady("True", {{"pool", "seed000"}});
  const std::string wanted(1 << 20, 'x');
  const std::string message = Ineligibility(node, {{"pool", wanted}}, json::array());
  EXPECT_LT(message.size(), 200u) << message.substr(0, 200);
  EXPECT_NE(message.find("... (1048576 characters)"), std::string::npos) << message;
}

TEST(Ineligibility, NotReadyAndCordonedNodesAreSkipped) {
  EXPECT_EQ(Ineligibility(NodeWithReady("False"), {}, json::array()), "node pi4b-0: not Ready");
  EXPECT_EQ(Ineligibility(NodeWithReady("Unknown"), {}, json::array()), "node pi4b-0: not Ready");
  api::NodeView cordoned = NodeWithReady("True");
  cordoned.unschedulable = true;
  EXPECT_EQ(Ineligibility(cordoned, {}, json::array()),
            "node pi4b-0: cordoned (spec.unschedulable)");
}

TEST(Ineligibility, TaintsNeedATolerationButPreferNoScheduleDoesNot) {
  const api::NodeView tainted = NodeWithReady(
      "True", json::object(),
      json::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}}));
  EXPECT_EQ(Ineligibility(tainted, {}, json::array()),
            "node pi4b-0: taint dedicated=gpu:NoSchedule not tolerated");
  EXPECT_EQ(Ineligibility(tainted, {},
                          json::array({{{"key", "dedicated"},
                                        {"operator", "Equal"},
                                        {"value", "gpu"},
                                        {"effect", "NoSchedule"}}})),
            "");
  const api::NodeView soft = NodeWithReady(
      "True", json::object(), json::array({{{"key", "busy"}, {"effect", "PreferNoSchedule"}}}));
  EXPECT_EQ(Ineligibility(soft, {}, json::array()), "");
}

struct TolerationCase {
  const char* name;
  json toleration;
  bool tolerates;
};

TEST(Tolerates, FollowsTheSchedulersMatchingRules) {
  const api::Taint taint{"k", "v", "NoExecute"};
  const TolerationCase cases[] = {
      {"equal key and value", {{"key", "k"}, {"value", "v"}}, true},
      {"equal is the default operator, wrong value", {{"key", "k"}, {"value", "w"}}, false},
      {"exists matches any value", {{"key", "k"}, {"operator", "Exists"}}, true},
      {"exists with no key matches every taint", {{"operator", "Exists"}}, true},
      {"another effect", {{"key", "k"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}, false},
      {"same effect", {{"key", "k"}, {"operator", "Exists"}, {"effect", "NoExecute"}}, true},
      {"another key", {{"key", "x"}, {"operator", "Exists"}}, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Tolerates(json::array({c.toleration}), taint), c.tolerates) << c.name;
  }
  EXPECT_FALSE(Tolerates(json::array(), taint));
}

// A ResourceFlavor's tolerations reach Tolerates unchecked (PlaceOnFlavors):
// a field of another type reads as absent, an element that is not an object
// as a toleration with no fields, and nothing throws.
TEST(Tolerates, FieldsOfAnotherTypeReadAsAbsent) {
  const api::Taint taint{"k", "v", "NoExecute"};
  EXPECT_FALSE(Tolerates(json::array({{{"key", "k"}, {"operator", 3}}}), taint))
      << "an operator that is not text is Equal, and the value \"\" is not v";
  EXPECT_TRUE(Tolerates(json::array({{{"key", 5}, {"operator", "Exists"}}}), taint))
      << "a key that is not text is no key: Exists then matches every taint";
  EXPECT_FALSE(Tolerates(json::array({{{"key", "k"}, {"value", 1}}}), taint));
  EXPECT_FALSE(Tolerates(json::array({"k", 7, nullptr, json::array()}), taint));
  EXPECT_TRUE(Tolerates(json::array({"k", {{"key", "k"}, {"value", "v"}}}), taint));
}

struct TermsCase {
  const char* name;
  json terms;  // nodeSelectorTerms
  bool matches;
};

// The node pi4b-0 with labels pool=seed000, ram-mb=2048 against the required
// node affinity of a template, as the scheduler reads it.
TEST(MatchesNodeSelectorTerms, FollowsTheSchedulersRules) {
  const api::NodeView node = NodeWithReady("True", {{"pool", "seed000"}, {"ram-mb", "2048"}});
  auto expression = [](const char* key, const char* op, json values = json::array()) {
    return json{{"key", key}, {"operator", op}, {"values", values}};
  };
  auto term = [](json expressions, json fields = json()) {
    json out = {{"matchExpressions", expressions}};
    if (!fields.is_null()) out["matchFields"] = fields;
    return out;
  };
  const TermsCase cases[] = {
      {"no terms: no constraint", json::array(), true},
      {"In", {term({expression("pool", "In", {"a", "seed000"})})}, true},
      {"In, another value", {term({expression("pool", "In", {"a"})})}, false},
      {"NotIn", {term({expression("pool", "NotIn", {"a"})})}, true},
      {"NotIn a missing label", {term({expression("zone", "NotIn", {"a"})})}, true},
      {"Exists", {term({expression("pool", "Exists")})}, true},
      {"DoesNotExist", {term({expression("pool", "DoesNotExist")})}, false},
      {"Gt", {term({expression("ram-mb", "Gt", {"1024"})})}, true},
      {"Lt", {term({expression("ram-mb", "Lt", {"1024"})})}, false},
      {"Gt with a word", {term({expression("ram-mb", "Gt", {"much"})})}, false},
      {"an unknown operator", {term({expression("pool", "Near", {"seed000"})})}, false},
      {"requirements of a term are ANDed",
       {term({expression("pool", "Exists"), expression("zone", "Exists")})},
       false},
      {"terms are ORed",
       {term({expression("zone", "Exists")}), term({expression("pool", "Exists")})},
       true},
      {"a term with no requirement matches nothing", {json::object()}, false},
      {"matchFields on the name",
       {term(json::array(), {expression("metadata.name", "In", {"pi4b-0"})})},
       true},
      {"matchFields on another field",
       {term(json::array(), {expression("metadata.uid", "In", {"pi4b-0"})})},
       false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MatchesNodeSelectorTerms(node, c.terms), c.matches) << c.name;
  }
  const json terms = json::array({term({expression("pool", "In", {"a"})})});
  EXPECT_EQ(Ineligibility(node, {}, json::array(), terms),
            "node pi4b-0: matches none of the required node affinity's terms "
            "(spec.template.spec.affinity.nodeAffinity)");
}

}  // namespace
}  // namespace ballast::controller
