// WeightProfile and node facts: the inputs of the fuzzy weight model of
// Zubov & Kupin (seed 000), and their parsers.
//
// A Profile names the criteria a node is judged by: for each, the node label it
// reads, whether higher or lower values are better, its rank (the exponent
// alpha of the paper) and, for linguistic criteria, how label values map to
// terms of a linguistic scale ("norm" = 5, ...) or to plain numbers. NodeFacts
// are what the model knows of a node: its name and labels.
//
// The parsers read YAML text (files are read by the drivers) into the tree
// the Kubernetes API server would hand over (config/document.h) and read that
// with the same reader as the operator (profile_json.h), so every error names
// the file, the line, the field's path and what was expected. The model itself
// lives in model.h.
//
// Thread-safety: plain values and pure functions; safe to share const objects
// across threads.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace ballast::fuzzy {

// How the relative score v_j / min v becomes a weight.
enum class Rounding {
  kCeil,   // the next integer up, as the paper does (an exact integer stays)
  kRound,  // the nearest integer
  kNone,   // keep the real ratio
};

enum class CriterionType {
  kNumeric,     // the label value is a number, e.g. ballast.io/sd-gb: "8"
  kLinguistic,  // the label value is looked up in the criterion's terms
};

enum class Better {
  kHigher,  // membership z / max z (formula 1 of the paper)
  kLower,   // membership min z / z (formula 2 of the paper)
};

// A value written in a profile: either a term of the scale (with the number the
// scale gives it) or a plain positive number.
struct Level {
  double value = 0;
  std::string term;  // empty when the profile gave a plain number

  // Returns "5 (norm)" for a term, "9" for a plain number.
  std::string ToString() const;

  bool operator==(const Level&) const = default;
};

struct Criterion {
  std::string name;   // unique within the profile, e.g. "cpu"
  std::string label;  // the node label it reads, e.g. "ballast.io/cpu-model"
  CriterionType type = CriterionType::kLinguistic;
  Better better = Better::kHigher;
  double rank = 0;                     // alpha_i > 0
  std::map<std::string, Level> terms;  // label value -> level; linguistic only
  Level default_level;                 // `default:` in YAML; used for a missing or malformed label
  bool optional = false;               // a missing label silently gets the default
  std::string description;

  bool operator==(const Criterion&) const = default;
};

struct Profile {
  std::string name;
  Rounding rounding = Rounding::kCeil;
  std::map<std::string, double> scale;  // linguistic term -> number
  std::vector<Criterion> criteria;

  bool operator==(const Profile&) const = default;
};

// What the model knows of one node.
struct NodeFacts {
  std::string name;
  std::map<std::string, std::string> labels;

  bool operator==(const NodeFacts&) const = default;
};

// The numbers the model reads — a numeric label's value, a term of the scale,
// a plain number in a profile — lie within [kMinNumber, kMaxNumber], and a
// rank within (0, kMaxRank]. Outside them a membership ratio (up to 1e18)
// raised to a rank stops being a number a weight can come from: a profile
// that breaks them is refused, a label that breaks them is read as malformed.
inline constexpr double kMinNumber = 1e-6;
inline constexpr double kMaxNumber = 1e12;
inline constexpr double kMaxRank = 100;

// The apiVersion and kind of a profile document.
inline constexpr std::string_view kProfileApiVersion = "ballast.io/v1alpha1";
inline constexpr std::string_view kProfileKind = "WeightProfile";

// Returns the linguistic scale of the paper: significantly-above-norm 1,
// above-norm 3, norm 5, below-norm 3, significantly-below-norm 1.
std::map<std::string, double> PaperScale();

// Returns "ceil", "round" or "none"; "numeric" or "linguistic"; "higher" or
// "lower".
std::string_view RoundingName(Rounding rounding);
std::string_view CriterionTypeName(CriterionType type);
std::string_view BetterName(Better better);

// Parses a profile: a WeightProfile custom resource (apiVersion
// ballast.io/v1alpha1, kind WeightProfile, metadata.name, spec) or a bare spec
// map (rounding, scale, criteria), whose name is then the file's base name
// without extension. `file_name` is used in messages only. A `scale` in the
// document adds to or overrides the paper's terms.
// Returns the profile, or Invalid "file:line:col: path: ..." for YAML that
// does not parse (config::ParseYaml), and for everything ProfileFromJson and
// ProfileSpecFromJson refuse: unknown keys, wrong types, a missing label, a
// number outside [kMinNumber, kMaxNumber], a rank outside (0, kMaxRank], an
// unknown term, duplicate criterion names (naming the first one's line) or
// no criteria.
StatusOr<Profile> ParseProfile(std::string_view yaml_text, std::string file_name);

// Parses node facts from either
//   nodes: [{name: ..., labels: {key: value, ...}, <other keys ignored>}, ...]
// (the shape shared with cluster and scenario files), or a Kubernetes
// `kind: NodeList` / `kind: List` document whose items carry metadata.name and
// metadata.labels (as `kubectl get nodes -o yaml` prints), or a single
// `kind: Node`. A label written with no value (`key:`) reads as "".
// A label written as a number or boolean reads as the text of its value
// (`ballast.io/ram-mb: 2048` as "2048", `1.50` as "1.5"), as a label in a
// cluster file does; quote it to keep it as written.
// Returns the nodes in document order, or Invalid "file:line:col: path: ..."
// for YAML that does not parse, and for what NodeFactsFromJson refuses: a
// missing name or one that is not a DNS-1123 subdomain, labels that are not a
// map of label values, a duplicate node name or an empty node list.
StatusOr<std::vector<NodeFacts>> ParseNodes(std::string_view yaml_text, std::string file_name);

// Returns the names of the profiles built into the library (those shipped in
// crds/profiles/), sorted; at least "raspberry-pi".
std::vector<std::string> BuiltinProfileNames();

// Returns the built-in profile `name`, or NotFound listing the known names.
StatusOr<Profile> BuiltinProfile(std::string_view name);

}  // namespace ballast::fuzzy
