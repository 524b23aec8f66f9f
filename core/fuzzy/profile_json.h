// The one reader of a WeightProfile and of node facts: a JSON tree (the
// object the Kubernetes API server hands the operator, or what ParseProfile
// and ParseNodes made of a YAML file, config/document.h) into a Profile or a
// list of NodeFacts, with the same rules whichever it came from. Errors name
// the field's path and what was there:
//
//   spec.criteria[1].rank: expected a number > 0 and <= 100, got "high"
//
// ParseProfile and ParseNodes (profile.h) put the file and line in front.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/config/document.h"
#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {

// The profile of `object` ({apiVersion, kind, metadata: {name}, spec}, and a
// `status` the server may add, which is ignored; metadata keys other than
// name are ignored too). `source`, when the object came from a file, lets a
// message name the line of an earlier definition. Returns Invalid
// "<path>: ..." for an unknown top-level key, a wrong or missing apiVersion
// or kind, a missing name, and whatever ProfileSpecFromJson refuses.
StatusOr<Profile> ProfileFromJson(const nlohmann::json& object,
                                  const config::SourceMap* source = nullptr);

// The profile named `name` whose spec ({rounding, scale, criteria}) is
// `spec`, at `path` in its document ("spec", or "" for a file that holds
// only the spec). Returns Invalid "<path>.<field>: ..." for an unknown key, a
// wrong type, a missing field, a number outside [kMinNumber, kMaxNumber], a
// rank outside (0, kMaxRank], a term that is not in the scale, terms on a
// numeric criterion or none on a linguistic one, no criteria, or a criterion
// name used twice ("... (first at line 7)" when `source` knows the line,
// "(first at spec.criteria[0])" otherwise).
StatusOr<Profile> ProfileSpecFromJson(const nlohmann::json& spec, std::string name,
                                      std::string_view path = "spec",
                                      const config::SourceMap* source = nullptr);

// The nodes of `document`: {nodes: [{name, labels, <other keys ignored>}]},
// a Kubernetes NodeList or List whose items are Nodes, or one Node
// ({kind: Node, metadata: {name, labels}}); see ParseNodes. A label is a
// string, or a number or boolean as written; one with no value reads as "".
// Returns the nodes in document order, or Invalid "<path>: ..." for a
// document of another kind, an empty list, a name that is not a DNS-1123
// subdomain, labels that are not a map of such values, or a name used twice.
StatusOr<std::vector<NodeFacts>> NodeFactsFromJson(const nlohmann::json& document);

}  // namespace ballast::fuzzy
