// ConfigMapHistory (operator/controller/history_configmap.h) against the real
// API server of the e2e fixture: the store survives a new operator (a new
// instance), stays within its bounds, starts again from a corrupt text, keeps
// every record of writers racing each other, and works with only the rights
// the chart grants (get and update on the one ConfigMap).
// CTest names: operator_e2e_history_HistoryConfigMapTest.<Test>, label e2e.
#include <gtest/gtest.h>

#include <thread>

#include "operator/controller/history_configmap.h"
#include "tests/net/kube/e2e_support.h"

namespace ballast::controller {
namespace {

using kube::testing::ClientFor;
using kube::testing::ConfigMap;
using nlohmann::json;

constexpr double kNow = 1'800'000'000;

class HistoryConfigMapTest : public kube::testing::KubeE2eTest {
 protected:
  std::string StoredText() {
    auto object = client_->Get(Maps().Named("history"));
    return object.ok()
               ? object->value("/data"_json_pointer, json::object()).value(kHistoryDataKey, "")
               : "";
  }
};

TEST_F(HistoryConfigMapTest, WhatAFinishedJobRecordedIsThereForTheNextOperator) {
  {
    ConfigMapHistory store(*client_, ns_, "history");
    const history::HistoryLookup empty = store.Lookup("primes", {"a", "b"}, kNow);
    EXPECT_EQ(empty.trouble, "");  // no ConfigMap yet: an empty store
    EXPECT_TRUE(empty.nodes.empty());
    ASSERT_TRUE(store.Record("primes", {{"a", 30}, {"b", 10}}, kNow).ok());  // creates it
  }
  ConfigMapHistory restarted(*client_, ns_, "history");
  ASSERT_TRUE(restarted.Record("primes", {{"a", 20}, {"b", 20}}, kNow + 100).ok());
  const history::HistoryLookup lookup = restarted.Lookup("primes", {"a", "b", "c"}, kNow + 160);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  EXPECT_EQ(lookup.nodes[0].node, "a");
  EXPECT_DOUBLE_EQ(lookup.nodes[0].speed, (1.5 + 1) / 2);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 2);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].age_seconds, 60);
  EXPECT_DOUBLE_EQ(lookup.nodes[1].speed, (0.5 + 1) / 2);
  EXPECT_EQ(lookup.origin, "ConfigMap " + ns_ + "/history");
  EXPECT_TRUE(restarted.Lookup("matmul", {"a"}, kNow).nodes.empty());
}

TEST_F(HistoryConfigMapTest, TheStoredTextStaysWithinItsBounds) {
  history::StoreLimits limits;
  limits.samples_per_node = 2;
  limits.max_bytes = 800;
  ConfigMapHistory store(*client_, ns_, "history", limits);
  for (int job = 0; job < 30; ++job) {
    std::map<std::string, double> speeds;
    for (int node = 0; node < 4; ++node) {
      speeds["node-" + std::to_string(job) + "-" + std::to_string(node)] = 1 + node;
    }
    speeds["steady"] = 2;
    ASSERT_TRUE(store.Record("primes", speeds, kNow + job).ok());
  }
  const std::string text = StoredText();
  EXPECT_LE(text.size(), limits.max_bytes);
  const history::HistoryLookup lookup =
      store.Lookup("primes", {"steady", "node-29-0", "node-0-0"}, kNow + 30);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);  // the stalest nodes went; answered in the asked order
  EXPECT_EQ(lookup.nodes[0].node, "steady");
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 2);
  EXPECT_EQ(lookup.nodes[1].node, "node-29-0");
}

TEST_F(HistoryConfigMapTest, ACorruptStoreIsReportedAndTheNextRecordStartsItAgain) {
  ASSERT_TRUE(
      client_->Create(Maps(), ConfigMap("history", {{kHistoryDataKey, "{\"version\":1,"}})).ok());
  ConfigMapHistory store(*client_, ns_, "history");
  const history::HistoryLookup corrupt = store.Lookup("primes", {"a"}, kNow);
  EXPECT_TRUE(corrupt.nodes.empty());
  EXPECT_NE(corrupt.trouble.find("unreadable"), std::string::npos) << corrupt.trouble;
  ASSERT_TRUE(store.Record("primes", {{"a", 2}, {"b", 2}}, kNow).ok());
  const history::HistoryLookup fresh = store.Lookup("primes", {"a"}, kNow);
  EXPECT_EQ(fresh.trouble, "");
  ASSERT_EQ(fresh.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(fresh.nodes[0].samples, 1);
}

TEST_F(HistoryConfigMapTest, RecordsRacingEachOtherAreAllKept) {
  ConfigMapHistory first(*client_, ns_, "history");
  ConfigMapHistory second(*client_, ns_, "history");
  ASSERT_TRUE(first.Record("primes", {{"a", 1}}, kNow).ok());  // exists before the race
  auto record = [&](ConfigMapHistory& store, int from) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE(store.Record("primes", {{"a", 1}}, kNow + from + i).ok());
    }
  };
  std::thread one([&] { record(first, 10); });
  std::thread two([&] { record(second, 20); });
  one.join();
  two.join();
  const history::HistoryLookup lookup = first.Lookup("primes", {"a"}, kNow + 30);
  ASSERT_EQ(lookup.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 11);
}

TEST_F(HistoryConfigMapTest, TheChartsRightsAreEnough) {
  // As the chart makes it: the ConfigMap exists, and the operator may get and
  // update that one name (helm/ballast/templates/rbac.yaml).
  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("history")).ok());
  const kube::ResourceRef roles = {"rbac.authorization.k8s.io", "v1", "roles", true, ns_, ""};
  const kube::ResourceRef bindings = {
      "rbac.authorization.k8s.io", "v1", "rolebindings", true, ns_, ""};
  ASSERT_TRUE(client_
                  ->Create(roles, {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                                   {"kind", "Role"},
                                   {"metadata", {{"name", "history"}}},
                                   {"rules",
                                    {{{"apiGroups", {""}},
                                      {"resources", {"configmaps"}},
                                      {"resourceNames", {"history"}},
                                      {"verbs", {"get", "update"}}}}}})
                  .ok());
  ASSERT_TRUE(
      client_
          ->Create(
              bindings,
              {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "RoleBinding"},
               {"metadata", {{"name", "history"}}},
               {"roleRef",
                {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "history"}}},
               {"subjects",
                {{{"kind", "User"},
                  {"apiGroup", "rbac.authorization.k8s.io"},
                  {"name", "ballast-restricted"}}}}})
          .ok());
  auto restricted = ClientFor("kubeconfig-restricted");
  ASSERT_TRUE(restricted);
  ConfigMapHistory store(*restricted, ns_, "history");
  ASSERT_TRUE(kube::testing::WaitUntil([&] {
    return store.Record("primes", {{"a", 3}, {"b", 1}}, kNow).ok();
  })) << store.Record("primes", {{"a", 3}, {"b", 1}}, kNow).ToString();
  const history::HistoryLookup lookup = store.Lookup("primes", {"a", "b"}, kNow);
  EXPECT_EQ(lookup.trouble, "");
  EXPECT_EQ(lookup.nodes.size(), 2u);
  // Another name is not the operator's.
  ConfigMapHistory other(*restricted, ns_, "other");
  EXPECT_FALSE(other.Record("primes", {{"a", 1}}, kNow).ok());
  EXPECT_NE(other.Lookup("primes", {"a"}, kNow).trouble, "");
}

}  // namespace
}  // namespace ballast::controller
