#include "core/fuzzy/job_speeds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

namespace ballast::fuzzy {
namespace {

constexpr size_t kNoIndex = SIZE_MAX;

// One measured speed: its job and node (indices) and y = log speed.
struct Observation {
  size_t job = 0;
  size_t node = 0;
  double y = 0;
};

// The jobs, nodes and observations of one group, renumbered from 0 within it.
struct Group {
  std::vector<size_t> nodes;  // the index of each of its nodes among all
  size_t jobs = 0;
  std::vector<Observation> observations;
};

size_t Root(std::vector<size_t>& parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The groups of nodes that jobs join (job_speeds.h), in the order their
// first observation comes.
std::vector<Group> GroupsOf(const std::vector<Observation>& all, size_t job_count,
                            size_t node_count) {
  std::vector<size_t> parent(node_count);
  std::iota(parent.begin(), parent.end(), size_t{0});
  std::vector<size_t> first_node(job_count, kNoIndex);
  for (const Observation& o : all) {
    if (first_node[o.job] == kNoIndex) {
      first_node[o.job] = o.node;
    } else {
      parent[Root(parent, o.node)] = Root(parent, first_node[o.job]);
    }
  }
  std::vector<size_t> group_of_root(node_count, kNoIndex);
  std::vector<size_t> local_job(job_count, kNoIndex), local_node(node_count, kNoIndex);
  std::vector<Group> groups;
  for (const Observation& o : all) {
    size_t& index = group_of_root[Root(parent, o.node)];
    if (index == kNoIndex) {
      index = groups.size();
      groups.emplace_back();
    }
    Group& group = groups[index];
    if (local_job[o.job] == kNoIndex) local_job[o.job] = group.jobs++;
    if (local_node[o.node] == kNoIndex) {
      local_node[o.node] = group.nodes.size();
      group.nodes.push_back(o.node);
    }
    group.observations.push_back({local_job[o.job], local_node[o.node], o.y});
  }
  return groups;
}

// x with m x = b, m symmetric positive definite (n by n, row-major), by
// Cholesky's method; nullopt when a pivot is not positive (m is not).
std::optional<std::vector<double>> CholeskySolve(std::vector<double> m, std::vector<double> b,
                                                 size_t n) {
  for (size_t j = 0; j < n; ++j) {  // m's lower triangle becomes L, m = L L^T
    double pivot = m[j * n + j];
    for (size_t k = 0; k < j; ++k) pivot -= m[j * n + k] * m[j * n + k];
    if (!(pivot > 0)) return std::nullopt;
    const double diagonal = std::sqrt(pivot);
    m[j * n + j] = diagonal;
    for (size_t i = j + 1; i < n; ++i) {
      double sum = m[i * n + j];
      for (size_t k = 0; k < j; ++k) sum -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = sum / diagonal;
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L z = b
    for (size_t k = 0; k < i; ++k) b[i] -= m[i * n + k] * b[k];
    b[i] /= m[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T x = z
    for (size_t k = i + 1; k < n; ++k) b[i] -= m[k * n + i] * b[k];
    b[i] /= m[i * n + i];
  }
  return b;
}

// An observation as the solve sees it: y = e(eliminated) + k(kept).
struct Pair {
  size_t eliminated = 0;
  size_t kept = 0;
  double y = 0;
};

// The least-squares k of y = e + k over `pairs`, one group, with k[0] held
// at 0. With each e at its best for k (the mean of its y - k), k solves
//   sum over e of k: (y - mean_e y) = cnt_k k_k - sum over e of k: mean_e k,
// the normal equations; the row of k[0] is left out (the others imply it).
std::optional<std::vector<double>> SolveKept(const std::vector<Pair>& pairs, size_t kept_count,
                                             size_t eliminated_count) {
  std::vector<std::vector<size_t>> members(eliminated_count);
  std::vector<double> mean_y(eliminated_count, 0);
  for (const Pair& p : pairs) {
    members[p.eliminated].push_back(p.kept);
    mean_y[p.eliminated] += p.y;
  }
  for (size_t e = 0; e < eliminated_count; ++e) mean_y[e] /= members[e].size();
  const size_t n = kept_count - 1;
  std::vector<double> m(n * n, 0), b(n, 0);
  for (const Pair& p : pairs) {
    if (p.kept == 0) continue;
    b[p.kept - 1] += p.y - mean_y[p.eliminated];
    m[(p.kept - 1) * n + p.kept - 1] += 1;
  }
  for (const std::vector<size_t>& kept : members) {
    const double share = 1.0 / kept.size();
    for (size_t a : kept) {
      for (size_t c : kept) {
        if (a != 0 && c != 0) m[(a - 1) * n + c - 1] -= share;
      }
    }
  }
  auto solved = CholeskySolve(std::move(m), std::move(b), n);
  if (solved) solved->insert(solved->begin(), 0.0);
  return solved;
}

// Each node's x in `group` (by its index there), on the group's scale.
StatusOr<std::vector<double>> SolveGroup(const Group& group) {
  const size_t nodes = group.nodes.size();
  if (std::min(group.jobs, nodes) > kMaxGroupUnknowns) {
    return Status::Invalid(fmt::format(
        "{} jobs measured {} nodes that they join in one group: a fit solves at most {} of "
        "either",
        group.jobs, nodes, kMaxGroupUnknowns));
  }
  const bool by_nodes = nodes <= group.jobs;
  std::vector<Pair> pairs;
  for (const Observation& o : group.observations) {
    pairs.push_back(by_nodes ? Pair{o.job, o.node, o.y} : Pair{o.node, o.job, o.y});
  }
  const auto kept =
      by_nodes ? SolveKept(pairs, nodes, group.jobs) : SolveKept(pairs, group.jobs, nodes);
  if (!kept) return Status::Invalid("the jobs' speeds give no least-squares solution");
  std::vector<double> x = by_nodes ? *kept : std::vector<double>(nodes, 0);
  if (!by_nodes) {  // x is the mean of y - c over the node's jobs
    std::vector<size_t> count(nodes, 0);
    for (const Observation& o : group.observations) {
      x[o.node] += o.y - (*kept)[o.job];
      ++count[o.node];
    }
    for (size_t i = 0; i < nodes; ++i) x[i] /= count[i];
  }
  double sum = 0;  // over the observations: each node once per job that measured it
  for (const Observation& o : group.observations) sum += x[o.node];
  const double shift = sum / group.observations.size();
  for (double& value : x) value -= shift;
  return x;
}

}  // namespace

StatusOr<std::map<std::string, double>> SpeedsOnOneScale(const SpeedsOfJobs& jobs) {
  std::map<std::string, size_t> index;
  for (const auto& job : jobs) {
    for (const auto& [node, speed] : job) index.emplace(node, 0);
  }
  std::vector<const std::string*> names;
  for (auto& [node, i] : index) {
    i = names.size();
    names.push_back(&node);
  }
  std::vector<Observation> all;
  size_t job_count = 0;
  for (const auto& job : jobs) {
    if (job.empty()) continue;
    for (const auto& [node, speed] : job) all.push_back({job_count, index[node], std::log(speed)});
    ++job_count;
  }
  std::map<std::string, double> speeds;
  for (const Group& group : GroupsOf(all, job_count, names.size())) {
    BALLAST_ASSIGN_OR_RETURN(const std::vector<double> x, SolveGroup(group));
    for (size_t i = 0; i < x.size(); ++i) speeds[*names[group.nodes[i]]] = std::exp(x[i]);
  }
  return speeds;
}

}  // namespace ballast::fuzzy
