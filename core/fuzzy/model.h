// The fuzzy weight model of Zubov & Kupin (seed 000): from node labels to
// performance weights.
//
// For criterion i and node j, z_ij is the number the profile gives the node's
// label (a numeric label's value, or a linguistic term's number). Membership
// mu_ij = z_ij / max_j z_ij where higher is better, min_j z_ij / z_ij where
// lower is better. Score v_j = prod_i mu_ij ^ alpha_i. Relative weight
// v_j / min_j v_j, rounded as the profile says.
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {

// One criterion as it came out for one node.
struct CriterionResult {
  std::string name;        // the criterion's name
  double value = 0;        // z_ij
  double membership = 0;   // mu_ij in (0, 1]
  bool defaulted = false;  // the label was missing or malformed; value is the default
};

struct NodeWeight {
  std::string name;
  double score = 0;                       // v_j in [0, 1]; 0 only when it underflows
  double relative = 0;                    // v_j / min v, >= 1, unrounded
  double weight = 0;                      // relative rounded per the profile
  std::vector<CriterionResult> criteria;  // in the profile's order
};

struct WeightResult {
  std::vector<NodeWeight> nodes;      // in the input's order
  std::vector<std::string> warnings;  // one per missing or malformed label, in node order
};

// Tolerance of Rounding::kCeil: ceil(x - kCeilSlack), so that a ratio that is
// an integer up to floating-point noise does not jump to the next one.
inline constexpr double kCeilSlack = 1e-9;

// The largest relative weight: a node more than this many times the lightest
// one is given this weight, with a warning. The policies accept prior speeds
// within a ratio of 1e21 (balance/policy.h), but a larger spread only means
// that the lightest nodes get no work while it is ignored.
inline constexpr double kMaxRelativeWeight = 1e6;

// Returns the weight of `relative` (>= 1) under `rounding`.
double RoundWeight(double relative, Rounding rounding);

// Computes every node's score and weight. A missing or malformed label gives
// the criterion's default and a warning such as
//   node pi-3: criterion cpu (label ballast.io/cpu-model): unknown value
//   'cortex-x9', using default 5 (norm)
// except a missing label of an optional criterion, which is silent. A
// numeric label outside [kMinNumber, kMaxNumber] (profile.h), NaN and
// infinities included, is malformed. A relative weight above
// kMaxRelativeWeight is clamped to it with a warning naming the node, so
// every weight is finite and in [1, kMaxRelativeWeight].
// Requires a profile from ParseProfile (or one that satisfies its checks).
// Returns the result, or Invalid when `nodes` is empty or the profile has no
// criteria, a rank outside (0, kMaxRank], or a default or term number outside
// [kMinNumber, kMaxNumber].
StatusOr<WeightResult> ComputeWeights(const Profile& profile, const std::vector<NodeFacts>& nodes);

}  // namespace ballast::fuzzy
