// Worker pods per CPU architecture: which architectures get a worker at all
// (--worker-architectures), and each one's worker image
// (--worker-image-for ARCH=IMAGE) and default resources
// (--worker-resources-for ARCH=requests.cpu=100m,limits.memory=256Mi). A
// node's architecture is its `kubernetes.io/arch` label, as the kubelet sets
// it (amd64, arm64, arm, ...).
//
// Precedence for a worker pod on a node of architecture A: the job's
// spec.worker.image (for primes and matmul also the template's worker
// container image), else A's --worker-image-for, else --worker-image; the
// resources of the job's worker container (spec.worker.resources in short),
// else A's --worker-resources-for, else none.
//
// Thread-safety: values and pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "operator/api/kube_views.h"
#include "operator/controller/worker_objects.h"

namespace ballast::controller {

inline constexpr const char* kArchLabel = "kubernetes.io/arch";

struct ArchitectureSettings {
  std::set<std::string> allowed;                    // empty: every architecture
  std::map<std::string, std::string> images;        // architecture -> worker image
  std::map<std::string, nlohmann::json> resources;  // architecture -> ResourceRequirements
  bool operator==(const ArchitectureSettings&) const = default;
};

// The settings from the flags' values: `list` as given to
// --worker-architectures ("" for all), each --worker-image-for and each
// --worker-resources-for. Returns Invalid naming the flag, the value and
// what was expected, e.g.
//   --worker-architectures aarch64: expected amd64, arm64, arm, 386, ppc64le,
//   s390x, riscv64, mips64le or loong64 (the kubernetes.io/arch values), got
//   "aarch64" (arm64 is Kubernetes' name for it)
// for an unknown or repeated architecture, an empty image, a key other than
// requests.NAME / limits.NAME, a malformed quantity, or an architecture
// that --worker-architectures leaves out.
StatusOr<ArchitectureSettings> ParseArchitectureFlags(
    const std::string& list, const std::vector<std::string>& image_for,
    const std::vector<std::string>& resources_for);

// The node's kubernetes.io/arch label; "" when it has none.
std::string NodeArchitecture(const api::NodeView& node);

// Why no worker goes to `node` for its architecture, e.g. "node pi3b-0:
// architecture arm is not in --worker-architectures (amd64, arm64)"; "" when
// one may.
std::string ArchitectureExclusion(const api::NodeView& node, const ArchitectureSettings& settings);

// `base` with the image and default resources of architecture `arch`.
WorkerPodSettings SettingsForArchitecture(WorkerPodSettings base,
                                          const ArchitectureSettings& settings,
                                          const std::string& arch);

}  // namespace ballast::controller
