// HttpKubeClient against the real API server of the e2e control plane:
// client certificates, CRUD, patches, the status subresource, conflicts,
// watches with bookmarks and 410 Gone, RBAC refusals, request counts.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/net/kube/e2e_support.h"

namespace ballast::kube {
namespace {

// The watch event's type as the API server writes it.
const char* TypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "?";
}

using nlohmann::json;
using testing::ClientFor;
using testing::ConfigMap;
using testing::InstallGizmoCrd;
using testing::kGizmos;
using testing::KubeE2eTest;
using testing::WaitUntil;

TEST_F(KubeE2eTest, ClientCertificateKubeconfigListsNamespaces) {
  auto list = client_->List(Namespaces());
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::vector<std::string> names;
  for (const json& item : list->items) names.push_back(item["metadata"]["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "kube-system"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), ns_), names.end());
  EXPECT_FALSE(list->resource_version.empty());
}

TEST_F(KubeE2eTest, ConfigMapCrud) {
  auto created = client_->Create(Maps(), ConfigMap("one", {{"k", "v"}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->at("metadata").at("namespace"), ns_);

  auto again = client_->Create(Maps(), ConfigMap("one"));
  EXPECT_EQ(again.status().code(), StatusCode::kConflict) << again.status().ToString();
  EXPECT_NE(again.status().message().find("already exists"), std::string::npos);

  auto got = client_->Get(Maps().Named("one"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->at("data").at("k"), "v");

  json changed = *got;
  changed["data"]["k"] = "w";
  changed["metadata"]["labels"] = {{"tier", "a"}};
  auto updated = client_->Update(Maps().Named("one"), changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->at("data").at("k"), "w");

  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("two")).ok());
  ListOptions by_label;
  by_label.label_selector = "tier=a";
  auto labelled = client_->List(Maps(), by_label);
  ASSERT_TRUE(labelled.ok()) << labelled.status().ToString();
  ASSERT_EQ(labelled->items.size(), 1u);
  EXPECT_EQ(labelled->items[0]["metadata"]["name"], "one");
  ListOptions by_name;
  by_name.field_selector = "metadata.name=two";
  auto by_field = client_->List(Maps(), by_name);
  ASSERT_TRUE(by_field.ok());
  ASSERT_EQ(by_field->items.size(), 1u);
  ListOptions one_per_page;
  one_per_page.limit = 1;
  auto paged = client_->List(Maps(), one_per_page);  // follows continue tokens
  ASSERT_TRUE(paged.ok());
  EXPECT_GE(paged->items.size(), 2u);  // one, two, and kube-root-ca.crt

  ASSERT_TRUE(client_->Delete(Maps().Named("one")).ok());
  EXPECT_EQ(client_->Get(Maps().Named("one")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->Delete(Maps().Named("one")).code(), StatusCode::kNotFound);
}

TEST_F(KubeE2eTest, DeletePreconditionsAndPropagation) {
  auto created = client_->Create(Maps(), ConfigMap("pre"));
  ASSERT_TRUE(created.ok());
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  EXPECT_EQ(client_->Delete(Maps().Named("pre"), wrong_uid).code(), StatusCode::kConflict);
  DeleteOptions right;
  right.precondition_uid = created->at("metadata").at("uid");
  right.propagation_policy = "Foreground";
  EXPECT_TRUE(client_->Delete(Maps().Named("pre"), right).ok());
}

TEST_F(KubeE2eTest, MergePatchAndServerSideApply) {
  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("p", {{"a", "1"}})).ok());
  auto patched = client_->MergePatch(Maps().Named("p"), {{"data", {{"b", "2"}, {"a", nullptr}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(patched->at("data"), json({{"b", "2"}}));

  // Apply creates, then owns its fields.
  json applied = ConfigMap("applied", {{"owned", "by-x"}});
  applied["metadata"]["namespace"] = ns_;
  auto first = client_->Apply(Maps().Named("applied"), applied, {"manager-x", false, ""});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->at("data").at("owned"), "by-x");

  json rival = ConfigMap("applied", {{"owned", "by-y"}});
  auto conflict = client_->Apply(Maps().Named("applied"), rival, {"manager-y", false, ""});
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict) << conflict.status().ToString();
  EXPECT_NE(conflict.status().message().find("manager-x"), std::string::npos)
      << conflict.status().message();

  auto forced = client_->Apply(Maps().Named("applied"), rival, {"manager-y", true, ""});
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ(forced->at("data").at("owned"), "by-y");
  bool y_manages = false;
  for (const json& entry : forced->at("metadata").at("managedFields")) {
    y_manages |=
        entry.value("manager", "") == "manager-y" && entry.value("operation", "") == "Apply";
  }
  EXPECT_TRUE(y_manages);
}

TEST_F(KubeE2eTest, StatusSubresourceOfACustomResource) {
  InstallGizmoCrd(*client_);
  const ResourceRef gizmos = kGizmos.In(ns_);
  json gizmo = {{"apiVersion", "kube-e2e.ballast.io/v1"},
                {"kind", "Gizmo"},
                {"metadata", {{"name", "g"}}},
                {"spec", {{"size", 3}}},
                {"status", {{"phase", "ignored-on-create"}}}};
  StatusOr<json> created = Status::Unavailable("not tried");
  ASSERT_TRUE(WaitUntil([&] {  // discovery of a new CRD may lag Established
    created = client_->Create(gizmos, gizmo);
    return created.status().code() != StatusCode::kNotFound;
  }));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->contains("status")) << "status is not written by a create";

  // The status subresource writes .status only: the spec in the patch is ignored.
  auto updated = client_->PatchStatus(
      gizmos.Named("g"),
      {{"status", {{"phase", "Running"}, {"ready", 1}}}, {"spec", {{"size", 99}}}});
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->at("status").at("phase"), "Running");
  EXPECT_EQ(updated->at("spec").at("size"), 3);

  auto patched = client_->PatchStatus(gizmos.Named("g"), {{"status", {{"ready", 2}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(patched->at("status"), json({{"phase", "Running"}, {"ready", 2}}));

  // A schema violation comes back Invalid with the API server's own words.
  json bad = gizmo;
  bad["metadata"]["name"] = "bad";
  bad["spec"]["size"] = -1;
  auto refused = client_->Create(gizmos, bad);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("spec.size"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("should be greater than or equal to 0"),
            std::string::npos)
      << refused.status().message();
}

TEST_F(KubeE2eTest, StaleResourceVersionConflictsAndRetryOnConflictSucceeds) {
  auto created = client_->Create(Maps(), ConfigMap("c", {{"n", "0"}}));
  ASSERT_TRUE(created.ok());
  json stale = *created;
  json fresh = *created;
  fresh["data"]["n"] = "1";
  ASSERT_TRUE(client_->Update(Maps().Named("c"), fresh).ok());
  stale["data"]["n"] = "stale";
  auto refused = client_->Update(Maps().Named("c"), stale);
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict) << refused.status().ToString();
  // A merge patch carrying the stale resourceVersion is refused too.
  auto refused_patch = client_->MergePatch(
      Maps().Named("c"),
      {{"metadata", {{"resourceVersion", ResourceVersionOf(stale)}}}, {"data", {{"n", "stale"}}}});
  EXPECT_EQ(refused_patch.status().code(), StatusCode::kConflict);

  // Read-modify-write that loses a race once, then wins.
  int attempts = 0;
  Status status = RetryOnConflict([&]() -> Status {
    ++attempts;
    BALLAST_ASSIGN_OR_RETURN(json current, client_->Get(Maps().Named("c")));
    if (attempts == 1) {  // someone else writes between our read and our write
      EXPECT_TRUE(client_->MergePatch(Maps().Named("c"), {{"data", {{"other", "x"}}}}).ok());
    }
    current["data"]["n"] = std::to_string(std::stoi(current["data"]["n"].get<std::string>()) + 1);
    return client_->Update(Maps().Named("c"), current).status();
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(attempts, 2);
  auto final_state = client_->Get(Maps().Named("c"));
  ASSERT_TRUE(final_state.ok());
  EXPECT_EQ(final_state->at("data"), json({{"n", "2"}, {"other", "x"}}));
}

// One bounded watch of the test namespace's config maps from `from_rv`:
// "TYPE name" per event (the controller manager's kube-root-ca.crt left out,
// as it lands in a new namespace whenever the controller gets to it) and
// "BOOKMARK" per bookmark, whose resource version goes to `bookmark_rv`.
struct WatchLog {
  Status status;
  std::vector<std::string> seen;
  std::string bookmark_rv;
};

// Watches while `writes` runs, then once the watch has delivered
// "DELETED w" runs `once_live`.
WatchLog WatchMaps(KubeClient& client, const ResourceRef& maps, const std::string& from_rv,
                   int timeout_seconds, const std::function<void()>& writes,
                   const std::function<void()>& once_live) {
  WatchLog log;
  std::promise<void> live;
  std::thread watcher([&] {
    WatchOptions options;
    options.resource_version = from_rv;
    options.timeout_seconds = timeout_seconds;  // bookmarks come 2 s before the end
    log.status = client.Watch(maps, options, [&](const WatchEvent& event) {
      if (event.type == WatchEventType::kBookmark) {
        log.bookmark_rv = ResourceVersionOf(event.object);
        log.seen.push_back("BOOKMARK");
        return true;
      }
      const std::string name = event.object["metadata"]["name"];
      if (name == "kube-root-ca.crt") return true;
      log.seen.push_back(std::string(TypeName(event.type)) + " " + name);
      if (log.seen.back() == "DELETED w") live.set_value();
      return true;
    });
  });
  writes();
  if (live.get_future().wait_for(std::chrono::seconds(timeout_seconds)) ==
      std::future_status::ready) {
    once_live();
  }
  watcher.join();  // the API server ends the watch after timeout_seconds
  return log;
}

TEST_F(KubeE2eTest, WatchDeliversEventsInOrderAndBookmarks) {
  auto list = client_->List(Maps());
  ASSERT_TRUE(list.ok());
  auto write_w = [&] {
    ASSERT_TRUE(client_->Create(Maps(), ConfigMap("w", {{"v", "1"}})).ok());
    ASSERT_TRUE(client_->MergePatch(Maps().Named("w"), {{"data", {{"v", "2"}}}}).ok());
    ASSERT_TRUE(client_->Delete(Maps().Named("w")).ok());
  };
  // The API server bookmarks a watch at the newest resource version it has
  // of the resource, and only when that is newer than everything the cache
  // held when the watch began. A write where this watch does not look, made
  // once the watch is live, moves the cache on as any busy cluster's would.
  const ResourceRef elsewhere = ConfigMaps().In("default");
  const std::string other = ns_ + "-bookmark";
  auto write_elsewhere = [&] {
    ASSERT_TRUE(client_->Create(elsewhere, ConfigMap(other)).ok());
    ASSERT_TRUE(client_->Delete(elsewhere.Named(other)).ok());
  };
  WatchLog log = WatchMaps(*client_, Maps(), list->resource_version, 6, write_w, write_elsewhere);
  EXPECT_TRUE(log.status.ok()) << log.status.ToString();
  ASSERT_GE(log.seen.size(), 3u) << ::testing::PrintToString(log.seen);
  const std::vector<std::string> events(log.seen.begin(), log.seen.begin() + 3);
  EXPECT_EQ(events, (std::vector<std::string>{"ADDED w", "MODIFIED w", "DELETED w"}));
  for (size_t i = 3; i < log.seen.size(); ++i) EXPECT_EQ(log.seen[i], "BOOKMARK");

  // Bookmarks are best effort: a starved API server can miss a short
  // watch's pre-timeout slot. Replaying the same history must bring one.
  for (int attempt = 0; attempt < 2 && log.bookmark_rv.empty(); ++attempt) {
    WatchLog retry = WatchMaps(
        *client_, Maps(), list->resource_version, 4, [] {}, write_elsewhere);
    EXPECT_TRUE(retry.status.ok()) << retry.status.ToString();
    log.bookmark_rv = retry.bookmark_rv;
  }
  ASSERT_FALSE(log.bookmark_rv.empty()) << "no bookmark in three watches";
  EXPECT_GT(std::stoll(log.bookmark_rv), std::stoll(list->resource_version));
}

TEST_F(KubeE2eTest, WatchIsStoppableAndEndsWhenTheCallbackSaysSo) {
  Cancellation cancel;
  Status status = Status::Unavailable("not ended");
  std::atomic<bool> ended{false};
  std::thread watcher([&] {
    WatchOptions options;
    options.timeout_seconds = 300;
    status = client_->Watch(
        Maps(), options, [](const WatchEvent&) { return true; }, &cancel);
    ended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(ended.load());
  const auto start = std::chrono::steady_clock::now();
  cancel.Cancel();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(status.ok()) << status.ToString();

  // Returning false from the callback ends the watch at the first event.
  auto list = client_->List(Maps());
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("first")).ok());
  int calls = 0;
  WatchOptions options;
  options.resource_version = list->resource_version;
  Status once = client_->Watch(Maps(), options, [&](const WatchEvent&) {
    ++calls;
    return false;
  });
  EXPECT_TRUE(once.ok()) << once.ToString();
  EXPECT_EQ(calls, 1);
}

TEST_F(KubeE2eTest, WatchFromAnExpiredResourceVersionIsGone) {
  // A custom resource's watch cache starts when its CRD is established, long
  // after resourceVersion 1, so "1" is too old for it: the API server answers
  // 410 Gone. (Built-in types' caches start with a fresh etcd and still hold
  // everything on a young control plane.)
  InstallGizmoCrd(*client_);
  WatchOptions options;
  options.resource_version = "1";
  options.timeout_seconds = 10;
  Status event_error;
  Status status = client_->Watch(kGizmos.In(ns_), options, [&](const WatchEvent& event) {
    if (event.type == WatchEventType::kError) event_error = event.error;
    return event.type != WatchEventType::kError;
  });
  const StatusCode code = status.ok() ? event_error.code() : status.code();
  EXPECT_EQ(code, StatusCode::kGone) << status.ToString() << " / " << event_error.ToString();
}

TEST_F(KubeE2eTest, RestrictedIdentityIsForbiddenClearly) {
  auto restricted = ClientFor("kubeconfig-restricted");
  ASSERT_TRUE(restricted);
  auto list = restricted->List(Maps());
  EXPECT_EQ(list.status().code(), StatusCode::kUnavailable) << "retried: RBAC may change";
  const std::string message = list.status().message();
  EXPECT_NE(message.find("forbidden"), std::string::npos) << message;
  EXPECT_NE(message.find("ballast-restricted"), std::string::npos) << message;
  EXPECT_NE(message.find("configmaps"), std::string::npos) << message;
  auto create = restricted->Create(Maps(), ConfigMap("nope"));
  EXPECT_EQ(create.status().code(), StatusCode::kUnavailable);
}

TEST_F(KubeE2eTest, CountsRequestsPerVerb) {
  const auto before = client_->RequestCounts();
  ASSERT_TRUE(client_->Create(Maps(), ConfigMap("n")).ok());
  ASSERT_TRUE(client_->Get(Maps().Named("n")).ok());
  ASSERT_TRUE(client_->Get(Maps().Named("n")).ok());
  ASSERT_TRUE(client_->List(Maps()).ok());
  ASSERT_TRUE(client_->MergePatch(Maps().Named("n"), {{"data", {{"a", "b"}}}}).ok());
  EXPECT_EQ(client_->Get(Maps().Named("missing")).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(client_->Delete(Maps().Named("n")).ok());
  auto after = client_->RequestCounts();
  EXPECT_EQ(after["create"] - before.at("create"), 1u);
  EXPECT_EQ(after["get"] - before.at("get"), 3u);
  EXPECT_EQ(after["list"] - before.at("list"), 1u);
  EXPECT_EQ(after["patch"] - before.at("patch"), 1u);
  EXPECT_EQ(after["delete"] - before.at("delete"), 1u);
  EXPECT_EQ(after["update"] - before.at("update"), 0u);
}

TEST(KubeE2eConnection, UnreachableServerIsUnavailable) {
  auto config = LoadKubeconfig(testing::TestenvDir() + "/kubeconfig");
  ASSERT_TRUE(config.ok());
  config->server = "https://127.0.0.1:1";  // nothing listens there
  auto client = HttpKubeClient::Create(*config);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->Get(ConfigMaps().In("default").Named("x")).status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ballast::kube
