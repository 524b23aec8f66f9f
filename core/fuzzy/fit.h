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
// [min_rank, kMaxRank] (an active set: a rank that leaves the range is held
// at its bound and the rest solved again). Memberships are the model's over
// all the given nodes; the fit uses the nodes that have a speed.
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

// Fits the ranks of `profile` to `speeds` (node name -> measured speed, any
// scale). Returns Invalid when fewer than two of `nodes` have a speed, a
// speed is not a finite number > 0, a speed names a node not in `nodes`, or
// ComputeWeights refuses the profile or nodes.
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
// is not a number in (0, 1e300], a duplicate node, an empty map or more than
// kMaxSpeedNodes nodes, or jobs none of which has a measured speed.
StatusOr<std::map<std::string, double>> ParseSpeeds(std::string_view text,
                                                    const std::string& file_name);

// The profile as a WeightProfile document (YAML) that ParseProfile reads back
// to an equal profile.
std::string FormatProfileYaml(const Profile& profile);

}  // namespace ballast::fuzzy
