#include "core/fuzzy/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/common/json_read.h"
#include "core/common/names.h"
#include "core/common/utf8.h"
#include "core/config/document.h"
#include "core/fuzzy/job_speeds.h"
#include "core/fuzzy/model.h"

namespace ballast::fuzzy {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Solves m x = b by Gaussian elimination with partial pivoting; m is
// symmetric positive definite here (ridge > 0), so every pivot is nonzero.
std::vector<double> Solve(Matrix m, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row) {
      if (std::fabs(m[row][col]) > std::fabs(m[pivot][col])) pivot = row;
    }
    std::swap(m[col], m[pivot]);
    std::swap(b[col], b[pivot]);
    if (m[col][col] == 0) continue;
    for (size_t row = col + 1; row < n; ++row) {
      const double factor = m[row][col] / m[col][col];
      for (size_t k = col; k < n; ++k) m[row][k] -= factor * m[col][k];
      b[row] -= factor * b[col];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t row = n; row-- > 0;) {
    double sum = b[row];
    for (size_t k = row + 1; k < n; ++k) sum -= m[row][k] * x[k];
    x[row] = m[row][row] != 0 ? sum / m[row][row] : 0;
  }
  return x;
}

// The least-squares system of the ranks not in `fixed` (their values in
// `ranks`), and its solution written into `ranks`.
void SolveFree(const Matrix& x, const std::vector<double>& y, const std::vector<double>& prior,
               double ridge, const std::vector<bool>& fixed, std::vector<double>& ranks) {
  std::vector<size_t> free;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!fixed[i]) free.push_back(i);
  }
  const size_t k = free.size() + 1;
  Matrix m(k, std::vector<double>(k, 0));
  std::vector<double> rhs(k, 0);
  for (size_t j = 0; j < y.size(); ++j) {
    double target = y[j];
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (fixed[i]) target -= ranks[i] * x[j][i];
    }
    std::vector<double> row = {1};
    for (size_t i : free) row.push_back(x[j][i]);
    for (size_t a = 0; a < k; ++a) {
      rhs[a] += row[a] * target;
      for (size_t b = 0; b < k; ++b) m[a][b] += row[a] * row[b];
    }
  }
  for (size_t a = 0; a < free.size(); ++a) {
    m[a + 1][a + 1] += ridge;
    rhs[a + 1] += ridge * prior[free[a]];
  }
  const std::vector<double> solution = Solve(std::move(m), std::move(rhs));
  for (size_t a = 0; a < free.size(); ++a) ranks[free[a]] = solution[a + 1];
}

// The gradient of the objective (fit.h) in each rank at `ranks`, the
// constant c at its best for them.
std::vector<double> Gradient(const Matrix& x, const std::vector<double>& y,
                             const std::vector<double>& prior, double ridge,
                             const std::vector<double>& ranks) {
  std::vector<double> predicted(y.size(), 0);
  double c = 0;
  for (size_t j = 0; j < y.size(); ++j) {
    for (size_t i = 0; i < ranks.size(); ++i) predicted[j] += ranks[i] * x[j][i];
    c += (y[j] - predicted[j]) / static_cast<double>(y.size());
  }
  std::vector<double> gradient(ranks.size(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (size_t j = 0; j < y.size(); ++j) gradient[i] += (c + predicted[j] - y[j]) * x[j][i];
    gradient[i] += ridge * (ranks[i] - prior[i]);
  }
  return gradient;
}

// The ranks >= `floor` that minimise the objective (fit.h): the active-set
// method of Lawson and Hanson for bounded least squares. From every rank
// held at the floor, the rank whose gradient says the objective falls most
// as it rises is freed; the free ranks move toward their solve (SolveFree),
// and one that would cross the floor on the way is held there. The
// objective is a strictly convex quadratic (the ridge), so this ends at its
// one minimum: unlike holding each rank that once fell below the floor for
// good, a rank is freed again when the others' bounds make it useful.
std::vector<double> FitAboveFloor(const Matrix& x, const std::vector<double>& y,
                                  const std::vector<double>& prior, double ridge, double floor) {
  const size_t k = prior.size();
  std::vector<double> ranks(k, floor);
  std::vector<bool> held(k, true);
  for (size_t round = 0; round < 4 * k + 4; ++round) {
    // Move the free ranks toward their solve; hold those that reach the floor.
    for (size_t step = 0; step <= k; ++step) {
      std::vector<double> target = ranks;
      SolveFree(x, y, prior, ridge, held, target);
      double t = 1;
      size_t blocking = k;
      for (size_t i = 0; i < k; ++i) {
        if (held[i] || target[i] >= floor) continue;
        const double reach = (ranks[i] - floor) / (ranks[i] - target[i]);
        if (reach < t) {
          t = reach;
          blocking = i;
        }
      }
      if (blocking == k) {
        ranks = std::move(target);
        break;
      }
      for (size_t i = 0; i < k; ++i) {
        if (!held[i]) ranks[i] = std::max(floor, ranks[i] + t * (target[i] - ranks[i]));
      }
      ranks[blocking] = floor;
      held[blocking] = true;
    }
    // Free the held rank the objective most wants higher, if any.
    const std::vector<double> gradient = Gradient(x, y, prior, ridge, ranks);
    size_t freed = k;
    double steepest = -1e-12;
    for (size_t i = 0; i < k; ++i) {
      if (held[i] && gradient[i] < steepest) {
        steepest = gradient[i];
        freed = i;
      }
    }
    if (freed == k) break;
    held[freed] = false;
  }
  return ranks;
}

// Four significant digits: a rank a reader can compare.
double Rounded(double rank) {
  if (!(rank > 0)) return rank;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(rank)));
  return std::round(rank * scale) / scale;
}

// Each fitted node's share error under the model's relative scores (over the
// fitted nodes; the profile's rounding comes after the model).
std::vector<double> ShareErrors(const WeightResult& weights, const std::vector<size_t>& fitted,
                                const std::vector<double>& speeds) {
  double weight_sum = 0;
  double speed_sum = 0;
  for (size_t a = 0; a < fitted.size(); ++a) {
    weight_sum += weights.nodes[fitted[a]].relative;
    speed_sum += speeds[a];
  }
  std::vector<double> errors;
  for (size_t a = 0; a < fitted.size(); ++a) {
    errors.push_back(weights.nodes[fitted[a]].relative / weight_sum / (speeds[a] / speed_sum) - 1);
  }
  return errors;
}

double Rms(const std::vector<double>& errors) {
  double sum = 0;
  for (double e : errors) sum += e * e;
  return errors.empty() ? 0 : std::sqrt(sum / errors.size());
}

// Ok when every speed is a node's, within bounds, and no node is more than
// kMaxSpeedRatio times another.
Status CheckSpeeds(const std::vector<NodeFacts>& nodes,
                   const std::map<std::string, double>& speeds) {
  for (const auto& [key, speed] : speeds) {
    const std::string& node = key;  // a binding a lambda can capture (clang 14)
    const bool known = std::any_of(nodes.begin(), nodes.end(),
                                   [&](const NodeFacts& facts) { return facts.name == node; });
    if (!known) return Status::Invalid(fmt::format("speed of node {}: no such node", node));
    if (!(speed >= kMinSpeed && speed <= kMaxSpeed)) {
      return Status::Invalid(
          fmt::format("speed of node {}: expected a number in [{:g}, {:g}], got {:g}", node,
                      kMinSpeed, kMaxSpeed, speed));
    }
  }
  if (!speeds.empty()) {
    const auto [slow, fast] =
        std::minmax_element(speeds.begin(), speeds.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; });
    if (fast->second > kMaxSpeedRatio * slow->second) {
      return Status::Invalid(fmt::format(
          "speed of node {} is {:.3g} times that of node {}: expected the fastest node at most "
          "{:g} times the slowest (no profile weighs a node more than that; docs/fuzzy-weights.md)",
          fast->first, fast->second / slow->second, slow->first, kMaxSpeedRatio));
    }
  }
  return Status::Ok();
}

// Ranks held to kMaxRank. The upper bound, by scaling. Holding a rank at kMaxRank while the others
// are solved again changes the ranks' proportions, and a slower node can
// then weigh more than a faster one. Scaling the ranks above the floor by
// one factor until the largest is kMaxRank keeps their proportions: every
// node's log score over the floor's share is scaled alike, and the order of
// the nodes is the fit's.
Status ScaleBelowMaxRank(std::vector<double>& ranks, double min_rank) {
  const double largest = *std::max_element(ranks.begin(), ranks.end());
  if (!std::isfinite(largest)) {
    return Status::Invalid("the fit of the ranks gave no finite ranks for these speeds");
  }
  if (largest > kMaxRank) {
    const double scale = (kMaxRank - min_rank) / (largest - min_rank);
    for (double& rank : ranks) rank = std::min(kMaxRank, min_rank + (rank - min_rank) * scale);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<FitResult> FitProfileRanks(const Profile& profile, const std::vector<NodeFacts>& nodes,
                                    const std::map<std::string, double>& speeds,
                                    const FitOptions& options) {
  BALLAST_ASSIGN_OR_RETURN(WeightResult before, ComputeWeights(profile, nodes));
  BALLAST_RETURN_IF_ERROR(CheckSpeeds(nodes, speeds));
  std::vector<size_t> fitted;  // indices into nodes
  std::vector<double> y, measured;
  Matrix x;
  for (size_t j = 0; j < nodes.size(); ++j) {
    auto speed = speeds.find(nodes[j].name);
    if (speed == speeds.end()) continue;
    fitted.push_back(j);
    measured.push_back(speed->second);
    y.push_back(std::log(speed->second));
    std::vector<double> row;
    for (const CriterionResult& c : before.nodes[j].criteria) row.push_back(std::log(c.membership));
    x.push_back(std::move(row));
  }
  if (fitted.size() < 2) {
    return Status::Invalid(
        fmt::format("{} of the nodes have a speed: a fit needs two or more", fitted.size()));
  }
  std::vector<double> prior;
  for (const Criterion& c : profile.criteria) prior.push_back(c.rank);
  const double ridge = options.ridge > 0 ? options.ridge : 1e-9;
  const double min_rank = std::clamp(options.min_rank, 1e-9, kMaxRank);
  std::vector<double> ranks = FitAboveFloor(x, y, prior, ridge, min_rank);
  BALLAST_RETURN_IF_ERROR(ScaleBelowMaxRank(ranks, min_rank));
  FitResult result;
  result.profile = profile;
  result.profile.name = profile.name + "-fitted";
  for (size_t i = 0; i < ranks.size(); ++i) {
    result.profile.criteria[i].rank = std::clamp(Rounded(ranks[i]), min_rank, kMaxRank);
  }
  BALLAST_ASSIGN_OR_RETURN(WeightResult after, ComputeWeights(result.profile, nodes));
  const std::vector<double> errors_before = ShareErrors(before, fitted, measured);
  const std::vector<double> errors_after = ShareErrors(after, fitted, measured);
  for (size_t a = 0; a < fitted.size(); ++a) {
    const NodeWeight& was = before.nodes[fitted[a]];
    const NodeWeight& now = after.nodes[fitted[a]];
    result.nodes.push_back({nodes[fitted[a]].name, measured[a], was.relative, now.relative,
                            was.weight, now.weight, errors_before[a], errors_after[a]});
  }
  result.rms_before = Rms(errors_before);
  result.rms_after = Rms(errors_after);
  return result;
}

namespace {

constexpr const char* kSpeedExpected =
    "a speed in [1e-300, 1e300] (a finite number > 0, not subnormal)";

// Whether `speed` is in [kMinSpeed, kMaxSpeed] (NaN is not).
bool IsSpeed(double speed) { return speed >= kMinSpeed && speed <= kMaxSpeed; }

using nlohmann::json;
namespace jr = json_read;

// A measured speed at `path`; Invalid "<path>: expected a speed ..." else.
StatusOr<double> ReadSpeed(const json& value, const std::string& path) {
  if (!value.is_number() || !IsSpeed(value.get<double>())) {
    return jr::Expected(path, kSpeedExpected, value);
  }
  return value.get<double>();
}

// A speed as the file wrote it: its node, its value and its path.
struct WrittenSpeed {
  std::string node;
  double speed = 0;
  std::string path;
};

// Ok when the fastest of `speeds` is at most kMaxSpeedRatio times the
// slowest; else Invalid at the fastest's path, naming the slowest's node and
// (from `source`, when the speeds came from a file) its line.
Status CheckSpeedRatio(const std::vector<WrittenSpeed>& speeds, const config::SourceMap& source) {
  if (speeds.empty()) return Status::Ok();
  const auto [slow, fast] = std::minmax_element(
      speeds.begin(), speeds.end(),
      [](const WrittenSpeed& a, const WrittenSpeed& b) { return a.speed < b.speed; });
  if (fast->speed <= kMaxSpeedRatio * slow->speed) return Status::Ok();
  const auto at = source.Find(slow->path);
  return Status::Invalid(fmt::format(
      "{}: speed {:g} is {:.3g} times the speed {:g} of node {} ({}): expected the fastest node "
      "at most {:g} times the slowest (no profile weighs a node more than that; "
      "docs/fuzzy-weights.md)",
      fast->path, fast->speed, fast->speed / slow->speed, slow->speed, slow->node,
      at ? fmt::format("line {}", at->line) : slow->path, kMaxSpeedRatio));
}

// Whether `root` is a WeightedJob or a list of objects (`kubectl get
// weightedjobs -o yaml` prints a List) rather than a map of speeds.
bool IsJobDocument(const json& root) {
  const json* kind = jr::Find(root, "kind");
  return kind && (*kind == "WeightedJob" || *kind == "WeightedJobList" || *kind == "List");
}

// One job's measured speeds (status.nodes[].measuredSpeed), or none; `path`
// is the job's.
StatusOr<std::map<std::string, double>> JobSpeeds(const json& job, const std::string& path,
                                                  const config::SourceMap& source) {
  std::map<std::string, double> speeds;
  std::vector<WrittenSpeed> measured;
  const json* status = jr::Find(job, "status");
  const json* nodes = status ? jr::Find(*status, "nodes") : nullptr;
  if (!nodes || !nodes->is_array()) return speeds;
  const std::string nodes_path = jr::Field(jr::Field(path, "status"), "nodes");
  for (size_t i = 0; i < nodes->size(); ++i) {
    const json& node = (*nodes)[i];
    const std::string node_path = jr::Element(nodes_path, i);
    const json* speed = jr::Find(node, "measuredSpeed");
    if (!speed) continue;
    BALLAST_ASSIGN_OR_RETURN(const json* name_node, jr::Require(node, node_path, "name"));
    BALLAST_ASSIGN_OR_RETURN(std::string name,
                             jr::String(*name_node, jr::Field(node_path, "name")));
    const std::string speed_path = jr::Field(node_path, "measuredSpeed");
    BALLAST_ASSIGN_OR_RETURN(double value, ReadSpeed(*speed, speed_path));
    speeds[name] = value;
    measured.push_back({name, value, speed_path});
  }
  BALLAST_RETURN_IF_ERROR(CheckSpeedRatio(measured, source));
  return speeds;
}

// The speeds that finished jobs measured. Each job counts in its own cost
// units, so log s(job, node) = c(job) + x(node) is fitted by least squares
// (solved exactly, SpeedsOnOneScale) and exp(x) returned: ratios measured
// within one job are kept, and jobs that share nodes put the others on one
// scale. The bound on the ratio is judged on that exact fit.
StatusOr<std::map<std::string, double>> SpeedsFromJobs(const json& root,
                                                       const config::SourceMap& source) {
  std::vector<std::pair<const json*, std::string>> documents = {{&root, ""}};
  if (const json* items = jr::Find(root, "items"); items && items->is_array()) {
    documents.clear();
    for (size_t i = 0; i < items->size(); ++i) {
      documents.emplace_back(&(*items)[i], jr::Element("items", i));
    }
  }
  SpeedsOfJobs jobs;
  std::set<std::string> nodes;
  for (const auto& [document, path] : documents) {
    BALLAST_ASSIGN_OR_RETURN(auto speeds, JobSpeeds(*document, path, source));
    if (speeds.empty()) continue;
    for (const auto& [node, speed] : speeds) nodes.insert(node);
    jobs.push_back(std::move(speeds));
  }
  if (nodes.empty()) {
    return Status::Invalid(
        "document: no job here has status.nodes[].measuredSpeed (a job's speeds are "
        "recorded when it succeeds)");
  }
  if (nodes.size() > kMaxSpeedNodes) {
    return Status::Invalid(fmt::format("document: more than {} nodes", kMaxSpeedNodes));
  }
  auto solved = SpeedsOnOneScale(jobs);
  if (!solved.ok()) return solved.status().WithPrefix("document: ");
  const std::map<std::string, double>& speeds = *solved;
  // Each job's speeds are within the ratio; jobs that share only some nodes
  // can still chain past it.
  const auto [slow, fast] =
      std::minmax_element(speeds.begin(), speeds.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  if (fast->second > kMaxSpeedRatio * slow->second) {
    return Status::Invalid(fmt::format(
        "document: the jobs' speeds put node {} at {:.3g} times node {}: expected the fastest node "
        "at most "
        "{:g} times the slowest (no profile weighs a node more than that; docs/fuzzy-weights.md)",
        fast->first, fast->second / slow->second, slow->first, kMaxSpeedRatio));
  }
  return speeds;
}

}  // namespace

namespace {

// The speeds of a speeds file's tree; `source` names lines in messages.
StatusOr<std::map<std::string, double>> SpeedsFromJson(const json& root,
                                                       const config::SourceMap& source) {
  if (IsJobDocument(root)) return SpeedsFromJobs(root, source);
  const json* map = &root;
  std::string path;
  if (const json* nested = jr::Find(root, "speeds"); nested && root.size() == 1) {
    map = nested;
    path = "speeds";
  }
  if (!map->is_object() || map->empty()) {
    return jr::Expected(path, "a non-empty map of node name: measured speed", *map);
  }
  if (map->size() > kMaxSpeedNodes) {
    return Status::Invalid(
        fmt::format("{}: more than {} nodes", path.empty() ? "document" : path, kMaxSpeedNodes));
  }
  std::map<std::string, double> speeds;
  std::vector<WrittenSpeed> written;
  for (const auto& [node, value] : map->items()) {
    const std::string node_path = jr::Field(path, node);
    if (Status checked = CheckName(node, NameKind::kDnsSubdomain); !checked.ok()) {
      return Status::Invalid(fmt::format("{}: {}", node_path, checked.message()));
    }
    BALLAST_ASSIGN_OR_RETURN(double speed, ReadSpeed(value, node_path));
    speeds[node] = speed;
    written.push_back({node, speed, node_path});
  }
  BALLAST_RETURN_IF_ERROR(CheckSpeedRatio(written, source));
  return speeds;
}

}  // namespace

StatusOr<std::map<std::string, double>> ParseSpeeds(std::string_view text,
                                                    const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(text, file_name));
  auto speeds = SpeedsFromJson(document.tree, document.source);
  if (!speeds.ok()) return document.source.Locate(speeds.status());
  return speeds;
}

namespace {

// `text` as a YAML double-quoted scalar: JSON's quoting (which escapes the
// C0 controls), and YAML's escapes for what JSON leaves raw and YAML does
// not allow in a stream: DEL and the C1 controls but NEL.
std::string Quoted(const std::string& text) {
  const std::string json = DumpJson(nlohmann::json(text));
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const auto byte = static_cast<unsigned char>(json[i]);
    const auto next = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0;
    if (byte == 0x7F) {
      out += "\\x7f";
    } else if (byte == 0xC2 && next >= 0x80 && next <= 0x9F && next != 0x85) {
      out += fmt::format("\\x{:02x}", next);
      ++i;
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string LevelYaml(const Level& level) {
  return level.term.empty() ? fmt::format("{}", level.value) : Quoted(level.term);
}

}  // namespace

std::string FormatProfileYaml(const Profile& profile) {
  std::string out = fmt::format(
      "apiVersion: {}\nkind: {}\nmetadata:\n  name: {}\nspec:\n  rounding: {}\n  scale:\n",
      kProfileApiVersion, kProfileKind, Quoted(profile.name), RoundingName(profile.rounding));
  for (const auto& [term, value] : profile.scale) {
    out += fmt::format("    {}: {}\n", Quoted(term), value);
  }
  out += "  criteria:\n";
  for (const Criterion& c : profile.criteria) {
    out += fmt::format("    - name: {}\n      label: {}\n      type: {}\n      better: {}\n",
                       Quoted(c.name), Quoted(c.label), CriterionTypeName(c.type),
                       BetterName(c.better));
    out += fmt::format("      rank: {}\n", c.rank);
    if (c.type == CriterionType::kLinguistic) {
      out += "      terms:\n";
      for (const auto& [value, level] : c.terms) {
        out += fmt::format("        {}: {}\n", Quoted(value), LevelYaml(level));
      }
    }
    out += fmt::format("      default: {}\n      optional: {}\n", LevelYaml(c.default_level),
                       c.optional ? "true" : "false");
    if (!c.description.empty())
      out += fmt::format("      description: {}\n", Quoted(c.description));
  }
  return out;
}

}  // namespace ballast::fuzzy
