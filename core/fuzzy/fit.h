// Fitting a profile's ranks to measured speeds: `ballast weights --fit`, and
// the function the operator calls with the speeds of finished jobs.
//
// The model's score is v_j = prod_i mu_ij ^ alpha_i (model.h), so
//   log v_j = sum_i alpha_i log mu_ij,
// linear in the ranks. A node's weight is v_j / min v, so the measured speeds
// s_j fix the scores up to a constant c. FitProfileRanks finds the ranks and
// c that minimise
//   sum_j (c + sum_i alpha_i log mu_ij - log s_j)^2 + lambda sum_i (alpha_i - alpha0_i)^2
// (least squares on the log score, ridge toward the profile's own ranks
// alpha0, so that a criterion on which the nodes do not differ keeps its
// rank and a few nodes cannot swing many ranks), with every rank kept within
// [min_rank, kMaxRank]. The lower bound is the bounded least squares' own
// (Lawson and Hanson's active set: a rank is held at min_rank while the
// objective wants it lower, and freed again once it no longer does); when
// ranks then come out above kMaxRank, they are scaled down together until
// the largest is kMaxRank, not clamped one by one, so the bound never changes
// the order of the nodes (holding one rank at its bound for good while
// solving the others again did: it could give the slowest node the highest
// weight). Memberships are the model's over all the given nodes; the fit
// uses the nodes that have a speed.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {

struct FitOptions {
  double ridge = 0.05;      // lambda, in (log score)^2 per unit of rank squared
  double min_rank = 0.001;  // the smallest rank the fit gives
};

struct NodeFit {
  std::string node;
  double speed = 0;            // measured
  double relative_before = 0;  // the model's v_j / min v under the profile
  double relative_after = 0;   // ... under the fitted profile
  double weight_before = 0;    // relative rounded as the profile says
  double weight_after = 0;
  // Relative error of the node's share of the model's relative scores
  // against its share of the measured speeds (over the nodes with a speed):
  // share / measured share - 1. The profile's rounding (ceil: up to one
  // unit more) comes on top.
  double error_before = 0;
  double error_after = 0;
};

struct FitResult {
  Profile profile;             // the input's, with fitted ranks and name "<name>-fitted"
  std::vector<NodeFit> nodes;  // the nodes with a speed, in the input's order
  double rms_before = 0;       // root mean square of error_before
  double rms_after = 0;
};

// What a measured speed may be. Speeds are ratios (any scale: items per
// second, a job's cost units), so only their ratios matter, and a ratio is
// physical only within bounds:
//  - each speed is a number in [kMinSpeed, kMaxSpeed]: finite, > 0 and not
//    subnormal (4.9e-324 is no speed: its logarithm and its share of a sum
//    are not computable, and the fit printed "rms error: inf%");
//  - the fastest node is at most kMaxSpeedRatio = 10^6 times the slowest:
//    the model never weighs a node more than kMaxRelativeWeight (10^6) times
//    the lightest, so a larger ratio (1e300 beside values near 1) is one no
//    profile can give, and it would rule the least squares alone. Real
//    clusters are far inside it: seed 000's Pi 4B and Pi 3B differ by about 5.
inline constexpr double kMinSpeed = 1e-300;
inline constexpr double kMaxSpeed = 1e300;
inline constexpr double kMaxSpeedRatio = 1e6;

// Fits the ranks of `profile` to `speeds` (node name -> measured speed, any
// scale). Returns Invalid when fewer than two of `nodes` have a speed, a
// speed is not in [kMinSpeed, kMaxSpeed], the fastest is more than
// kMaxSpeedRatio times the slowest (naming both nodes), a speed names a node
// not in `nodes`, or ComputeWeights refuses the profile or nodes.

StatusOr<FitResult> FitProfileRanks(const Profile& profile, const std::vector<NodeFacts>& nodes,
                                    const std::map<std::string, double>& speeds,
                                    const FitOptions& options = {});

// The most nodes a speeds file may list.
inline constexpr size_t kMaxSpeedNodes = 10000;

// Parses a speeds file: a YAML (or JSON) map of node name -> speed, e.g.
//   pi5-a: 1.92
//   pi4b-a: 0.61
// or the same map under a top-level `speeds:` key, or finished jobs' status:
// a WeightedJob or a list of them (`kubectl get weightedjobs -o yaml`), whose
// status.nodes[].measuredSpeed (each job in its own units) are put on one
// scale by least squares on log speed = job's constant + node's speed, keeping
// the ratios each job measured. Returns Invalid naming
// the file and line of a name that is not a DNS-1123 subdomain, a speed that
// is not a number in [kMinSpeed, kMaxSpeed], a speed more than kMaxSpeedRatio
// times the slowest (the line of each, in one map or one job), a duplicate
// node, an empty map or more than kMaxSpeedNodes nodes, or jobs none of
// which has a measured speed (or whose speeds together span more than
// kMaxSpeedRatio).
StatusOr<std::map<std::string, double>> ParseSpeeds(std::string_view text,
                                                    const std::string& file_name);

// The profile as a WeightProfile document (YAML) that ParseProfile reads back
// to an equal profile.
std::string FormatProfileYaml(const Profile& profile);

}  // namespace ballast::fuzzy
