// Worker pods per architecture (operator/controller/architectures.h): the
// flags' values read or refused with the flag, the value and what was
// expected; which nodes are left out; each architecture's image and
// resources.
#include "operator/controller/architectures.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

// The view of a Node `name` labelled with `arch` ("": no label).
api::NodeView NodeOf(const std::string& name, const std::string& arch) {
  json node = {{"metadata", {{"name", name}, {"labels", json::object()}}}};
  if (!arch.empty()) node["metadata"]["labels"][kArchLabel] = arch;
  return api::ReadNode(node);
}

TEST(ArchitecturesTest, FlagsAreReadIntoSettings) {
  auto settings = ParseArchitectureFlags(
      "amd64,arm64,arm", {"arm=ballast-worker:0.1.0-armv7", "arm64=registry.local/w:1"},
      {"arm=requests.cpu=100m,limits.memory=256Mi", "amd64=limits.example.com/gpu=1"});
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->allowed, (std::set<std::string>{"amd64", "arm64", "arm"}));
  EXPECT_EQ(settings->images.at("arm"), "ballast-worker:0.1.0-armv7");
  EXPECT_EQ(settings->images.at("arm64"), "registry.local/w:1");
  EXPECT_EQ(settings->resources.at("arm"),
            (json{{"requests", {{"cpu", "100m"}}}, {"limits", {{"memory", "256Mi"}}}}));
  EXPECT_EQ(settings->resources.at("amd64"), (json{{"limits", {{"example.com/gpu", "1"}}}}));
  auto none = ParseArchitectureFlags("", {}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, ArchitectureSettings{});
}

TEST(ArchitecturesTest, BadFlagValuesAreRefusedNamingTheFlagAndWhatWasExpected) {
  struct Case {
    std::string list;
    std::vector<std::string> images, resources;
    std::string message;
  };
  const Case cases[] = {
      {"amd64,aarch64",
       {},
       {},
       "--worker-architectures amd64,aarch64: expected an architecture as the kubernetes.io/arch "
       "label names it (amd64, arm64, arm, 386, ppc64le, s390x, riscv64, mips64le, loong64), got "
       "\"aarch64\" (arm64 is Kubernetes' name for it)"},
      {"amd64,", {}, {}, "--worker-architectures amd64,: expected an architecture"},
      {"arm,arm", {}, {}, "--worker-architectures arm,arm: arm is listed twice"},
      {"", {"arm"}, {}, "--worker-image-for arm: expected ARCH=IMAGE, got \"arm\""},
      {"", {"=img"}, {}, "--worker-image-for =img: expected ARCH=IMAGE, got \"=img\""},
      {"", {"armv7=img"}, {}, "(arm is Kubernetes' name for it)"},
      {"",
       {"arm=a b"},
       {},
       "--worker-image-for arm=a b: expected an image reference without "
       "spaces, got \"a b\""},
      {"", {"arm=a", "arm=b"}, {}, "--worker-image-for arm=b: architecture arm is given twice"},
      {"amd64",
       {"arm=a"},
       {},
       "--worker-image-for arm=a: architecture arm is not in --worker-architectures (amd64), so "
       "no worker would use it"},
      {"",
       {},
       {"arm=cpu=1"},
       "--worker-resources-for arm=cpu=1: expected requests.NAME=QUANTITY or "
       "limits.NAME=QUANTITY, e.g. requests.cpu=100m,limits.memory=256Mi; got \"cpu=1\""},
      {"",
       {},
       {"arm=requests.cpu=1x"},
       "--worker-resources-for arm=requests.cpu=1x: requests.cpu: expected a quantity such as "
       "100m, 0.5, 256Mi or 1G, got \"1x\""},
      {"", {}, {"arm=requests.cpu=1,"}, "got \"\""},
      {"", {}, {"arm=limits.cpu=1,limits.cpu=2"}, "limits.cpu is given twice"},
      {"", {}, {"arm=requests.memory=-1Gi"}, "got \"-1Gi\""},
  };
  for (const auto& c : cases) {
    auto settings = ParseArchitectureFlags(c.list, c.images, c.resources);
    ASSERT_FALSE(settings.ok()) << c.message;
    EXPECT_EQ(settings.status().code(), StatusCode::kInvalid);
    EXPECT_NE(settings.status().message().find(c.message), std::string::npos)
        << settings.status().message();
  }
}

TEST(ArchitecturesTest, NodesOfArchitecturesNotListedAreExcludedSayingWhy) {
  ArchitectureSettings settings;
  EXPECT_EQ(ArchitectureExclusion(NodeOf("pi3b-0", "arm"), settings), "") << "no list: all";
  settings.allowed = {"arm64", "amd64"};
  EXPECT_EQ(ArchitectureExclusion(NodeOf("pi5-0", "arm64"), settings), "");
  EXPECT_EQ(ArchitectureExclusion(NodeOf("pi3b-0", "arm"), settings),
            "node pi3b-0: architecture arm is not in --worker-architectures (amd64, arm64): no "
            "worker image for it");
  EXPECT_EQ(ArchitectureExclusion(NodeOf("bare", ""), settings),
            "node bare: no label kubernetes.io/arch, and --worker-architectures allows only "
            "amd64, arm64");
}

TEST(ArchitecturesTest, EachArchitectureGetsItsImageAndResources) {
  ArchitectureSettings settings;
  settings.images = {{"arm", "w-armv7"}};
  settings.resources = {{"arm", {{"limits", {{"memory", "256Mi"}}}}}};
  WorkerPodSettings base;
  base.default_image = "w";
  const WorkerPodSettings arm = SettingsForArchitecture(base, settings, "arm");
  EXPECT_EQ(arm.default_image, "w-armv7");
  EXPECT_EQ(arm.default_resources, (json{{"limits", {{"memory", "256Mi"}}}}));
  const WorkerPodSettings amd64 = SettingsForArchitecture(base, settings, "amd64");
  EXPECT_EQ(amd64.default_image, "w");
  EXPECT_TRUE(amd64.default_resources.is_null());
}

}  // namespace
}  // namespace ballast::controller
