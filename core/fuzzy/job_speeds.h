// The speeds finished jobs measured, put on one scale: `ballast weights --fit`
// of `kubectl get weightedjobs -o yaml` (ParseSpeeds, fit.h).
//
// Each job counts in its own cost units, so a node's speed in a job is
//   log s(job, node) = c(job) + x(node) + error,
// and SpeedsOnOneScale returns exp(x) of the exact least-squares solution:
// the c and x that minimise the sum of the squared errors over every speed
// measured. The model fixes x only up to a constant within each group of
// nodes that jobs join (two nodes are in one group when a chain of jobs, each
// sharing a node with the next, measured both); each group's constant is set
// so that its x, counted once for every job that measured the node, sum to
// zero: the scale to which alternating the means of c and x from x = 0
// converges, as this function did before it was solved exactly. Ratios
// between groups mean nothing (no job measured both).
//
// The solve: with c eliminated (each c(job) is the mean of its y - x), x
// solves the normal equations L x = b, L the sum over jobs of each job's
// centering (a Laplacian); or, when a group has fewer jobs than nodes, the
// same with the roles swapped (x eliminated, c solved, x then the mean of
// y - c over its jobs). The smaller side's matrix is dense, one unknown held
// at 0, and solved by Cholesky's method: so a group may have at most
// kMaxGroupUnknowns of its smaller side.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::fuzzy {

// The most unknowns of one group's dense solve: 2,000 (a 32 MB matrix,
// some 2.7e9 multiply-adds); a group of more jobs and more nodes than that
// is refused.
inline constexpr size_t kMaxGroupUnknowns = 2000;

// Each job's measured speeds by node name (every speed finite and > 0).
using SpeedsOfJobs = std::vector<std::map<std::string, double>>;

// Every node's speed on its group's scale (above), by name. Invalid, naming
// the group's size, when a group has more than kMaxGroupUnknowns jobs and
// more than kMaxGroupUnknowns nodes. Jobs without speeds are passed over.
StatusOr<std::map<std::string, double>> SpeedsOnOneScale(const SpeedsOfJobs& jobs);

}  // namespace ballast::fuzzy
