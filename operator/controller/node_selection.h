// Which nodes a WeightedJob runs on: those that match its nodeSelector and
// its template's required node affinity, are Ready, are not cordoned, and
// whose NoSchedule / NoExecute taints the job tolerates — the nodes where
// the scheduler would place its worker pods.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "operator/api/kube_views.h"

namespace ballast::controller {

// Why `node` cannot run a worker of a job with `node_selector` (label ->
// value), `tolerations` (a list of core/v1 Tolerations, as
// ParseWeightedJobSpec checked them) and `affinity_terms` (the required
// nodeSelectorTerms of its template's node affinity; [] for none); "" when
// it can. E.g. "node pi3b-0: not Ready", "node pi5-0: label ballast.io/pool
// is 'a', the job selects 'b'".
std::string Ineligibility(const api::NodeView& node,
                          const std::map<std::string, std::string>& node_selector,
                          const nlohmann::json& tolerations,
                          const nlohmann::json& affinity_terms = nlohmann::json::array());

// True when `node` matches one of `terms` (core/v1 NodeSelectorTerms, which
// are ORed), or `terms` is empty, as the scheduler decides it: in a term every
// matchExpressions requirement on the node's labels (In, NotIn, Exists,
// DoesNotExist, Gt, Lt) and every matchFields requirement on metadata.name
// (In, NotIn) holds; a term with no requirement matches no node. Anything
// malformed (an unknown operator, Gt with a value that is not an integer)
// does not match.
bool MatchesNodeSelectorTerms(const api::NodeView& node, const nlohmann::json& terms);

// True when one of `tolerations` tolerates `taint` as the scheduler decides
// it: operator Exists matches any value (an empty key, any key); Equal (the
// default) matches the value; an empty effect matches all.
bool Tolerates(const nlohmann::json& tolerations, const api::Taint& taint);

}  // namespace ballast::controller
