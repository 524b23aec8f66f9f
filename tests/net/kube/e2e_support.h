// Shared fixture of the Kubernetes client's end-to-end tests: an admin client
// of the e2e control plane ($BALLAST_TESTENV_DIR/kubeconfig) and a namespace
// of the test's own, deleted afterwards.
//
// Thread-safety: the fixture is used from the test's thread; the client it
// holds may be shared with threads the test starts.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "net/kube/client.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"

namespace ballast::kube::testing {

using nlohmann::json;

// The control plane's directory; fails the test when the variable is unset.
inline std::string TestenvDir() {
  const char* dir = std::getenv("BALLAST_TESTENV_DIR");
  if (!dir || !*dir) {
    ADD_FAILURE() << "BALLAST_TESTENV_DIR is unset: run through ctest -L e2e, or "
                     "scripts/testenv-up and source its env file";
    return "";
  }
  return dir;
}

// A client of the identity in $BALLAST_TESTENV_DIR/<kubeconfig>.
inline std::unique_ptr<HttpKubeClient> ClientFor(const std::string& kubeconfig) {
  auto config = LoadKubeconfig(TestenvDir() + "/" + kubeconfig);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  if (!config.ok()) return nullptr;
  auto client = HttpKubeClient::Create(*config);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(*client) : nullptr;
}

// Polls `done` every 50 ms for up to `timeout`; returns its last answer.
inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

inline nlohmann::json ConfigMap(const std::string& name, nlohmann::json data = {}) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", data.is_null() ? nlohmann::json::object() : data}};
}

// The test's own CRD (testdata/gizmos-crd.json), with a status subresource.
inline const ResourceRef kGizmos = {"kube-e2e.ballast.io", "v1", "gizmos", true, "", ""};
inline const ResourceRef kCrdsRef = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", false, "", ""};

// Installs the test's CRD (gizmos.kube-e2e.ballast.io) and waits until it is
// Established; idempotent, so tests may share it.
inline void InstallGizmoCrd(KubeClient& client) {
  std::ifstream in(std::string(BALLAST_KUBE_TESTDATA) + "/gizmos-crd.json");
  std::stringstream text;
  text << in.rdbuf();
  const json crd = json::parse(text.str());
  auto applied = client.Apply(kCrdsRef.Named(crd["metadata"]["name"]), crd, {"kube-e2e", true, ""});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  ASSERT_TRUE(WaitUntil([&] {
    auto got = client.Get(kCrdsRef.Named(crd["metadata"]["name"]));
    if (!got.ok()) return false;
    for (const json& c : got->value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
    }
    return false;
  }));
}

class KubeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = ClientFor("kubeconfig");
    ASSERT_TRUE(client_);
    ns_ = NamespaceName();
    nlohmann::json object = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    auto created = client_->Create(Namespaces(), object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  void TearDown() override {
    if (client_ && !ns_.empty()) (void)client_->Delete(Namespaces().Named(ns_));
  }

  ResourceRef Maps() const { return ConfigMaps().In(ns_); }

  std::unique_ptr<HttpKubeClient> client_;
  std::string ns_;

 private:
  // "kube-<test name, lower case>-<random>", a valid namespace name.
  static std::string NamespaceName() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("kube-") + info->name();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
      return std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
    });
    name = name.substr(0, 50);
    std::random_device random;
    return name + "-" + std::to_string(random() % 1000000);
  }
};

}  // namespace ballast::kube::testing
