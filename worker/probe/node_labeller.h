// NodeLabeller: writes the probe's labels onto its own Node and reports the
// facts it could not read (docs/probe.md).
//
// Labels go by server-side apply as one field manager (ballast-probe by
// default) that owns exactly the labels of the last apply and the annotation
// ballast.io/probe-labels listing them. So a label the probe no longer
// produces is removed by the API server, and labels other managers own — the
// kubelet's, k3s's control-plane role, a user's — are never touched. The
// apply is not forced: where someone else set one of the probe's labels to
// another value (kubectl label, the kubelet's --node-labels), theirs stays,
// the probe applies the rest and says which label it left and who owns it
// (conflicts()). Remove the label (kubectl label node N key-) to let the
// probe's value in.
//
// Thread-safety: not thread-safe; one probe loop owns it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/probe/facts.h"
#include "core/probe/node_marks.h"
#include "core/probe/node_notice.h"
#include "net/kube/client.h"

namespace ballast::worker {

// The annotation that lists, comma-separated and sorted, the labels the
// probe wrote, is probe::kProbeLabelsAnnotation (core/probe/node_marks.h):
// `ballast weights` reads it to mark probe labels.

// The label keys an API server's apply conflict message names
// (".metadata.labels.<key>"), in order of appearance. Pure.
std::vector<std::string> ConflictingLabels(const std::string& message);

// The server-side apply document of Node `node` carrying `labels`, the
// annotation listing them and, when `board_note` is not empty, the annotation
// probe::kBoardNoteAnnotation holding it. Pure.
nlohmann::json NodeApplyObject(const std::string& node,
                               const std::map<std::string, std::string>& labels,
                               const std::string& board_note = "");

// An Event (core/v1) on Node `node_object` of `type` (Normal, Warning) and
// `reason` with `message`, in namespace "default" where Events about a Node
// live. Pure but for the time stamps and the name.
nlohmann::json NodeEvent(const nlohmann::json& node_object, const std::string& type,
                         const std::string& reason, const std::string& message,
                         const std::string& component);

class NodeLabeller {
 public:
  NodeLabeller(kube::KubeClient& client, std::string node, std::string field_manager);

  // Applies `labels` (and `board_note`, NodeApplyObject) when they differ
  // from the last successful apply, none succeeded yet, or the last one left
  // labels to other managers. A label another manager holds at another value
  // is left out (conflicts() says which). Returns Ok, or the API server's
  // error (NotFound when the Node does not exist, Invalid when RBAC forbids
  // the patch).
  Status Apply(const std::map<std::string, std::string>& labels,
               const std::string& board_note = "");

  // One warning per label of the last apply left to another manager (fact:
  // the label key), naming the manager as the API server does.
  const std::vector<probe::Warning>& conflicts() const { return conflicts_; }

  // What to tell about the Node as the last Apply left it
  // (probe::DecideNodeNotice): `warnings` are the profile's (ProfileWarnings),
  // `labels` and `facts` the probe's reading. Requires a successful Apply.
  probe::NodeNotice Notice(const std::vector<probe::Warning>& warnings,
                           const std::map<std::string, std::string>& labels,
                           const probe::Facts& facts) const;

  // Posts the notice's Events (core/node_notice.h) in namespace "default":
  // Warning ProbeFactUnknown, Normal LabelsSetByOthers, Normal
  // NotARaspberryPi, each when its message differs from the one it last
  // posted (Events only on transitions) and is not empty. Requires a
  // successful Apply first (for the Node's uid). Returns Ok, or the API
  // server's error.
  Status Report(const probe::NodeNotice& notice);

  int applies() const { return applies_; }

 private:
  kube::KubeClient& client_;
  std::string node_;
  std::string field_manager_;
  nlohmann::json node_object_;
  std::map<std::string, std::string> applied_;
  std::string applied_note_;
  bool applied_once_ = false;
  std::vector<probe::Warning> conflicts_;
  std::map<std::string, std::string> reported_;  // by reason: the message last posted
  int applies_ = 0;
};

}  // namespace ballast::worker
