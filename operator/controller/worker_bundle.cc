#include "operator/controller/worker_bundle.h"

#include <charconv>

namespace ballast::controller {
namespace {

// The number at the start of `text`, and `text` moved past it.
std::optional<int> TakeNumber(std::string_view& text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(end - text.data());
  return value;
}

}  // namespace

std::optional<BundleMode> ParseBundleMode(std::string_view text) {
  if (text == "auto") return BundleMode::kAuto;
  if (text == "image-volume") return BundleMode::kImageVolume;
  if (text == "init-container") return BundleMode::kInitContainer;
  return std::nullopt;
}

const char* BundleModeName(BundleMode mode) {
  switch (mode) {
    case BundleMode::kAuto:
      return "auto";
    case BundleMode::kImageVolume:
      return "image-volume";
    case BundleMode::kInitContainer:
      return "init-container";
  }
  return "auto";
}

const char* BundleSourceName(BundleSource source) {
  return source == BundleSource::kImageVolume ? "image-volume" : "init-container";
}

std::optional<MajorMinor> ParseMajorMinor(std::string_view version) {
  if (version.starts_with('v')) version.remove_prefix(1);
  const std::optional<int> major = TakeNumber(version);
  if (!major || !version.starts_with('.')) return std::nullopt;
  version.remove_prefix(1);
  const std::optional<int> minor = TakeNumber(version);
  if (!minor) return std::nullopt;
  return MajorMinor{*major, *minor};
}

bool RuntimeMountsImageVolumes(std::string_view runtime_version) {
  const size_t scheme = runtime_version.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view name = runtime_version.substr(0, scheme);
  const std::optional<MajorMinor> version = ParseMajorMinor(runtime_version.substr(scheme + 3));
  if (!version) return false;
  if (name == "containerd") return *version >= MajorMinor{2, 1};
  if (name == "cri-o") return *version >= MajorMinor{1, 31};
  return false;
}

bool KubeletHasImageVolumes(std::string_view kubelet_version) {
  const std::optional<MajorMinor> version = ParseMajorMinor(kubelet_version);
  return version && *version >= MajorMinor{1, 36};
}

BundleSource ChooseBundleSource(BundleMode mode, const api::NodeView& node, bool refused) {
  if (refused || mode == BundleMode::kInitContainer) return BundleSource::kInitContainer;
  if (mode == BundleMode::kImageVolume) return BundleSource::kImageVolume;
  return RuntimeMountsImageVolumes(node.container_runtime) &&
                 KubeletHasImageVolumes(node.kubelet_version)
             ? BundleSource::kImageVolume
             : BundleSource::kInitContainer;
}

}  // namespace ballast::controller
