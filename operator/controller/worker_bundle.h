// Where an exec pod in the user's image gets the worker's bundle (the
// ballast-worker program, its loader and libraries; worker/bundle.h) on one
// node: copied by an init container into an emptyDir, or mounted read-only
// from the ballast-worker image as an image volume (KEP-4639), which saves
// the copy (about 20 MB per pod) and the init container's start.
//
// An image volume needs the feature on both the API server and the kubelet
// (ImageVolume: beta and on by default from Kubernetes 1.35, GA and locked on
// from 1.36) and a runtime that mounts one (containerd 2.1 or later, CRI-O
// 1.31 or later). The node's kubelet version is enough for the API server
// too: the version skew policy forbids a kubelet newer than the API server,
// so a 1.36 kubelet implies a 1.36 API server, where the feature cannot be
// off. A 1.35 cluster may have turned the gate off, so `auto` waits for 1.36
// there; `image-volume` says the operator's user knows better.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "operator/api/kube_views.h"

namespace ballast::controller {

// The operator's --worker-bundle.
enum class BundleMode {
  kAuto,           // an image volume where the node's facts say it works
  kImageVolume,    // an image volume on every node (unless one refused it)
  kInitContainer,  // the init container everywhere (the behaviour before image volumes)
};

// How a pod gets the bundle.
enum class BundleSource { kInitContainer, kImageVolume };

// "auto", "image-volume", "init-container"; nullopt for anything else.
std::optional<BundleMode> ParseBundleMode(std::string_view text);
const char* BundleModeName(BundleMode mode);
// "init-container", "image-volume": the value of the worker pod's
// ballast.io/worker-bundle annotation.
const char* BundleSourceName(BundleSource source);

// A version as nodes report theirs ("v1.36.2", "v1.36.2+k3s1",
// "2.1.4-k3s1", "1.7.27"): major and minor; nullopt when the text does not
// start (after an optional 'v') with two dot-separated numbers.
struct MajorMinor {
  int major = 0;
  int minor = 0;
  auto operator<=>(const MajorMinor&) const = default;
};
std::optional<MajorMinor> ParseMajorMinor(std::string_view version);

// Whether the runtime a node reports (status.nodeInfo.containerRuntimeVersion,
// "containerd://2.1.4-k3s1", "cri-o://1.31.0") mounts image volumes:
// containerd 2.1 or later, CRI-O 1.31 or later. False for any other runtime
// or a version that does not read.
bool RuntimeMountsImageVolumes(std::string_view runtime_version);

// Whether the kubelet a node reports (status.nodeInfo.kubeletVersion) has
// image volumes on for certain: 1.36 or later.
bool KubeletHasImageVolumes(std::string_view kubelet_version);

// The source for a pod on `node` under `mode`. `refused`: an image-volume
// pod already failed to start on this node for this job
// (NodeFault::image_volume_refused), which sends every later pod there to
// the init container whatever the mode.
BundleSource ChooseBundleSource(BundleMode mode, const api::NodeView& node, bool refused);

}  // namespace ballast::controller
