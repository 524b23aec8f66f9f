// Informer against the real API server: list then watch, relist after 410
// Gone, reconnect after the server ends the watch, prompt Stop, the label
// index and the transform.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "net/kube/informer.h"
#include "tests/net/kube/e2e_support.h"

namespace ballast::kube {
namespace {

using nlohmann::json;
using testing::ConfigMap;
using testing::InstallGizmoCrd;
using testing::kGizmos;
using testing::KubeE2eTest;
using testing::WaitUntil;

// Records handler calls as "add ns/name", "update ns/name", "delete ns/name".
struct Recorder {
  std::mutex mu;
  std::vector<std::string> calls;

  InformerHandlers Handlers() {
    return {[this](const json& o) { Record("add " + ObjectKey(o)); },
            [this](const json&, const json& o) { Record("update " + ObjectKey(o)); },
            [this](const json& o) { Record("delete " + ObjectKey(o)); }};
  }
  void Record(std::string call) {
    std::lock_guard lock(mu);
    calls.push_back(std::move(call));
  }
  bool Saw(const std::string& call) {
    std::lock_guard lock(mu);
    return std::find(calls.begin(), calls.end(), call) != calls.end();
  }
};

TEST_F(KubeE2eTest, InformerListsThenWatches) {
  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("before")).ok());
  Recorder recorder;
  Informer informer(*client_, Maps(), {}, recorder.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  EXPECT_NE(informer.Get(ns_ + "/before"), nullptr);
  EXPECT_TRUE(recorder.Saw("add " + ns_ + "/before"));

  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("after", {{"v", "1"}})).ok());
  ASSERT_TRUE(client_->MergePatch(Maps().Named("after"), {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(client_->Delete(Maps().Named("before")).ok());
  EXPECT_TRUE(WaitUntil([&] { return recorder.Saw("delete " + ns_ + "/before"); }));
  EXPECT_TRUE(recorder.Saw("add " + ns_ + "/after"));
  EXPECT_TRUE(recorder.Saw("update " + ns_ + "/after"));
  EXPECT_EQ(informer.Get(ns_ + "/before"), nullptr);
  ASSERT_TRUE(WaitUntil([&] {
    auto after = informer.Get(ns_ + "/after");
    return after && after->at("data").at("v") == "2";
  }));
  EXPECT_EQ(informer.Stats().lists, 1u);
  EXPECT_EQ(informer.Stats().errors, 0u);
}

json Labelled(const std::string& name, const std::string& job) {
  json map = ConfigMap(name);
  map["metadata"]["labels"] = {{"job", job}};
  return map;
}

std::vector<std::string> Names(const std::vector<ObjectPtr>& objects) {
  std::vector<std::string> names;
  for (const auto& object : objects) names.push_back(object->at("metadata").at("name"));
  return names;
}

TEST_F(KubeE2eTest, InformerIndexesByLabelAndTrimsObjects) {
  ASSERT_TRUE(client_->Create(Maps(), Labelled("a1", "a")).ok());
  ASSERT_TRUE(client_->Create(Maps(), Labelled("b1", "b")).ok());
  InformerOptions options;
  options.index_label = "job";
  options.transform = DropManagedFields;
  Informer informer(*client_, Maps(), options);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  // The API server records who wrote what in managedFields; the cache has none.
  EXPECT_TRUE(client_->Get(Maps().Named("a1"))->at("metadata").contains("managedFields"));
  EXPECT_FALSE(informer.Get(ns_ + "/a1")->at("metadata").contains("managedFields"));
  using Strings = std::vector<std::string>;
  EXPECT_EQ(Names(informer.ListIndexed(ns_, "a")), Strings{"a1"});

  ASSERT_TRUE(client_->Create(Maps(), Labelled("a2", "a")).ok());
  // Relabelled: b1 leaves b's entry for a's.
  ASSERT_TRUE(
      client_->MergePatch(Maps().Named("b1"), {{"metadata", {{"labels", {{"job", "a"}}}}}}).ok());
  ASSERT_TRUE(client_->Delete(Maps().Named("a1")).ok());
  EXPECT_TRUE(WaitUntil([&] {
    return Names(informer.ListIndexed(ns_, "a")) == Strings{"a2", "b1"};
  })) << ::testing::PrintToString(Names(informer.ListIndexed(ns_, "a")));
  EXPECT_TRUE(informer.ListIndexed(ns_, "b").empty());
  EXPECT_TRUE(informer.ListIndexed("elsewhere", "a").empty());
  // A pointer handed out stays valid and unchanged after the cache moves on.
  const ObjectPtr held = informer.Get(ns_ + "/a2");
  ASSERT_TRUE(client_->Delete(Maps().Named("a2")).ok());
  EXPECT_TRUE(WaitUntil([&] { return informer.Get(ns_ + "/a2") == nullptr; }));
  EXPECT_EQ(held->at("metadata").at("name"), "a2");
  EXPECT_EQ(Names(informer.ListIndexed(ns_, "a")), Strings{"b1"});
}

json Gizmo(const std::string& name) {
  return {{"apiVersion", "kube-e2e.ballast.io/v1"},
          {"kind", "Gizmo"},
          {"metadata", {{"name", name}}},
          {"spec", {{"size", 1}}}};
}

TEST_F(KubeE2eTest, InformerRelistsAfterGone) {
  InstallGizmoCrd(*client_);
  const ResourceRef gizmos = kGizmos.In(ns_);
  ASSERT_TRUE(WaitUntil([&] { return client_->Create(gizmos, Gizmo("x")).ok(); }));
  ASSERT_TRUE(client_->Create(gizmos, Gizmo("y")).ok());
  // Resume from a resourceVersion older than the API server's watch cache of
  // the CRD (it starts when the CRD is established): the real server answers
  // 410 Gone and the informer must list again.
  InformerOptions options;
  options.resume_resource_version = "1";
  Recorder recorder;
  Informer informer(*client_, gizmos, options, recorder.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  const InformerStats stats = informer.Stats();
  EXPECT_GE(stats.gone, 1u);
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_NE(informer.Get(ns_ + "/x"), nullptr);
  EXPECT_NE(informer.Get(ns_ + "/y"), nullptr);
  EXPECT_TRUE(recorder.Saw("add " + ns_ + "/x"));
  // And it watches on from the list's version.
  ASSERT_TRUE(client_->Create(gizmos, Gizmo("z")).ok());
  EXPECT_TRUE(WaitUntil([&] { return informer.Get(ns_ + "/z") != nullptr; }));
  EXPECT_EQ(informer.Stats().lists, 1u);
}

TEST_F(KubeE2eTest, InformerReconnectsWhenTheServerEndsTheWatch) {
  InformerOptions options;
  options.watch_timeout_seconds = 1;  // the API server closes every watch after 1 s
  Recorder recorder;
  Informer informer(*client_, Maps(), options, recorder.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  ASSERT_TRUE(WaitUntil([&] { return informer.Stats().watches >= 3; }));
  // Changes made across reconnects all arrive, and none needed a relist.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client_->Create(Maps(), ConfigMap("r" + std::to_string(i))).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
  for (int i = 0; i < 3; ++i) {
    const std::string key = ns_ + "/r" + std::to_string(i);
    EXPECT_TRUE(WaitUntil([&] { return recorder.Saw("add " + key); })) << key;
  }
  const InformerStats stats = informer.Stats();
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_EQ(stats.gone, 0u);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_GE(stats.watches, 4u);
}

// The operator's liveness probe reads failing_since: set at the first
// failure and kept while failures go on (an identity RBAC forbids to list),
// cleared once a list and a watch work (a Role bound meanwhile).
TEST_F(KubeE2eTest, InformerSaysSinceWhenItFailsUntilItsWatchIsAnswered) {
  auto restricted = testing::ClientFor("kubeconfig-restricted");
  ASSERT_TRUE(restricted);
  Informer informer(*restricted, Maps());
  informer.Start();
  ASSERT_TRUE(WaitUntil([&] { return informer.Stats().failing_since.has_value(); }));
  const auto since = *informer.Stats().failing_since;
  EXPECT_NE(informer.Stats().last_error.find("forbidden"), std::string::npos)
      << informer.Stats().last_error;
  ASSERT_TRUE(WaitUntil([&] { return informer.Stats().errors >= 3; }));
  EXPECT_EQ(informer.Stats().failing_since, since) << "since the first failure";

  const ResourceRef roles = {"rbac.authorization.k8s.io", "v1", "roles", true, ns_, ""};
  const ResourceRef bindings = {"rbac.authorization.k8s.io", "v1", "rolebindings", true, ns_, ""};
  ASSERT_TRUE(client_
                  ->Create(roles, {{"metadata", {{"name", "maps"}}},
                                   {"rules", json::array({{{"apiGroups", json::array({""})},
                                                           {"resources", {"configmaps"}},
                                                           {"verbs", {"list", "watch"}}}})}})
                  .ok());
  ASSERT_TRUE(
      client_
          ->Create(
              bindings,
              {{"metadata", {{"name", "maps"}}},
               {"roleRef",
                {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "maps"}}},
               {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                          {"kind", "User"},
                                          {"name", "ballast-restricted"}}})}})
          .ok());
  // The backoff has grown to a few seconds by now.
  ASSERT_TRUE(WaitUntil([&] { return informer.HasSynced(); }, std::chrono::seconds(40)));
  EXPECT_TRUE(WaitUntil([&] { return !informer.Stats().failing_since.has_value(); }))
      << informer.Stats().last_error;
  informer.Stop();
}

TEST_F(KubeE2eTest, InformerStopsPromptly) {
  Informer informer(*client_, Maps());  // watches of 300 s
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  ASSERT_TRUE(WaitUntil([&] { return informer.Stats().watches >= 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  informer.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace ballast::kube
