// Which labels of which Node came from the node probe, as `ballast weights
// --nodes` shows them (docs/probe.md): read from `kubectl get nodes -o yaml`
// text, by the annotation ballast.io/probe-labels the probe writes beside its
// labels, or, for a Node printed with --show-managed-fields, by the labels
// the probe's field manager owns.
//
// Thread-safety: a pure function; safe from any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace ballast::probe {

inline constexpr std::string_view kProbeLabelsAnnotation = "ballast.io/probe-labels";
inline constexpr std::string_view kProbeFieldManager = "ballast-probe";

// Node name -> the labels the probe set, for each Node of a `kind: NodeList`
// / `kind: List` / `kind: Node` document that has any; empty for other
// documents (a `nodes:` file) and for Nodes the probe never labelled. A
// label counts only when the Node carries it. Returns Invalid
// "file:line:col: ..." only for text that config::ParseYaml refuses (the
// caller has parsed the same text as nodes already).
StatusOr<std::map<std::string, std::set<std::string>>> ProbeLabelsOfNodes(
    std::string_view yaml_text, std::string file_name);

// Label key -> the field managers that own it, from a Node object's
// metadata.managedFields (as the API server returns it from a get or an
// apply); labels no entry names are left out. Never fails: shapes other than
// managedFields' are skipped.
std::map<std::string, std::vector<std::string>> LabelOwners(const nlohmann::json& node);

}  // namespace ballast::probe
