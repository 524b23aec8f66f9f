#include "operator/controller/node_selection.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

json NodeWithReady(const std::string& ready, json labels = json::object(),
                   json taints = json::array()) {
  return {{"metadata", {{"name", "pi4b-0"}, {"labels", labels}}},
          {"spec", {{"taints", taints}}},
          {"status", {{"conditions", json::array({{{"type", "Ready"}, {"status", ready}}})}}}};
}

TEST(NodeReady, ReadsTheReadyCondition) {
  EXPECT_TRUE(NodeReady(NodeWithReady("True")));
  EXPECT_FALSE(NodeReady(NodeWithReady("False")));
  EXPECT_FALSE(NodeReady(NodeWithReady("Unknown")));
  EXPECT_FALSE(NodeReady(json{{"metadata", {{"name", "x"}}}}));
}

TEST(Ineligibility, NodeSelectorMustMatchEveryLabel) {
  const json node = NodeWithReady("True", {{"pool", "seed000"}, {"arch", "arm64"}});
  EXPECT_EQ(Ineligibility(node, {{"pool", "seed000"}}, json::array()), "");
  EXPECT_EQ(Ineligibility(node, {{"pool", "other"}}, json::array()),
            "node pi4b-0: label pool is 'seed000', the job selects 'other'");
  EXPECT_EQ(Ineligibility(node, {{"zone", "a"}}, json::array()),
            "node pi4b-0: no label zone (the job selects 'a')");
}

// A value someone else wrote is quoted cut, with its length, whatever its size.
TEST(Ineligibility, LongSelectorValueIsQuotedCut) {
  const json node = NodeWithReady("True", {{"pool", "seed000"}});
  const std::string wanted(1 << 20, 'x');
  const std::string message = Ineligibility(node, {{"pool", wanted}}, json::array());
  EXPECT_LT(message.size(), 200u) << message.substr(0, 200);
  EXPECT_NE(message.find("... (1048576 characters)"), std::string::npos) << message;
}

TEST(Ineligibility, NotReadyAndCordonedNodesAreSkipped) {
  EXPECT_EQ(Ineligibility(NodeWithReady("False"), json::object(), json::array()),
            "node pi4b-0: not Ready");
  json cordoned = NodeWithReady("True");
  cordoned["spec"]["unschedulable"] = true;
  EXPECT_EQ(Ineligibility(cordoned, json::object(), json::array()),
            "node pi4b-0: cordoned (spec.unschedulable)");
}

TEST(Ineligibility, TaintsNeedATolerationButPreferNoScheduleDoesNot) {
  const json tainted = NodeWithReady(
      "True", json::object(),
      json::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}}));
  EXPECT_EQ(Ineligibility(tainted, json::object(), json::array()),
            "node pi4b-0: taint dedicated=gpu:NoSchedule not tolerated");
  EXPECT_EQ(Ineligibility(tainted, json::object(),
                          json::array({{{"key", "dedicated"},
                                        {"operator", "Equal"},
                                        {"value", "gpu"},
                                        {"effect", "NoSchedule"}}})),
            "");
  const json soft = NodeWithReady("True", json::object(),
                                  json::array({{{"key", "busy"}, {"effect", "PreferNoSchedule"}}}));
  EXPECT_EQ(Ineligibility(soft, json::object(), json::array()), "");
}

struct TolerationCase {
  const char* name;
  json toleration;
  bool tolerates;
};

TEST(Tolerates, FollowsTheSchedulersMatchingRules) {
  const json taint = {{"key", "k"}, {"value", "v"}, {"effect", "NoExecute"}};
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

}  // namespace
}  // namespace ballast::controller
