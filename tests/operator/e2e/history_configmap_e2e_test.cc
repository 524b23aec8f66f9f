// ConfigMapHistory (operator/runtime/history_configmap.h) against the real
// API server of the e2e fixture: the store survives a new operator (a new
// instance), stays within its bounds, starts again from a corrupt text, keeps
// every record of writers racing each other, writes a burst of records in one
// update, answers lookups from what it last read or wrote while that is
// fresh, and works with only the rights the chart grants (get and update on
// the one ConfigMap).
// CTest names: operator_e2e_history_HistoryConfigMapTest.<Test>, label e2e.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "operator/runtime/history_configmap.h"
#include "tests/net/kube/e2e_support.h"
#include "tests/support/history_keys.h"

namespace ballast::runtime {
namespace {

using kube::testing::ClientFor;
using kube::testing::ConfigMap;
using nlohmann::json;

constexpr double kNow = 1'800'000'000;

// Records and waits for the write: the status of the write.
Status Recorded(ConfigMapHistory& store, const history::HistoryKey& key,
                const std::map<std::string, double>& speeds, double now) {
  BALLAST_RETURN_IF_ERROR(store.Record(key, speeds, now));
  return store.Flush();
}

// Without the lookup cache, so that a lookup sees what another instance wrote.
ConfigMapHistory::Options Uncached() {
  ConfigMapHistory::Options options;
  options.fresh_for = std::chrono::milliseconds(0);
  return options;
}

class HistoryConfigMapTest : public kube::testing::KubeE2eTest {
 protected:
  std::string ResourceVersion() {
    auto object = client_->Get(Maps().Named("history"));
    return object.ok() ? object->value("/metadata/resourceVersion"_json_pointer, "") : "";
  }
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
    const history::HistoryLookup empty = store.Lookup(testing::kPrimesKey, {"a", "b"}, kNow);
    EXPECT_EQ(empty.trouble, "");  // no ConfigMap yet: an empty store
    EXPECT_TRUE(empty.nodes.empty());
    // Queued; the instance going writes it (it creates the ConfigMap).
    ASSERT_TRUE(store.Record(testing::kPrimesKey, {{"a", 30}, {"b", 10}}, kNow).ok());
  }
  ConfigMapHistory restarted(*client_, ns_, "history");
  ASSERT_TRUE(Recorded(restarted, testing::kPrimesKey, {{"a", 20}, {"b", 20}}, kNow + 100).ok());
  const history::HistoryLookup lookup =
      restarted.Lookup(testing::kPrimesKey, {"a", "b", "c"}, kNow + 160);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  EXPECT_EQ(lookup.nodes[0].node, "a");
  EXPECT_DOUBLE_EQ(lookup.nodes[0].speed, (1.5 + 1) / 2);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 2);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].age_seconds, 60);
  EXPECT_DOUBLE_EQ(lookup.nodes[1].speed, (0.5 + 1) / 2);
  EXPECT_EQ(lookup.origin, "ConfigMap " + ns_ + "/history");
  EXPECT_TRUE(restarted.Lookup(testing::kMatmulKey, {"a"}, kNow).nodes.empty());
}

TEST_F(HistoryConfigMapTest, TheStoredTextStaysWithinItsBounds) {
  ConfigMapHistory::Options options;
  history::StoreLimits& limits = options.limits;
  limits.samples_per_node = 2;
  limits.max_bytes = 800;
  ConfigMapHistory store(*client_, ns_, "history", options);
  for (int job = 0; job < 30; ++job) {
    std::map<std::string, double> speeds;
    for (int node = 0; node < 4; ++node) {
      speeds["node-" + std::to_string(job) + "-" + std::to_string(node)] = 1 + node;
    }
    speeds["steady"] = 2;
    ASSERT_TRUE(Recorded(store, testing::kPrimesKey, speeds, kNow + job).ok());
  }
  const std::string text = StoredText();
  EXPECT_LE(text.size(), limits.max_bytes);
  const history::HistoryLookup lookup =
      store.Lookup(testing::kPrimesKey, {"steady", "node-29-0", "node-0-0"}, kNow + 30);
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
  const history::HistoryLookup corrupt = store.Lookup(testing::kPrimesKey, {"a"}, kNow);
  EXPECT_TRUE(corrupt.nodes.empty());
  EXPECT_NE(corrupt.trouble.find("unreadable"), std::string::npos) << corrupt.trouble;
  ASSERT_TRUE(Recorded(store, testing::kPrimesKey, {{"a", 2}, {"b", 2}}, kNow).ok());
  const history::HistoryLookup fresh = store.Lookup(testing::kPrimesKey, {"a"}, kNow);
  EXPECT_EQ(fresh.trouble, "");
  ASSERT_EQ(fresh.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(fresh.nodes[0].samples, 1);
}

TEST_F(HistoryConfigMapTest, RecordsRacingEachOtherAreAllKept) {
  ConfigMapHistory first(*client_, ns_, "history", Uncached());
  ConfigMapHistory second(*client_, ns_, "history", Uncached());
  ASSERT_TRUE(Recorded(first, testing::kPrimesKey, {{"a", 1}, {"b", 1}}, kNow)
                  .ok());  // exists before the race
  auto record = [&](ConfigMapHistory& store, int from) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE(Recorded(store, testing::kPrimesKey, {{"a", 1}, {"b", 1}}, kNow + from + i).ok());
    }
  };
  std::thread one([&] { record(first, 10); });
  std::thread two([&] { record(second, 20); });
  one.join();
  two.join();
  const history::HistoryLookup lookup = first.Lookup(testing::kPrimesKey, {"a"}, kNow + 30);
  ASSERT_EQ(lookup.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 11);
}

TEST_F(HistoryConfigMapTest, ABurstOfRecordsIsOneWriteAndNoneIsLost) {
  ConfigMapHistory store(*client_, ns_, "history");
  ASSERT_TRUE(Recorded(store, testing::kPrimesKey, {{"a", 1}, {"b", 1}}, kNow).ok());  // creates it
  const auto updates = [&] { return client_->RequestCounts()["update"]; };
  const auto before = updates();
  // A hundred jobs ending together: the writer is busy with at most the
  // first when the rest arrive, so they go in at most two writes.
  for (int job = 0; job < 100; ++job) {
    ASSERT_TRUE(store.Record(testing::kPrimesKey, {{"a", 3}, {"b", 1}}, kNow + 1 + job).ok());
  }
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_GE(updates() - before, 1u);
  EXPECT_LE(updates() - before, 2u);
  ConfigMapHistory fresh(*client_, ns_, "history", Uncached());
  const history::HistoryLookup lookup = fresh.Lookup(testing::kPrimesKey, {"a", "b"}, kNow + 101);
  ASSERT_EQ(lookup.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 16);  // the newest 16 of the 101
  EXPECT_DOUBLE_EQ(lookup.nodes[0].speed, 1.5);
  EXPECT_DOUBLE_EQ(lookup.nodes[1].samples, 16);
  EXPECT_DOUBLE_EQ(lookup.nodes[1].speed, 0.5);
}

TEST_F(HistoryConfigMapTest, LookupsReadOnlyWhatIsNoLongerFresh) {
  std::atomic<std::chrono::steady_clock::time_point> now{std::chrono::steady_clock::now()};
  ConfigMapHistory::Options options;
  options.fresh_for = std::chrono::seconds(5);
  options.clock = [&] { return now.load(); };
  ConfigMapHistory store(*client_, ns_, "history", options);
  ASSERT_TRUE(Recorded(store, testing::kPrimesKey, {{"a", 3}, {"b", 1}}, kNow).ok());
  // Another operator writes; this one's own write is fresh, and it answers
  // from that without a read.
  ConfigMapHistory other(*client_, ns_, "history", Uncached());
  ASSERT_TRUE(Recorded(other, testing::kPrimesKey, {{"a", 1}, {"b", 3}}, kNow + 1).ok());
  const auto gets = [&] { return client_->RequestCounts()["get"]; };
  const auto before = gets();
  const history::HistoryLookup cached = store.Lookup(testing::kPrimesKey, {"a"}, kNow + 2);
  EXPECT_EQ(gets(), before);
  ASSERT_EQ(cached.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(cached.nodes[0].samples, 1);
  // Once it is stale, a lookup reads again and sees the other's record.
  now = now.load() + std::chrono::seconds(5);
  const history::HistoryLookup read = store.Lookup(testing::kPrimesKey, {"a"}, kNow + 2);
  EXPECT_EQ(gets(), before + 1);
  ASSERT_EQ(read.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(read.nodes[0].samples, 2);
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
  ConfigMapHistory store(*restricted, ns_, "history", Uncached());
  ASSERT_TRUE(kube::testing::WaitUntil([&] {
    return Recorded(store, testing::kPrimesKey, {{"a", 3}, {"b", 1}}, kNow).ok();
  })) << Recorded(store, testing::kPrimesKey, {{"a", 3}, {"b", 1}}, kNow).ToString();
  const history::HistoryLookup lookup = store.Lookup(testing::kPrimesKey, {"a", "b"}, kNow);
  EXPECT_EQ(lookup.trouble, "");
  EXPECT_EQ(lookup.nodes.size(), 2u);
  // Another name is not the operator's.
  ConfigMapHistory other(*restricted, ns_, "other");
  EXPECT_FALSE(Recorded(other, testing::kPrimesKey, {{"a", 1}, {"b", 1}}, kNow).ok());
  EXPECT_NE(other.Lookup(testing::kPrimesKey, {"a"}, kNow).trouble, "");
}

}  // namespace
}  // namespace ballast::runtime
