// Decide's management of a running session's nodes and pods
// (decide_internal.h): each node's worker pod made, watched, replaced or
// given up, its worker lost when its node goes and back when it returns.
#include <fmt/format.h>

#include <set>
#include <utility>

#include "operator/controller/decide_internal.h"
#include "operator/controller/node_selection.h"

namespace ballast::controller::decide {

namespace {

// "exit code 3: <message>" of a failed pod's worker container, for events;
// "init container bundle: exit code 2: <message>" when an init container
// failed first (the worker in the user's image, worker_objects.h).
std::string PodFailure(const api::PodView& pod) {
  for (const api::ContainerView& init : pod.init_containers) {
    const auto& terminated = init.terminated;
    if (!terminated || terminated->exit_code.value_or(0) == 0) continue;
    std::string text =
        fmt::format("init container {}: exit code {}", init.name, *terminated->exit_code);
    if (!terminated->message.empty()) text += ": " + terminated->message.substr(0, 300);
    return text;
  }
  for (const api::ContainerView& container : pod.containers) {
    const auto& terminated = container.terminated;
    if (!terminated) continue;
    std::string text = fmt::format("exit code {}", terminated->exit_code.value_or(-1));
    std::string message = terminated->message;
    // The end of the message: a log's tail ends with what went wrong.
    if (message.size() > 300) message = "..." + message.substr(message.size() - 300);
    if (!message.empty()) text += ": " + message;
    return text;
  }
  return pod.reason.empty() ? "no container status" : pod.reason;
}

// The node cannot run the job's worker now: not Ready, gone, or no longer
// one the job would be placed on (`why`: cordoned, drained, labelled out of
// the selector, tainted). Its worker is lost at once, so that its lease moves
// with no wait for it to expire, and its pod is deleted.
void LoseNode(const PassView& view, NodeFault& fault, PassOut& out, const std::string& node,
              const api::NodeView* object, const std::string& why, const api::PodView* pod,
              bool owned) {
  const bool done = view.in.view->done;
  if (fault.lost == NodeFault::Lost::kNo) {
    const bool left = object && object->ready && !done;
    fault.lost = left ? NodeFault::Lost::kLeft : NodeFault::Lost::kNotReady;
    if (!done) out.actions.push_back(WorkerLost{node});
    if (done) {
      // Nothing is said of a session that is done.
    } else if (!left) {
      out.Event(
          true, api::Reason::kNodeNotReady,
          fmt::format("node {} is not Ready; its unfinished items go to the other workers", node));
    } else {
      out.Event(false, api::Reason::kNodeLeft,
                fmt::format("{}; its worker leaves the job and its unfinished items go to the "
                            "other workers",
                            why));
    }
  }
  if (owned && !pod->meta.deleting) out.actions.push_back(DeletePod{pod->meta.name, ""});
}

void CountFailure(const PassView& view, NodeFault& fault, PassOut& out, const std::string& node,
                  const api::PodView& pod, PodCount& count) {
  const uint32_t limit = view.spec().job.backoff_limit;
  // One worker pod per node: a failed pod counted is the node's last one.
  if (fault.counted_failure != pod.meta.uid) {
    fault.counted_failure = pod.meta.uid;
    const uint32_t failures = ++count.failed_pods;
    out.actions.push_back(WorkerLost{node});
    out.Event(true, api::Reason::kWorkerFailed,
              fmt::format("pod {} on {} failed ({}); failure {} of backoffLimit {}{}",
                          pod.meta.name, node, PodFailure(pod), failures, limit,
                          failures <= limit ? ", replacing it" : ", not replaced"));
    ReportUnreachableFailure(view, fault, out, node, pod);
  }
  if (!pod.meta.deleting) out.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
}

// For a node whose worker the session released: true, counted as released,
// when its pod is gone or Succeeded (the worker exited 0 on its "done"),
// which is neither made again nor a failure; false while it still runs (or
// failed), which ManageNode counts as any other pod.
bool ReleasedPodFinished(const api::PodView* pod, bool owned, PodCount& count) {
  if (pod && owned && pod->phase != api::PodPhase::kSucceeded) return false;
  ++count.released;
  return true;
}

// A node that is back (Ready again, or eligible again) after its worker was
// lost: said once, unless the session is done.
void SayBack(NodeFault& fault, PassOut& out, const std::string& node, bool done) {
  const NodeFault::Lost lost = std::exchange(fault.lost, NodeFault::Lost::kNo);
  if (lost == NodeFault::Lost::kNo || done) return;
  if (lost == NodeFault::Lost::kLeft) {
    out.Event(false, api::Reason::kNodeEligible,
              fmt::format("node {} can run the job's worker again; its worker starts again", node));
  } else {
    out.Event(false, api::Reason::kNodeReady,
              fmt::format("node {} is Ready again; its worker starts again", node));
  }
}

// The worker pod of an eligible node (`pod`, nullptr when there is none):
// made when missing (unless the session is done or the pods failed past
// backoffLimit), watched while Pending (WatchImage) or Running (WatchReach),
// counted when failed.
void ManagePod(const PassView& view, double registered_wall, NodeFault& fault, PassOut& out,
               const std::string& node, const api::NodeView& node_object, const api::PodView* pod,
               PodCount& count) {
  const bool done = view.in.view->done;
  if (!pod) {
    if (done || count.failed_pods > view.spec().job.backoff_limit) return;
    const std::string name = WorkerPodName(view.in.name, node);
    if (!view.in.writes.creating && !view.in.writes.on_their_way.contains(name)) {
      WorkerPodSettings settings = SettingsForArchitecture(
          view.options.pods, view.options.architectures, NodeArchitecture(node_object));
      settings.coordinator_job = view.in.id;
      settings.node_cpu = DeclaredSpeed(node_object);
      settings.bundle =
          ChooseBundleSource(view.options.worker_bundle, node_object, fault.image_volume_refused);
      count.missing.push_back(BuildWorkerPod(view.in.job.meta, view.spec(), node, settings));
      count.missing_nodes.push_back(node);
    }
    ++count.alive;
    return;
  }
  if (!pod->meta.OwnedBy(view.uid)) return;  // an earlier job's pod of this name, on its way out
  const api::PodPhase phase = pod->phase;
  const bool deleting = pod->meta.deleting;
  if (phase == api::PodPhase::kPending && !deleting && WatchImage(view, fault, out, node, *pod))
    return;
  if (phase == api::PodPhase::kRunning) WatchReach(view, registered_wall, fault, out, node, *pod);
  if (phase == api::PodPhase::kRunning) ++count.running;
  if ((phase == api::PodPhase::kRunning || phase == api::PodPhase::kPending) && !deleting)
    ++count.alive;
  if (phase == api::PodPhase::kFailed || (phase == api::PodPhase::kSucceeded && !done)) {
    CountFailure(view, fault, out, node, *pod, count);
  }
}

}  // namespace

void ManageNode(const PassView& view, double registered_wall, NodeFault& fault, PassOut& out,
                const std::string& node, PodCount& count) {
  const api::PodView* pod = view.WorkerPod(node);
  const api::NodeView* node_object = view.NodeNamed(node);
  const bool owned = pod && pod->meta.OwnedBy(view.uid);
  if (GivenUp(view, out, node, pod, owned)) return;
  // Released: its node may go or turn ineligible now without loss.
  if (fault.released && ReleasedPodFinished(pod, owned, count)) return;
  const api::PodTemplate& pods = view.spec().pod_template;
  const std::string why = node_object ? Ineligibility(*node_object, pods.node_selector,
                                                      pods.tolerations, pods.node_affinity_terms)
                                      : "gone";
  if (!why.empty()) return LoseNode(view, fault, out, node, node_object, why, pod, owned);
  SayBack(fault, out, node, view.in.view->done);
  ManagePod(view, registered_wall, fault, out, node, *node_object, pod, count);
}

PodCount ManagePods(const PassView& view, const TokenMemory& token, NodeFaults& faults,
                    SessionMemory& session, api::WeightedJobStatus& status, PassOut& out) {
  if (TakeReleases(*view.in.view, faults)) out.write_at_once = true;
  JoinNodes(view, faults, session, out);
  PodCount count;
  count.failed_pods = FailedPods(status);
  const std::vector<std::string> nodes = session.Nodes();
  for (const auto& node : nodes) {
    ManageNode(view, session.registered_wall, faults.nodes[node], out, node, count);
  }
  // What the status counts and excludes is kept nowhere else: written at
  // once, or the next pass would not know it.
  if (count.failed_pods != FailedPods(status)) out.write_at_once = true;
  status.failed_pods = count.failed_pods;
  if (AddGivenUp(out, status)) out.write_at_once = true;
  const std::set<std::string> in_session(nodes.begin(), nodes.end());
  for (const auto& node : faults.ReleasedNodes()) {
    count.released_before += !in_session.contains(node);
  }
  LoseRefusedWorkers(view, faults.create_backoff, faults.nodes, out, count.missing_nodes);
  faults.Prune();
  GateCreates(view, faults, out, count.missing);
  if (!count.missing.empty()) {
    // A Secret that exists (or that the reconciler read in this pass) is
    // made again only if it is gone; else it is made, or read back.
    const bool secret_exists = view.in.writes.secret_exists || view.in.secret_token;
    out.actions.push_back(CreateObjects{BuildTokenSecret(view.in.job.meta, token.value),
                                        token.value, std::move(count.missing),
                                        /*restore=*/secret_exists});
  }
  return count;
}

}  // namespace ballast::controller::decide
