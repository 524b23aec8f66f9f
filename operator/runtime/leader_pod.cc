#include "operator/runtime/leader_pod.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "operator/runtime/resources.h"

namespace ballast::runtime {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

Status SetLeaderLabel(kube::KubeClient& client, const OwnPod& pod, bool leader,
                      std::chrono::milliseconds patience) {
  const json value = leader ? json(std::string(api::kLeaderValue)) : json(nullptr);
  const json patch = {{"metadata", {{"labels", {{std::string(api::kCoordinatorLabel), value}}}}}};
  const auto deadline = Clock::now() + patience;
  auto backoff = std::chrono::milliseconds(100);
  while (true) {
    auto patched = client.MergePatch(Pods().In(pod.ns).Named(pod.name), patch);
    if (patched.ok()) {
      spdlog::info("own pod labelled pod={}/{} {}={}", pod.ns, pod.name, api::kCoordinatorLabel,
                   leader ? std::string(api::kLeaderValue) : std::string("(removed)"));
      return Status::Ok();
    }
    const StatusCode code = patched.status().code();
    const std::string what =
        fmt::format("{} the label {} on the operator's own pod {}/{}",
                    leader ? "setting" : "removing", api::kCoordinatorLabel, pod.ns, pod.name);
    if (code == StatusCode::kNotFound || code == StatusCode::kInvalid) {
      return Status(code, fmt::format("{}: {} (POD_NAME and POD_NAMESPACE must name this pod)",
                                      what, patched.status().message()));
    }
    if (Clock::now() + backoff > deadline) {
      return Status::Unavailable(fmt::format("{}: {}", what, patched.status().message()));
    }
    spdlog::info("retrying error=\"{}: {}\"", what, patched.status().message());
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

}  // namespace ballast::runtime
