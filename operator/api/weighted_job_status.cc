// WeightedJobStatus to and from the JSON of the CRD's status schema.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/common/json_read.h"
#include "core/common/utf8.h"
#include "operator/api/weighted_job.h"

namespace ballast::api {
namespace {

using nlohmann::json;
namespace jr = json_read;

template <typename T>
void Put(json& out, const char* key, const std::optional<T>& value) {
  if (value) out[key] = *value;
}

// One table per enum, in the enum's order: the name at index i is value i's.
constexpr const char* kPhaseNames[] = {"Pending", "Running", "Succeeded", "Failed", "Suspended"};
constexpr const char* kConditionTypeNames[] = {"Ready",     "Progressing",    "Complete", "Failed",
                                               "Suspended", "WorkersRefused", "Admitted"};
static_assert(std::size(kConditionTypeNames) == static_cast<size_t>(ConditionType::kAdmitted) + 1);
constexpr const char* kReasonNames[] = {
    "InvalidSpec",
    "InvalidPolicy",
    "ProfileNotFound",
    "InvalidProfile",
    "DeadlineExceeded",
    "BackoffLimitExceeded",
    "NoWorkerCanStart",
    "WorkerPodRefused",
    "TokenSecretUnusable",
    "VerificationFailed",
    "TooManyFailedItems",
    "ItemsChanged",
    "FailedItems",
    "NoEligibleNodes",
    "WaitingForWorkers",
    "WaitingForItems",
    "WorkersRunning",
    "Started",
    "Resumed",
    "Completed",
    "AllItemsFinished",
    "CompletedWithFailedItems",
    "Accepted",
    "Suspended",
    "SuspendedByUser",
    "NotSuspended",
    "WorkerFailed",
    "WorkerCannotStart",
    "WorkerStartBlocked",
    "WorkerBundleFallback",
    "CoordinatorUnreachable",
    "NodeNotReady",
    "NodeReady",
    "NodeLabelDefaulted",
    "HistoryUnavailable",
    "ArchitectureNotSupported",
    "NodeJoined",
    "NodeLeft",
    "NodeEligible",
    "CheckpointTooLarge",
    "CheckpointRejected",
    "ConditionsRestored",
    "StatusRestored",
    "ItemsFailed",
    "PodSecurity",
    "PriorityClassNotFound",
    "AdmissionDenied",
    "QuotaExceeded",
    "Forbidden",
    "CreateFailed",
    "WorkersCreated",
    "NodeBelowBaseline",
    "NodeAboveBaseline",
    "WaitingForQueue",
    "Admitted",
    "Evicted",
};
static_assert(std::size(kReasonNames) == static_cast<size_t>(Reason::kEvicted) + 1);

template <typename E, size_t N>
std::optional<E> Named(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<E>(i);
  }
  return std::nullopt;
}

json RowToJson(const NodeRow& row) {
  json out = {{"name", row.name},   {"weight", row.weight},
              {"score", row.score}, {"estimatedSpeed", row.estimated_speed},
              {"items", row.items}, {"steals", row.steals},
              {"pod", row.pod}};
  if (row.prior) {
    out["prior"] = {{"source", row.prior->source},
                    {"value", row.prior->value},
                    {"samples", row.prior->samples},
                    {"ageSeconds", row.prior->age_seconds}};
  }
  Put(out, "cost", row.cost);
  Put(out, "costSpeed", row.cost_speed);
  Put(out, "duplicateSeconds", row.duplicate_seconds);
  Put(out, "measuredSpeed", row.measured_speed);
  Put(out, "priorError", row.prior_error);
  Put(out, "baselineRatio", row.baseline_ratio);
  Put(out, "baselineVerdict", row.baseline_verdict);
  Put(out, "energyJoules", row.energy_joules);
  return out;
}

StatusOr<NodePriorRow> PriorFromJson(const json& node, const std::string& path) {
  if (!node.is_object()) return jr::Expected(path, "a prior object", node);
  NodePriorRow prior;
  if (const json* value = jr::Find(node, "source")) {
    BALLAST_ASSIGN_OR_RETURN(prior.source, jr::String(*value, jr::Field(path, "source")));
  }
  for (const auto& [key, target] :
       {std::pair{"value", &prior.value}, std::pair{"samples", &prior.samples},
        std::pair{"ageSeconds", &prior.age_seconds}}) {
    if (const json* value = jr::Find(node, key)) {
      if (!value->is_number()) return jr::Expected(jr::Field(path, key), "a number", *value);
      *target = value->get<double>();
    }
  }
  return prior;
}

json CostModelToJson(const CostModelStatus& model) {
  json out = {
      {"startCost", model.start_cost}, {"learned", model.learned}, {"samples", model.samples}};
  Put(out, "secondsPerCost", model.seconds_per_cost);
  Put(out, "startSeconds", model.start_seconds);
  return out;
}

StatusOr<CostModelStatus> CostModelFromJson(const json& node, const std::string& path) {
  if (!node.is_object()) return jr::Expected(path, "an object", node);
  CostModelStatus model;
  if (const json* value = jr::Find(node, "startCost")) {
    if (!value->is_number()) return jr::Expected(jr::Field(path, "startCost"), "a number", *value);
    model.start_cost = value->get<double>();
  }
  if (const json* value = jr::Find(node, "learned")) {
    BALLAST_ASSIGN_OR_RETURN(model.learned, jr::Bool(*value, jr::Field(path, "learned")));
  }
  if (const json* value = jr::Find(node, "samples")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t samples, jr::Int(*value, jr::Field(path, "samples"), 0));
    model.samples = static_cast<uint64_t>(samples);
  }
  for (const auto& [key, target] : {std::pair{"secondsPerCost", &model.seconds_per_cost},
                                    std::pair{"startSeconds", &model.start_seconds}}) {
    if (const json* value = jr::Find(node, key)) {
      if (!value->is_number()) return jr::Expected(jr::Field(path, key), "a number", *value);
      *target = value->get<double>();
    }
  }
  return model;
}

json ExcludedToJson(const ExcludedNode& excluded) {
  json out = {{"name", excluded.name}, {"reason", excluded.reason}, {"message", excluded.message}};
  if (!excluded.cause.empty()) out["cause"] = excluded.cause;
  return out;
}

StatusOr<ExcludedNode> ExcludedFromJson(const json& node, const std::string& path) {
  if (!node.is_object()) return jr::Expected(path, "an excluded node object", node);
  ExcludedNode excluded;
  for (const auto& [key, target] :
       {std::pair{"name", &excluded.name}, std::pair{"reason", &excluded.reason},
        std::pair{"message", &excluded.message}, std::pair{"cause", &excluded.cause}}) {
    if (const json* value = jr::Find(node, key)) {
      BALLAST_ASSIGN_OR_RETURN(*target, jr::String(*value, jr::Field(path, key)));
    }
  }
  return excluded;
}

json ConditionToJson(const StatusCondition& condition) {
  return {{"type", ConditionTypeName(condition.type)},
          {"status", condition.status ? "True" : "False"},
          {"reason", ReasonName(condition.reason)},
          {"message", condition.message},
          {"observedGeneration", condition.observed_generation},
          {"lastTransitionTime", condition.last_transition_time}};
}

// Readers of one optional field each; absent leaves `out` unset.
Status ReadString(const json& node, const char* key, std::optional<std::string>& out) {
  if (const json* value = jr::Find(node, key)) {
    BALLAST_ASSIGN_OR_RETURN(out, jr::String(*value, jr::Field("status", key)));
  }
  return Status::Ok();
}

Status ReadInt(const json& node, const char* key, std::optional<int64_t>& out) {
  if (const json* value = jr::Find(node, key)) {
    BALLAST_ASSIGN_OR_RETURN(out, jr::Int(*value, jr::Field("status", key), 0));
  }
  return Status::Ok();
}

Status ReadCount(const json& node, const char* key, std::optional<uint64_t>& out) {
  std::optional<int64_t> value;
  BALLAST_RETURN_IF_ERROR(ReadInt(node, key, value));
  if (value) out = static_cast<uint64_t>(*value);
  return Status::Ok();
}

Status ReadNumber(const json& node, const char* key, std::optional<double>& out) {
  if (const json* value = jr::Find(node, key)) {
    if (!value->is_number()) return jr::Expected(jr::Field("status", key), "a number", *value);
    out = value->get<double>();
  }
  return Status::Ok();
}

Status ReadStrings(const json& node, const char* key, std::vector<std::string>& out) {
  if (const json* value = jr::Find(node, key)) {
    const std::string path = jr::Field("status", key);
    if (!value->is_array()) return jr::Expected(path, "a list of strings", *value);
    for (size_t i = 0; i < value->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(std::string text, jr::String((*value)[i], jr::Element(path, i)));
      out.push_back(std::move(text));
    }
  }
  return Status::Ok();
}

Status ReadObject(const json& node, const char* key, std::optional<json>& out) {
  if (const json* value = jr::Find(node, key)) {
    if (!value->is_object()) return jr::Expected(jr::Field("status", key), "an object", *value);
    out = *value;
  }
  return Status::Ok();
}

// The condition at `path`; nullopt for one whose type or reason this
// operator does not know (written by another version: the next write drops it).
StatusOr<std::optional<StatusCondition>> ConditionFromJson(const json& node,
                                                           const std::string& path) {
  if (!node.is_object()) return jr::Expected(path, "a condition object", node);
  StatusCondition condition;
  std::string type, status, reason;
  std::string* strings[] = {&type, &status, &reason, &condition.message,
                            &condition.last_transition_time};
  const char* keys[] = {"type", "status", "reason", "message", "lastTransitionTime"};
  for (size_t i = 0; i < std::size(keys); ++i) {
    if (const json* value = jr::Find(node, keys[i])) {
      BALLAST_ASSIGN_OR_RETURN(*strings[i], jr::String(*value, jr::Field(path, keys[i])));
    }
  }
  const auto known_type = ConditionTypeNamed(type);
  const auto known_reason = ReasonNamed(reason);
  if (!known_type || !known_reason) return std::optional<StatusCondition>();
  condition.type = *known_type;
  condition.reason = *known_reason;
  condition.status = status == "True";
  if (const json* value = jr::Find(node, "observedGeneration")) {
    BALLAST_ASSIGN_OR_RETURN(condition.observed_generation,
                             jr::Int(*value, jr::Field(path, "observedGeneration"), 0));
  }
  return std::optional<StatusCondition>(condition);
}

StatusOr<NodeRow> RowFromJson(const json& node, const std::string& path) {
  if (!node.is_object()) return jr::Expected(path, "a node row object", node);
  NodeRow row;
  for (const auto& [key, target] : {std::pair{"name", &row.name}, std::pair{"pod", &row.pod}}) {
    if (const json* value = jr::Find(node, key)) {
      BALLAST_ASSIGN_OR_RETURN(*target, jr::String(*value, jr::Field(path, key)));
    }
  }
  for (const auto& [key, target] :
       {std::pair{"weight", &row.weight}, std::pair{"score", &row.score},
        std::pair{"estimatedSpeed", &row.estimated_speed}}) {
    if (const json* value = jr::Find(node, key)) {
      if (!value->is_number()) return jr::Expected(jr::Field(path, key), "a number", *value);
      *target = value->get<double>();
    }
  }
  for (const auto& [key, target] :
       {std::pair{"measuredSpeed", &row.measured_speed}, std::pair{"priorError", &row.prior_error},
        std::pair{"cost", &row.cost}, std::pair{"costSpeed", &row.cost_speed},
        std::pair{"duplicateSeconds", &row.duplicate_seconds},
        std::pair{"baselineRatio", &row.baseline_ratio},
        std::pair{"energyJoules", &row.energy_joules}}) {
    if (const json* value = jr::Find(node, key)) {
      if (!value->is_number()) return jr::Expected(jr::Field(path, key), "a number", *value);
      *target = value->get<double>();
    }
  }
  if (const json* value = jr::Find(node, "baselineVerdict")) {
    BALLAST_ASSIGN_OR_RETURN(row.baseline_verdict,
                             jr::String(*value, jr::Field(path, "baselineVerdict")));
  }
  if (const json* value = jr::Find(node, "prior")) {
    BALLAST_ASSIGN_OR_RETURN(row.prior, PriorFromJson(*value, jr::Field(path, "prior")));
  }
  for (const auto& [key, target] :
       {std::pair{"items", &row.items}, std::pair{"steals", &row.steals}}) {
    if (const json* value = jr::Find(node, key)) {
      BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*value, jr::Field(path, key), 0));
      *target = static_cast<uint64_t>(count);
    }
  }
  return row;
}

Status ReadLists(const json& node, WeightedJobStatus& status) {
  if (const json* conditions = jr::Find(node, "conditions")) {
    if (!conditions->is_array()) {
      return jr::Expected("status.conditions", "a list of conditions", *conditions);
    }
    for (size_t i = 0; i < conditions->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(
          std::optional<StatusCondition> condition,
          ConditionFromJson((*conditions)[i], jr::Element("status.conditions", i)));
      if (condition) status.conditions.push_back(std::move(*condition));
    }
  }
  if (const json* nodes = jr::Find(node, "nodes")) {
    if (!nodes->is_array()) return jr::Expected("status.nodes", "a list of node rows", *nodes);
    status.nodes.emplace();
    for (size_t i = 0; i < nodes->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(NodeRow row,
                               RowFromJson((*nodes)[i], jr::Element("status.nodes", i)));
      status.nodes->push_back(std::move(row));
    }
  }
  if (const json* excluded = jr::Find(node, "excludedNodes")) {
    if (!excluded->is_array()) {
      return jr::Expected("status.excludedNodes", "a list of excluded nodes", *excluded);
    }
    for (size_t i = 0; i < excluded->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(
          ExcludedNode row,
          ExcludedFromJson((*excluded)[i], jr::Element("status.excludedNodes", i)));
      status.excluded_nodes.push_back(std::move(row));
    }
  }
  return Status::Ok();
}

}  // namespace

const char* JobPhaseName(JobPhase phase) { return kPhaseNames[static_cast<size_t>(phase)]; }
const char* ConditionTypeName(ConditionType type) {
  return kConditionTypeNames[static_cast<size_t>(type)];
}
const char* ReasonName(Reason reason) { return kReasonNames[static_cast<size_t>(reason)]; }
std::optional<JobPhase> JobPhaseNamed(std::string_view name) {
  return Named<JobPhase>(kPhaseNames, name);
}
std::optional<ConditionType> ConditionTypeNamed(std::string_view name) {
  return Named<ConditionType>(kConditionTypeNames, name);
}
std::optional<Reason> ReasonNamed(std::string_view name) {
  return Named<Reason>(kReasonNames, name);
}

std::vector<NodeRow> NotableRows(const std::vector<NodeRow>& rows, size_t max_rows) {
  if (rows.size() <= max_rows) return rows;
  double speed_sum = 0, weight_sum = 0;
  for (const NodeRow& row : rows) {
    if (row.estimated_speed > 0 && row.weight > 0) {
      speed_sum += row.estimated_speed;
      weight_sum += row.weight;
    }
  }
  const auto departure = [&](const NodeRow& row) {
    if (row.prior_error) return std::abs(*row.prior_error);
    if (row.estimated_speed <= 0 || row.weight <= 0) return std::numeric_limits<double>::infinity();
    return std::abs(std::log((row.estimated_speed / speed_sum) / (row.weight / weight_sum)));
  };
  std::vector<std::pair<double, size_t>> ranked;
  ranked.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) ranked.emplace_back(-departure(rows[i]), i);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(max_rows),
                    ranked.end());
  std::vector<size_t> kept;
  for (size_t i = 0; i < max_rows; ++i) kept.push_back(ranked[i].second);
  std::sort(kept.begin(), kept.end());
  std::vector<NodeRow> out;
  out.reserve(max_rows);
  for (size_t i : kept) out.push_back(rows[i]);
  return out;
}

json NodeSummaryToJson(const std::vector<NodeRow>& rows, size_t shown) {
  std::vector<double> speeds;
  uint64_t steals = 0;
  std::map<std::string, int64_t> priors;
  for (const NodeRow& row : rows) {
    if (row.estimated_speed > 0) speeds.push_back(row.estimated_speed);
    steals += row.steals;
    if (row.prior) ++priors[row.prior->source];
  }
  json out = {{"nodes", rows.size()}, {"shown", shown}, {"steals", steals}};
  if (!speeds.empty()) {
    std::sort(speeds.begin(), speeds.end());
    out["estimatedSpeed"] = {{"measured", speeds.size()},
                             {"min", speeds.front()},
                             {"median", speeds[speeds.size() / 2]},
                             {"max", speeds.back()}};
  }
  if (!priors.empty()) out["priors"] = priors;
  return out;
}

namespace {

// status.nodes, the notable rows (NotableRows) with a nodeSummary of all
// when some are left out, and status.excludedNodes, the first rows with
// their count when some are left out: at most kMaxNodeRows each.
void PutNodeRows(json& out, const WeightedJobStatus& status) {
  if (status.nodes) {
    json rows = json::array();
    for (const auto& row : NotableRows(*status.nodes, kMaxNodeRows)) rows.push_back(RowToJson(row));
    if (rows.size() < status.nodes->size()) {
      out["nodeSummary"] = NodeSummaryToJson(*status.nodes, rows.size());
    }
    out["nodes"] = std::move(rows);
  }
  if (!status.excluded_nodes.empty()) {
    json rows = json::array();
    for (const auto& excluded : status.excluded_nodes) {
      if (rows.size() == kMaxNodeRows) break;
      rows.push_back(ExcludedToJson(excluded));
    }
    if (rows.size() < status.excluded_nodes.size()) {
      out["excludedNodeCount"] = status.excluded_nodes.size();
    }
    out["excludedNodes"] = std::move(rows);
  }
}

}  // namespace

json StatusToJson(const WeightedJobStatus& status) {
  json out = json::object();
  if (status.phase) out["phase"] = JobPhaseName(*status.phase);
  Put(out, "observedGeneration", status.observed_generation);
  if (!status.conditions.empty()) {
    json conditions = json::array();
    for (const auto& condition : status.conditions)
      conditions.push_back(ConditionToJson(condition));
    out["conditions"] = conditions;
  }
  PutNodeRows(out, status);
  Put(out, "progress", status.progress);
  Put(out, "completedItems", status.completed_items);
  Put(out, "completedCost", status.completed_cost);
  Put(out, "totalCost", status.total_cost);
  Put(out, "items", status.items);
  Put(out, "workers", status.workers);
  Put(out, "failedPods", status.failed_pods);
  Put(out, "failedItems", status.failed_items);
  if (!status.failed_item_values.empty()) out["failedItemValues"] = status.failed_item_values;
  Put(out, "result", status.result);
  Put(out, "startTime", status.start_time);
  Put(out, "itemsDigest", status.items_digest);
  Put(out, "completionTime", status.completion_time);
  Put(out, "makespanSeconds", status.makespan_seconds);
  Put(out, "idealSeconds", status.ideal_seconds);
  Put(out, "efficiency", status.efficiency);
  Put(out, "efficiencyReference", status.efficiency_reference);
  Put(out, "limitBound", status.limit_bound);
  Put(out, "estimatedIdealSeconds", status.estimated_ideal_seconds);
  Put(out, "estimatedEfficiency", status.estimated_efficiency);
  Put(out, "timing", status.timing);
  Put(out, "energy", status.energy);
  if (status.cost_model) out["costModel"] = CostModelToJson(*status.cost_model);
  Put(out, "efficiencyNote", status.efficiency_note);
  Put(out, "note", status.note);
  Put(out, "checkpoint", status.checkpoint);
  return out;
}

StatusOr<WeightedJobStatus> StatusFromJson(const json& node) {
  WeightedJobStatus status;
  if (node.is_null()) return status;
  if (!node.is_object()) return jr::Expected("status", "an object", node);
  std::optional<std::string> phase;
  BALLAST_RETURN_IF_ERROR(ReadString(node, "phase", phase));
  if (phase) {
    status.phase = JobPhaseNamed(*phase);
    if (!status.phase) {
      return jr::Expected("status.phase", "Pending, Running, Succeeded, Failed or Suspended",
                          *phase);
    }
  }
  BALLAST_RETURN_IF_ERROR(ReadInt(node, "observedGeneration", status.observed_generation));
  BALLAST_RETURN_IF_ERROR(ReadLists(node, status));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "progress", status.progress));
  BALLAST_RETURN_IF_ERROR(ReadCount(node, "completedItems", status.completed_items));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "completedCost", status.completed_cost));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "totalCost", status.total_cost));
  BALLAST_RETURN_IF_ERROR(ReadCount(node, "items", status.items));
  BALLAST_RETURN_IF_ERROR(ReadInt(node, "workers", status.workers));
  BALLAST_RETURN_IF_ERROR(ReadInt(node, "failedPods", status.failed_pods));
  BALLAST_RETURN_IF_ERROR(ReadCount(node, "failedItems", status.failed_items));
  BALLAST_RETURN_IF_ERROR(ReadStrings(node, "failedItemValues", status.failed_item_values));
  BALLAST_RETURN_IF_ERROR(ReadObject(node, "result", status.result));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "startTime", status.start_time));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "itemsDigest", status.items_digest));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "completionTime", status.completion_time));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "makespanSeconds", status.makespan_seconds));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "idealSeconds", status.ideal_seconds));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "efficiency", status.efficiency));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "efficiencyReference", status.efficiency_reference));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "limitBound", status.limit_bound));
  BALLAST_RETURN_IF_ERROR(
      ReadNumber(node, "estimatedIdealSeconds", status.estimated_ideal_seconds));
  BALLAST_RETURN_IF_ERROR(ReadNumber(node, "estimatedEfficiency", status.estimated_efficiency));
  BALLAST_RETURN_IF_ERROR(ReadObject(node, "timing", status.timing));
  BALLAST_RETURN_IF_ERROR(ReadObject(node, "energy", status.energy));
  if (const json* value = jr::Find(node, "costModel")) {
    BALLAST_ASSIGN_OR_RETURN(status.cost_model, CostModelFromJson(*value, "status.costModel"));
  }
  BALLAST_RETURN_IF_ERROR(ReadString(node, "efficiencyNote", status.efficiency_note));
  BALLAST_RETURN_IF_ERROR(ReadString(node, "note", status.note));
  BALLAST_RETURN_IF_ERROR(ReadObject(node, "checkpoint", status.checkpoint));
  return status;
}

bool SetCondition(WeightedJobStatus& status, const StatusCondition& condition, int64_t generation,
                  const std::string& now) {
  StatusCondition wanted = condition;
  // A condition's message may carry a user's command's error or output, and
  // `kubectl describe` prints it to a terminal as it is.
  wanted.message = EscapeControls(condition.message);
  wanted.observed_generation = generation;
  wanted.last_transition_time = now;
  for (auto& existing : status.conditions) {
    if (existing.type != condition.type) continue;
    if (existing.status == condition.status) {
      wanted.last_transition_time = existing.last_transition_time;
    }
    if (existing == wanted) return false;
    existing = wanted;
    return true;
  }
  status.conditions.push_back(wanted);
  return true;
}

bool RemoveCondition(WeightedJobStatus& status, ConditionType type) {
  return std::erase_if(status.conditions,
                       [type](const StatusCondition& c) { return c.type == type; }) > 0;
}

StatusOr<WeightedJobObject> WeightedJobFromJson(const json& object) {
  const json* kind = jr::Find(object, "kind");
  if (kind == nullptr || !kind->is_string() || *kind != "WeightedJob") {
    return Status::Invalid("kind: expected WeightedJob");
  }
  WeightedJobObject out;
  if (const json* meta = jr::Find(object, "metadata")) {
    for (const auto& [key, field] : {std::pair{"namespace", &out.ns}, {"name", &out.name}}) {
      const json* value = jr::Find(*meta, key);
      if (value != nullptr && value->is_string()) *field = value->get<std::string>();
    }
  }
  const json* spec = jr::Find(object, "spec");
  out.spec = ParseWeightedJobSpec(spec != nullptr ? *spec : json::object(), out.name);
  const json* status = jr::Find(object, "status");
  BALLAST_ASSIGN_OR_RETURN(out.status, StatusFromJson(status != nullptr ? *status : json()));
  if (status == nullptr) return out;
  if (const json* summary = jr::Find(*status, "nodeSummary")) {
    BALLAST_RETURN_IF_ERROR(ReadCount(*summary, "nodes", out.node_count));
    BALLAST_RETURN_IF_ERROR(ReadCount(*summary, "steals", out.steals));
  }
  BALLAST_RETURN_IF_ERROR(ReadCount(*status, "excludedNodeCount", out.excluded_count));
  return out;
}

}  // namespace ballast::api
