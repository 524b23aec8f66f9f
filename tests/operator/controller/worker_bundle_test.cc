// ChooseBundleSource and the readers of the nodes' versions
// (operator/controller/worker_bundle.h).
#include "operator/controller/worker_bundle.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

api::NodeView Node(const std::string& runtime, const std::string& kubelet) {
  api::NodeView node;
  node.meta.name = "pi4b-0";
  node.container_runtime = runtime;
  node.kubelet_version = kubelet;
  return node;
}

TEST(WorkerBundleTest, ParsesMajorAndMinorAsNodesReportThem) {
  struct Case {
    const char* text;
    std::optional<MajorMinor> want;
  };
  const Case cases[] = {
      {"v1.36.2", MajorMinor{1, 36}},
      {"v1.36.2+k3s1", MajorMinor{1, 36}},
      {"2.1.4-k3s1", MajorMinor{2, 1}},
      {"1.7.27", MajorMinor{1, 7}},
      {"1.6.20~ds1", MajorMinor{1, 6}},
      {"v1.37", MajorMinor{1, 37}},
      {"", std::nullopt},
      {"v", std::nullopt},
      {"2", std::nullopt},
      {"2.", std::nullopt},
      {"x2.1", std::nullopt},
      {"-1.2", std::nullopt},
      {"99999999999.1", std::nullopt},
      {"1.x", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseMajorMinor(c.text), c.want) << c.text;
  }
}

TEST(WorkerBundleTest, RuntimesThatMountImageVolumes) {
  struct Case {
    const char* runtime;
    bool mounts;
  };
  const Case cases[] = {
      {"containerd://2.1.0", true},
      {"containerd://2.1.5-k3s1", true},
      {"containerd://2.4.2", true},
      {"containerd://3.0.0", true},
      {"containerd://2.0.7", false},
      {"containerd://1.7.27-k3s1", false},
      {"containerd://1.6.20~ds1", false},
      {"cri-o://1.31.0", true},
      {"cri-o://1.30.4", false},
      {"docker://28.1.1", false},
      {"containerd:2.1.0", false},
      {"containerd://", false},
      {"", false},
      {"CONTAINERD://2.1.0", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RuntimeMountsImageVolumes(c.runtime), c.mounts) << c.runtime;
  }
}

TEST(WorkerBundleTest, KubeletsWhereImageVolumesAreOnForCertain) {
  EXPECT_TRUE(KubeletHasImageVolumes("v1.36.0"));
  EXPECT_TRUE(KubeletHasImageVolumes("v1.37.2"));
  EXPECT_TRUE(KubeletHasImageVolumes("v1.36.1+k3s1"));
  EXPECT_TRUE(KubeletHasImageVolumes("v2.0.0"));
  // 1.35: on by default but a beta the cluster may have turned off.
  EXPECT_FALSE(KubeletHasImageVolumes("v1.35.4"));
  EXPECT_FALSE(KubeletHasImageVolumes("v1.30.14"));
  EXPECT_FALSE(KubeletHasImageVolumes(""));
  EXPECT_FALSE(KubeletHasImageVolumes("unknown"));
}

TEST(WorkerBundleTest, AutoTakesTheImageVolumeWhereBothTheKubeletAndTheRuntimeHaveIt) {
  EXPECT_EQ(ChooseBundleSource(BundleMode::kAuto, Node("containerd://2.4.2", "v1.37.2"), false),
            BundleSource::kImageVolume);
  EXPECT_EQ(ChooseBundleSource(BundleMode::kAuto, Node("cri-o://1.36.1", "v1.36.1"), false),
            BundleSource::kImageVolume);
  // The test bed's default nodes: Debian's containerd 1.6.
  EXPECT_EQ(
      ChooseBundleSource(BundleMode::kAuto, Node("containerd://1.6.20~ds1", "v1.37.2"), false),
      BundleSource::kInitContainer);
  // k3s 1.35 ships containerd 2.1, but its gate may be off.
  EXPECT_EQ(
      ChooseBundleSource(BundleMode::kAuto, Node("containerd://2.1.5-k3s1", "v1.35.4+k3s1"), false),
      BundleSource::kInitContainer);
  // A node that reports nothing (an emulated node, an old API server).
  EXPECT_EQ(ChooseBundleSource(BundleMode::kAuto, Node("", ""), false),
            BundleSource::kInitContainer);
}

TEST(WorkerBundleTest, ANodeThatRefusedTheImageVolumeGetsTheInitContainerWhateverTheMode) {
  const api::NodeView node = Node("containerd://2.4.2", "v1.37.2");
  for (BundleMode mode :
       {BundleMode::kAuto, BundleMode::kImageVolume, BundleMode::kInitContainer}) {
    EXPECT_EQ(ChooseBundleSource(mode, node, true), BundleSource::kInitContainer)
        << BundleModeName(mode);
  }
}

TEST(WorkerBundleTest, TheModesOverTheNodesFacts) {
  const api::NodeView old = Node("containerd://1.6.20~ds1", "v1.30.14");
  const api::NodeView current = Node("containerd://2.4.2", "v1.37.2");
  EXPECT_EQ(ChooseBundleSource(BundleMode::kImageVolume, old, false), BundleSource::kImageVolume);
  EXPECT_EQ(ChooseBundleSource(BundleMode::kInitContainer, current, false),
            BundleSource::kInitContainer);
}

TEST(WorkerBundleTest, ModeNamesReadBack) {
  for (BundleMode mode :
       {BundleMode::kAuto, BundleMode::kImageVolume, BundleMode::kInitContainer}) {
    EXPECT_EQ(ParseBundleMode(BundleModeName(mode)), mode);
  }
  EXPECT_EQ(ParseBundleMode("Auto"), std::nullopt);
  EXPECT_EQ(ParseBundleMode("image_volume"), std::nullopt);
  EXPECT_EQ(ParseBundleMode(""), std::nullopt);
  EXPECT_STREQ(BundleSourceName(BundleSource::kImageVolume), "image-volume");
  EXPECT_STREQ(BundleSourceName(BundleSource::kInitContainer), "init-container");
}

}  // namespace
}  // namespace ballast::controller
