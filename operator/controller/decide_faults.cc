// Decide's handling of a node whose worker cannot work (decide_internal.h):
// a node skipped for its architecture, a worker pod whose image cannot
// start (given up after worker_start_timeout, its share to the others), and
// a worker that cannot reach the coordinator (an Event naming the node).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "operator/controller/decide_internal.h"
#include "operator/controller/worker_objects.h"

namespace ballast::controller::decide {

namespace {

constexpr const char* kArchitectureReason = "ArchitectureNotSupported";

// What ballast-worker's log ends with when it gave up on the coordinator
// (worker/worker_loop.cc, CoordinatorUnreachable); with
// terminationMessagePolicy FallbackToLogsOnError it is the pod's message.
constexpr const char* kUnreachableText = "cannot reach the coordinator";

// The kubelet's waiting reasons of a container whose image cannot start.
bool ImageReason(const std::string& reason) {
  static const char* const kReasons[] = {
      "ErrImagePull",        "ImagePullBackOff",           "ErrImageNeverPull",
      "InvalidImageName",    "CreateContainerConfigError", "CreateContainerError",
      "RegistryUnavailable", "ImageInspectError",          "PreCreateHookError",
      "PreStartHookError"};
  return std::find(std::begin(kReasons), std::end(kReasons), reason) != std::end(kReasons);
}

// What keeps the first container (init containers first) waiting for an
// image reason from starting; nullopt when none is.
struct StartTrouble {
  std::string reason;  // the kubelet's
  std::string cause;   // NameStartTrouble's
  std::string detail;  // "container worker (image): the kubelet's message"
};
std::optional<StartTrouble> ImageTrouble(const api::PodView& pod) {
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const api::ContainerView& container : *list) {
      const std::string& reason = container.waiting_reason;
      if (!ImageReason(reason)) continue;
      const std::string& message =
          container.waiting_message.empty() ? reason : container.waiting_message;
      return StartTrouble{
          reason, NameStartTrouble(reason, container.waiting_message, container.image),
          fmt::format("container {} ({}): {}", container.name, container.image, message)};
    }
  }
  return std::nullopt;
}

// The word after `prefix` in `text` up to the next `end` character; "" when
// `prefix` is absent.
std::string After(std::string_view text, std::string_view prefix, char end) {
  const size_t at = text.find(prefix);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = text.substr(at + prefix.size());
  return std::string(rest.substr(0, rest.find(end)));
}

void GiveUp(const PassView& view, NodeFault& fault, PassOut& out, const std::string& node,
            const api::PodView& pod, const StartTrouble& trouble) {
  const double waited = std::chrono::duration<double>(view.WorkerStartTimeout()).count();
  const std::string message = fmt::format(
      "node {}: the worker could not start for {:.0f} s: {} ({}); its share goes to the other "
      "workers",
      node, waited, trouble.cause, trouble.detail);
  out.given_up.push_back(api::ExcludedNode{node, trouble.reason, message, trouble.cause});
  fault.image_wait.reset();
  if (!view.in.view->done) out.actions.push_back(WorkerLost{node});
  out.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
  out.Event(true, api::Reason::kWorkerCannotStart, message);
}

// When the pod's worker container started (seconds since the epoch).
std::optional<double> StartedAt(const api::PodView& pod) {
  for (const api::ContainerView& container : pod.containers) {
    if (!container.started_at.empty()) return ParseRfcTime(container.started_at);
  }
  return std::nullopt;
}

// The kubelet's waiting reason of a container the runtime could not make
// (not an image it could not pull, nor a missing Secret).
bool RuntimeReason(const std::string& reason) { return reason == "CreateContainerError"; }

// When `pod` mounts the worker's bundle as an image volume and its worker
// cannot be created for a runtime reason (`trouble`), the first time on
// `node` for this job: deletes it and sends the node's next pods to the init
// container (the runtime may lack image volumes whatever it reports); true
// then. The worker never ran, so nothing of the job is lost.
bool FallBackFromImageVolume(NodeFault& fault, PassOut& out, const std::string& node,
                             const api::PodView& pod, const StartTrouble& trouble) {
  const auto bundle = pod.meta.annotations.find(api::kWorkerBundleAnnotation);
  if (bundle == pod.meta.annotations.end() ||
      bundle->second != BundleSourceName(BundleSource::kImageVolume) ||
      !RuntimeReason(trouble.reason) || fault.image_volume_refused) {
    return false;
  }
  fault.image_volume_refused = true;
  fault.image_wait.reset();
  out.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
  out.Event(true, api::Reason::kWorkerBundleFallback,
            fmt::format("node {}: the worker's bundle as an image volume did not start ({}); "
                        "the node's next pod copies it with an init container",
                        node, trouble.detail));
  return true;
}

}  // namespace

std::string NameStartTrouble(const std::string& reason, const std::string& message,
                             const std::string& image) {
  // The kubelet's words for a missing object the container needs
  // (CreateContainerConfigError): `secret "s3" not found`, `couldn't find key
  // token in Secret ns/s3`, and the same for a ConfigMap.
  for (const auto& [lower, kind] : {std::pair{"secret", "Secret"}, {"configmap", "ConfigMap"}}) {
    const std::string missing = After(message, fmt::format("{} \"", lower), '"');
    if (!missing.empty() && message.find("not found") != std::string::npos) {
      return fmt::format("the {} {} does not exist", kind, missing);
    }
    const std::string key = After(message, "couldn't find key ", ' ');
    const std::string in = After(message, fmt::format(" in {} ", kind), ' ');
    if (!key.empty() && !in.empty()) return fmt::format("the {} {} has no key {}", kind, in, key);
  }
  if (reason == "ErrImagePull" || reason == "ImagePullBackOff" || reason == "RegistryUnavailable") {
    return fmt::format("the image {} cannot be pulled", image);
  }
  if (reason == "ErrImageNeverPull") {
    return fmt::format("the image {} is not on the node and imagePullPolicy is Never", image);
  }
  if (reason == "InvalidImageName") return fmt::format("the image name {} is not valid", image);
  return fmt::format("the container cannot be created ({})", reason);
}

bool ArchitectureRow(const api::ExcludedNode& row) { return row.reason == kArchitectureReason; }

bool ExcludeArchitectures(const std::vector<api::ExcludedNode>& excluded,
                          api::WeightedJobStatus& status, PassOut& out) {
  std::vector<api::ExcludedNode> rows = excluded;
  std::vector<api::ExcludedNode> named;
  for (const auto& row : status.excluded_nodes)
    (ArchitectureRow(row) ? named : rows).push_back(row);
  if (excluded == named) return false;
  if (!excluded.empty()) {
    std::vector<std::string> messages;
    for (const auto& node : excluded) messages.push_back(node.message);
    out.Event(true, api::Reason::kArchitectureNotSupported,
              fmt::format("no worker on {} node(s): {}", excluded.size(), ListSome(messages)));
  }
  status.excluded_nodes = std::move(rows);
  return true;
}

bool AddGivenUp(const PassOut& out, api::WeightedJobStatus& status) {
  if (out.given_up.empty()) return false;
  auto& rows = status.excluded_nodes;
  rows.insert(rows.end(), out.given_up.begin(), out.given_up.end());
  // The architecture rows first, then the given-up ones by name.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (ArchitectureRow(a) || ArchitectureRow(b)) return ArchitectureRow(a) && !ArchitectureRow(b);
    return a.name < b.name;
  });
  return true;
}

bool ForgetGivenUp(api::WeightedJobStatus& status) {
  return std::erase_if(status.excluded_nodes,
                       [](const api::ExcludedNode& row) { return !ArchitectureRow(row); }) > 0;
}

bool GivenUp(const PassView& view, PassOut& out, const std::string& node, const api::PodView* pod,
             bool owned) {
  if (!view.GivenUpRow(node)) return false;
  const bool finished =
      pod && (pod->phase == api::PodPhase::kSucceeded || pod->phase == api::PodPhase::kFailed);
  if (owned && !pod->meta.deleting && !finished) {
    out.actions.push_back(DeletePod{pod->meta.name, pod->meta.uid});
  }
  return true;
}

bool WatchImage(const PassView& view, NodeFault& fault, PassOut& out, const std::string& node,
                const api::PodView& pod) {
  const auto trouble = ImageTrouble(pod);
  if (!trouble) {
    if (fault.image_wait && fault.image_wait->pod_uid == pod.meta.uid) fault.image_wait.reset();
    return false;
  }
  if (FallBackFromImageVolume(fault, out, node, pod, *trouble)) return true;
  // The wait counts for this pod: a new pod on the node waits from now.
  const bool first_sight = !fault.image_wait || fault.image_wait->pod_uid != pod.meta.uid;
  if (first_sight) fault.image_wait = NodeFault::ImageWait{pod.meta.uid, view.in.now.steady};
  const auto waited = view.in.now.steady - fault.image_wait->since;
  const std::chrono::milliseconds timeout = view.WorkerStartTimeout();
  if (waited >= timeout) {
    GiveUp(view, fault, out, node, pod, *trouble);
    return true;
  }
  if (first_sight) {
    // Said as soon as the kubelet says it: the user may fix it (create the
    // Secret, push the image) before the node is given up.
    out.Event(true, api::Reason::kWorkerStartBlocked,
              fmt::format("node {}: the worker cannot start: {} ({}); the node is given up "
                          "after {:.0f} s unless that changes",
                          node, trouble->cause, trouble->detail,
                          std::chrono::duration<double>(timeout).count()));
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(timeout - waited);
  out.start_blocked.push_back(fmt::format("node {}: {}; given up in {:.0f} s", node, trouble->cause,
                                          std::ceil(std::chrono::duration<double>(left).count())));
  // ManagePods' caller sets the status interval as the next pass; an earlier
  // deadline wins (Run takes the minimum).
  out.WakeBy(left + std::chrono::milliseconds(1));
  return false;
}

void WatchReach(const PassView& view, double registered_wall, NodeFault& fault, PassOut& out,
                const std::string& node, const api::PodView& pod) {
  if (fault.unreachable_said || view.in.view->done) return;
  const coordinator::WorkerView* worker = view.WorkerNamed(node);
  if (!worker || worker->contacted) return;
  const auto started = StartedAt(pod);
  const double timeout = std::chrono::duration<double>(view.WorkerStartTimeout()).count();
  if (!started) return;
  // A worker that ran before this session (the operator restarted) has had
  // only since the session started to report to it.
  const double since = std::max(*started, registered_wall);
  if (view.in.now.wall - since < timeout) return;
  fault.unreachable_said = true;
  out.Event(true, api::Reason::kCoordinatorUnreachable,
            fmt::format("node {}: the worker of pod {} has run {:.0f} s without reaching the "
                        "coordinator at {}; its log says why (kubectl logs {})",
                        node, pod.meta.name, view.in.now.wall - since,
                        view.options.pods.coordinator_url, pod.meta.name));
}

void ReportUnreachableFailure(const PassView& view, NodeFault& fault, PassOut& out,
                              const std::string& node, const api::PodView& pod) {
  std::string failure;
  for (const api::ContainerView& container : pod.containers) {
    if (container.terminated) failure += container.terminated->message;
  }
  if (failure.find(kUnreachableText) == std::string::npos) return;
  // The last line that says so: the worker's own summary.
  std::string line = failure.substr(failure.rfind(kUnreachableText));
  line = line.substr(0, line.find('\n'));
  while (!line.empty() &&
         (line.back() == '"' || std::isspace(static_cast<unsigned char>(line.back())))) {
    line.pop_back();  // the log line's closing quote
  }
  fault.unreachable_said = true;
  out.Event(true, api::Reason::kCoordinatorUnreachable,
            fmt::format("node {}: the worker {} (coordinator URL {})", node, line,
                        view.options.pods.coordinator_url));
}

}  // namespace ballast::controller::decide
