// ScenarioFromJson: the one reader of a scenario, over its tree with
// common/json_read.h; ParseScenario: a scenario file through it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/balance/efficiency.h"
#include "core/common/json_read.h"
#include "core/config/document.h"
#include "core/sim/scenario.h"
#include "core/sim/true_cost.h"
#include "core/workload/item_list.h"
#include "core/workload/workload.h"

namespace ballast::sim {
namespace {

using nlohmann::json;
namespace jr = json_read;
using Bounds = ScenarioBounds;

// A finite number in [min, max]; Invalid "<path>: expected <what> in [min, max], got ...".
StatusOr<double> ReadIn(const json& value, const std::string& path, double min, double max,
                        std::string_view what) {
  return jr::InRange(value, path, min, max, what);
}

// ReadIn of the member `key` of `node`, or `fallback` when it is not written.
StatusOr<double> ReadInOr(const json& node, const std::string& path, std::string_view key,
                          double fallback, double min, double max, std::string_view what) {
  const json* value = jr::Find(node, key);
  if (!value) return fallback;
  return ReadIn(*value, jr::Field(path, key), min, max, what);
}

// The string member `key`, or `fallback` when it is not written.
StatusOr<std::string> StringOr(const json& node, const std::string& path, std::string_view key,
                               std::string fallback) {
  const json* value = jr::Find(node, key);
  if (!value) return fallback;
  return jr::String(*value, jr::Field(path, key));
}

// Invalid at `path` when `items` are too many to keep a cost each.
Status CheckCostsKept(const std::string& path, uint64_t items) {
  if (items <= static_cast<uint64_t>(Bounds::kMaxItemCosts)) return Status::Ok();
  return Status::InvalidAt(path,
                           fmt::format("needs items <= {} (one cost per item is kept), got {}",
                                       Bounds::kMaxItemCosts, items));
}

// The older spelling's list, itemCosts.list, and workload.trueCosts: exactly
// `items` positive numbers, one per item.
StatusOr<std::vector<double>> ReadCostList(const json& node, const std::string& path,
                                           uint64_t items) {
  const std::string expected = fmt::format("a list of {} positive costs, one per item", items);
  if (!node.is_array() || node.size() != items) return jr::Expected(path, expected, node);
  std::vector<double> costs;
  costs.reserve(items);
  for (size_t i = 0; i < node.size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(double cost, jr::Positive(node[i], jr::Element(path, i)));
    costs.push_back(cost);
  }
  return costs;
}

// itemsFrom.pareto (or the older itemCosts.pareto) {alpha, minimum}: `items`
// costs drawn with `seed`.
StatusOr<std::vector<double>> ReadPareto(const json& node, const std::string& path, uint64_t items,
                                         uint64_t seed) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"alpha", "minimum"}));
  BALLAST_ASSIGN_OR_RETURN(const json* alpha_node, jr::Require(node, path, "alpha"));
  BALLAST_ASSIGN_OR_RETURN(double alpha,
                           ReadIn(*alpha_node, jr::Field(path, "alpha"), Bounds::kMinParetoAlpha,
                                  Bounds::kMaxParetoAlpha, "a shape"));
  double minimum = 1;
  if (const json* value = jr::Find(node, "minimum")) {
    BALLAST_ASSIGN_OR_RETURN(
        minimum, jr::Positive(*value, jr::Field(path, "minimum"), Bounds::kMaxParetoMinimum));
  }
  return ParetoCosts(items, alpha, minimum, seed);
}

// The costs of itemsFrom.list, listed as a job lists its items (a value, cost
// 1, or {value, cost}; workload::InlineItemsFromJson): the values are
// checked as a job's and not kept.
StatusOr<std::vector<double>> ReadListedCosts(const json& node, const std::string& path) {
  BALLAST_ASSIGN_OR_RETURN(workload::ItemList list, workload::InlineItemsFromJson(node, path));
  for (size_t i = 0; i < list.values.size(); ++i) {
    BALLAST_RETURN_IF_ERROR(
        workload::CheckItemValue(list.values[i], jr::Field(jr::Element(path, i), "value")));
  }
  if (list.costs.empty()) list.costs.assign(list.values.size(), 1.0);
  return std::move(list.costs);
}

// workload.itemsFrom: {list: [...]} as a job's, or {pareto: {alpha, minimum},
// seed}; or its older spelling workload.itemCosts (`listed`: false), whose
// list is one number per item. For a workload of `items` items; `seed`
// defaults to the scenario's.
StatusOr<balance::ItemCosts> ReadItemCosts(const json& node, const std::string& path,
                                           uint64_t items, uint64_t scenario_seed, bool listed) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"pareto", "list", "seed"}));
  BALLAST_RETURN_IF_ERROR(CheckCostsKept(path, items));
  const json* pareto = jr::Find(node, "pareto");
  const json* list = jr::Find(node, "list");
  if ((pareto != nullptr) == (list != nullptr)) {
    return Status::InvalidAt(path, "expected exactly one of pareto, list");
  }
  std::vector<double> costs;
  if (list) {
    if (jr::Find(node, "seed")) {
      return Status::InvalidAt(jr::Field(path, "seed"), "a seed is for pareto, not for a list");
    }
    const std::string list_path = jr::Field(path, "list");
    BALLAST_ASSIGN_OR_RETURN(
        costs, listed ? ReadListedCosts(*list, list_path) : ReadCostList(*list, list_path, items));
  } else {
    uint64_t seed = scenario_seed;
    if (const json* value = jr::Find(node, "seed")) {
      BALLAST_ASSIGN_OR_RETURN(int64_t read, jr::Int(*value, jr::Field(path, "seed"), 0));
      seed = static_cast<uint64_t>(read);
    }
    BALLAST_ASSIGN_OR_RETURN(costs, ReadPareto(*pareto, jr::Field(path, "pareto"), items, seed));
  }
  return std::make_shared<const std::vector<double>>(std::move(costs));
}

// workload.items, or the length of workload.itemsFrom.list (a job gives one
// or the other, and so does a scenario).
StatusOr<uint64_t> ReadItemCount(const json& node, const std::string& path) {
  const json* from = jr::Find(node, "itemsFrom");
  const json* list = from != nullptr ? jr::Find(*from, "list") : nullptr;
  if (list != nullptr) {
    if (jr::Find(node, "items")) {
      return Status::InvalidAt(
          jr::Field(path, "itemsFrom"),
          "give the items' count (items) or their list (itemsFrom.list), not both");
    }
    // A list that is no list is refused when it is read (ReadListedCosts).
    return list->is_array() && !list->empty() ? list->size() : 1;
  }
  BALLAST_ASSIGN_OR_RETURN(const json* items, jr::Require(node, path, "items"));
  BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*items, jr::Field(path, "items"), 1,
                                                  static_cast<int64_t>(Bounds::kMaxItems)));
  return static_cast<uint64_t>(count);
}

// workload.itemsFrom (or itemCosts), workload.split and workload.order into
// `workload` (its items read).
Status ReadCosts(const json& node, const std::string& path, uint64_t scenario_seed,
                 Workload& workload) {
  const json* from = jr::Find(node, "itemsFrom");
  const json* old = jr::Find(node, "itemCosts");
  if (from != nullptr && old != nullptr) {
    return Status::InvalidAt(jr::Field(path, "itemCosts"),
                             "itemCosts is the older spelling of itemsFrom; give one");
  }
  if (const json* costs = from != nullptr ? from : old) {
    const std::string costs_path = jr::Field(path, from != nullptr ? "itemsFrom" : "itemCosts");
    if (jr::Find(node, "costModel")) {
      return Status::InvalidAt(costs_path, "not with costModel (the item costs replace the shape)");
    }
    BALLAST_ASSIGN_OR_RETURN(workload.item_costs, ReadItemCosts(*costs, costs_path, workload.items,
                                                                scenario_seed, from != nullptr));
  }
  if (const json* split = jr::Find(node, "split")) {
    if (*split != "cost" && *split != "count") {
      return jr::Expected(jr::Field(path, "split"), "cost or count", *split);
    }
    workload.split = *split == "cost" ? Split::kCost : Split::kCount;
  }
  if (const json* order = jr::Find(node, "order")) {
    const auto parsed =
        order->is_string() ? balance::ParseItemOrder(order->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return jr::Expected(jr::Field(path, "order"), "\"policy\", \"largestFirst\" or \"listed\"",
                          *order);
    }
    workload.order = *parsed;
  }
  return Status::Ok();
}

// workload.failingItems: [{item, attemptSeconds}], distinct items of the
// workload, sorted by item.
StatusOr<std::vector<FailingItem>> ReadFailingItems(const json& node, const std::string& path,
                                                    uint64_t items) {
  if (!node.is_array() || node.size() > static_cast<size_t>(Bounds::kMaxFailingItems)) {
    return jr::Expected(
        path,
        fmt::format("a list of at most {} {{item, attemptSeconds}}", Bounds::kMaxFailingItems),
        node);
  }
  std::vector<FailingItem> failing;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string element_path = jr::Element(path, i);
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node[i], element_path, {"item", "attemptSeconds"}));
    BALLAST_ASSIGN_OR_RETURN(const json* item, jr::Require(node[i], element_path, "item"));
    BALLAST_ASSIGN_OR_RETURN(int64_t index, jr::Int(*item, jr::Field(element_path, "item"), 0,
                                                    static_cast<int64_t>(items) - 1));
    for (const FailingItem& other : failing) {
      if (other.item == static_cast<uint64_t>(index)) {
        return Status::InvalidAt(jr::Field(element_path, "item"),
                                 fmt::format("item {} is already listed", index));
      }
    }
    BALLAST_ASSIGN_OR_RETURN(const json* seconds,
                             jr::Require(node[i], element_path, "attemptSeconds"));
    BALLAST_ASSIGN_OR_RETURN(double attempt,
                             ReadIn(*seconds, jr::Field(element_path, "attemptSeconds"),
                                    Bounds::kMinItemSeconds, Bounds::kMaxItemSeconds, "seconds"));
    failing.push_back({static_cast<uint64_t>(index), attempt});
  }
  std::ranges::sort(failing, {}, &FailingItem::item);
  return failing;
}

// workload.concurrency, sliceOverhead, retries and failingItems (items read).
Status ReadExec(const json& node, const std::string& path, Workload& workload) {
  if (const json* concurrency = jr::Find(node, "concurrency")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*concurrency, jr::Field(path, "concurrency"), 1,
                                                    Bounds::kMaxConcurrency));
    workload.concurrency = static_cast<uint32_t>(count);
  }
  BALLAST_ASSIGN_OR_RETURN(
      workload.slice_overhead,
      ReadInOr(node, path, "sliceOverhead", 0.0, 0, Bounds::kMaxSliceOverhead, "a fraction"));
  if (const json* retries = jr::Find(node, "retries")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count,
                             jr::Int(*retries, jr::Field(path, "retries"), 0, Bounds::kMaxRetries));
    workload.retries = static_cast<uint32_t>(count);
  }
  if (const json* failing = jr::Find(node, "failingItems")) {
    BALLAST_ASSIGN_OR_RETURN(
        workload.failing_items,
        ReadFailingItems(*failing, jr::Field(path, "failingItems"), workload.items));
  }
  return Status::Ok();
}

// The workload's costs: their model and jitter, the start cost, the declared
// costs (ReadCosts) and the true ones.
Status ReadCostFields(const json& node, const std::string& path, uint64_t scenario_seed,
                      Workload& workload) {
  if (const json* shape = jr::Find(node, "costModel")) {
    const auto parsed =
        shape->is_string() ? balance::ParseCostShape(shape->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return jr::Expected(jr::Field(path, "costModel"), "one of uniform, linear, sqrt", *shape);
    }
    workload.cost = *parsed;
  }
  if (const json* jitter = jr::Find(node, "costJitter")) {
    const std::string jitter_path = jr::Field(path, "costJitter");
    if (!jitter->is_number() || !(jitter->get<double>() >= 0 && jitter->get<double>() < 1)) {
      return jr::Expected(jitter_path, "a number in [0, 1)", *jitter);
    }
    workload.cost_jitter = jitter->get<double>();
    if (workload.cost_jitter > 0 && workload.items > 50'000'000) {
      return Status::InvalidAt(jitter_path,
                               "costJitter needs items <= 50000000 (one cost per item is kept)");
    }
  }
  BALLAST_ASSIGN_OR_RETURN(workload.start_cost, ReadInOr(node, path, "startCost", 0.0, 0,
                                                         Bounds::kMaxStartCost, "mean items"));
  BALLAST_RETURN_IF_ERROR(ReadCosts(node, path, scenario_seed, workload));
  if (const json* true_costs = jr::Find(node, "trueCosts")) {
    const std::string true_path = jr::Field(path, "trueCosts");
    BALLAST_RETURN_IF_ERROR(CheckCostsKept(true_path, workload.items));
    BALLAST_ASSIGN_OR_RETURN(std::vector<double> costs,
                             ReadCostList(*true_costs, true_path, workload.items));
    workload.true_costs = std::make_shared<const std::vector<double>>(std::move(costs));
  }
  return Status::Ok();
}

// How an item's data moves: its bytes, streamed or in blocks, and whether a
// lost range may be computed again.
Status ReadTransfer(const json& node, const std::string& path, Workload& workload) {
  BALLAST_ASSIGN_OR_RETURN(workload.bytes_per_item, ReadInOr(node, path, "bytesPerItem", 0.0, 0,
                                                             Bounds::kMaxBytesPerItem, "bytes"));
  if (const json* transfer = jr::Find(node, "transfer")) {
    if (*transfer != "stream" && *transfer != "block") {
      return jr::Expected(jr::Field(path, "transfer"), "stream or block", *transfer);
    }
    workload.transfer = *transfer == "stream" ? Transfer::kStream : Transfer::kBlock;
  }
  if (const json* repeatable = jr::Find(node, "repeatable")) {
    BALLAST_ASSIGN_OR_RETURN(workload.repeatable,
                             jr::Bool(*repeatable, jr::Field(path, "repeatable")));
  }
  return Status::Ok();
}

StatusOr<Workload> ReadWorkload(const json& node, const std::string& path, uint64_t scenario_seed) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(node, path,
                       {"items", "itemSeconds", "costModel", "costJitter", "startCost", "itemsFrom",
                        "itemCosts", "trueCosts", "split", "order", "bytesPerItem", "transfer",
                        "repeatable", "concurrency", "sliceOverhead", "retries", "failingItems"}));
  Workload workload;
  BALLAST_ASSIGN_OR_RETURN(workload.items, ReadItemCount(node, path));
  BALLAST_ASSIGN_OR_RETURN(workload.item_seconds,
                           ReadInOr(node, path, "itemSeconds", 1.0, Bounds::kMinItemSeconds,
                                    Bounds::kMaxItemSeconds, "seconds"));
  BALLAST_RETURN_IF_ERROR(ReadCostFields(node, path, scenario_seed, workload));
  BALLAST_RETURN_IF_ERROR(ReadTransfer(node, path, workload));
  BALLAST_RETURN_IF_ERROR(ReadExec(node, path, workload));
  return workload;
}

// `changes` of one job: node name -> its speed changes within that job.
Status ReadJobChanges(const json& changes, const std::string& path,
                      const std::vector<EmulatedNode>& nodes, JobStep& job) {
  if (!changes.is_object()) {
    return jr::Expected(path, "a map of node names to speed changes", changes);
  }
  for (const auto& [key, value] : changes.items()) {
    const std::string& node = key;  // a binding a lambda can capture (clang 14)
    const std::string node_path = jr::Field(path, node);
    const bool known = std::any_of(nodes.begin(), nodes.end(),
                                   [&](const EmulatedNode& spec) { return spec.name == node; });
    if (!known) {
      return Status::InvalidAt(node_path,
                               fmt::format("no node named '{}' in the scenario", jr::Cut(node)));
    }
    BALLAST_ASSIGN_OR_RETURN(job.changes[node], cluster::SpeedChangesFromJson(
                                                    value, node_path, cluster::kSimulatedNodes));
  }
  return Status::Ok();
}

// One element of `jobs`: {name, speeds, changes, repeat}, appended `repeat` times.
Status ReadJob(const json& element, const std::string& path, const std::vector<EmulatedNode>& nodes,
               std::vector<JobStep>& jobs) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(element, path, {"name", "speeds", "changes", "repeat"}));
  JobStep job;
  BALLAST_ASSIGN_OR_RETURN(job.name, StringOr(element, path, "name", ""));
  if (const json* speeds = jr::Find(element, "speeds")) {
    const std::string speeds_path = jr::Field(path, "speeds");
    if (!speeds->is_object()) {
      return jr::Expected(speeds_path, "a map of node names to speeds", *speeds);
    }
    for (const auto& [key, value] : speeds->items()) {
      const std::string& node = key;  // a binding a lambda can capture (clang 14)
      const std::string speed_path = jr::Field(speeds_path, node);
      const bool known = std::any_of(nodes.begin(), nodes.end(),
                                     [&](const EmulatedNode& spec) { return spec.name == node; });
      if (!known) {
        return Status::InvalidAt(speed_path,
                                 fmt::format("no node named '{}' in the scenario", jr::Cut(node)));
      }
      BALLAST_ASSIGN_OR_RETURN(job.speeds[node], ReadIn(value, speed_path, Bounds::kMinSpeed,
                                                        Bounds::kMaxSpeed, "a speed"));
    }
  }
  if (const json* changes = jr::Find(element, "changes")) {
    BALLAST_RETURN_IF_ERROR(ReadJobChanges(*changes, jr::Field(path, "changes"), nodes, job));
  }
  int64_t repeat = 1;
  if (const json* count = jr::Find(element, "repeat")) {
    BALLAST_ASSIGN_OR_RETURN(repeat,
                             jr::Int(*count, jr::Field(path, "repeat"), 1, Bounds::kMaxJobs));
  }
  if (static_cast<int64_t>(jobs.size()) + repeat > Bounds::kMaxJobs) {
    return Status::InvalidAt(path, fmt::format("more than {} jobs", Bounds::kMaxJobs));
  }
  for (int64_t i = 0; i < repeat; ++i) {
    jobs.push_back(job);
    if (repeat > 1 && !job.name.empty()) jobs.back().name += fmt::format("-{}", i + 1);
    job.speeds.clear();  // a drift happens once, before the first of the repeats
  }
  return Status::Ok();
}

StatusOr<HistorySettings> ReadHistory(const json& node, const std::string& path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(node, path, {"fullTrustSamples", "maxAgeSeconds", "carry", "gapSeconds"}));
  HistorySettings history;
  fuzzy::HistoryPriorOptions& prior = history.prior;
  BALLAST_ASSIGN_OR_RETURN(prior.full_trust_samples,
                           ReadInOr(node, path, "fullTrustSamples", prior.full_trust_samples, 1e-3,
                                    Bounds::kMaxSamples, "samples"));
  BALLAST_ASSIGN_OR_RETURN(
      prior.max_age_seconds,
      ReadInOr(node, path, "maxAgeSeconds", prior.max_age_seconds, 0, Bounds::kMaxTime, "seconds"));
  BALLAST_ASSIGN_OR_RETURN(prior.carry,
                           ReadInOr(node, path, "carry", prior.carry, 0, 1, "a fraction"));
  BALLAST_ASSIGN_OR_RETURN(history.gap_seconds,
                           ReadInOr(node, path, "gapSeconds", 0.0, 0, Bounds::kMaxTime, "seconds"));
  return history;
}

// A non-empty list at `path`; Invalid otherwise.
Status ExpectList(const json& node, const std::string& path, std::string_view what) {
  if (!node.is_array() || node.empty()) {
    return jr::Expected(path, fmt::format("a non-empty list of {}", what), node);
  }
  return Status::Ok();
}

}  // namespace

const char* SplitName(Split split) { return split == Split::kCount ? "count" : "cost"; }

double SpeedAt(const EmulatedNode& node, double t) {
  double speed = node.speed;
  for (const SpeedChange& change : node.changes) {
    if (change.at <= t) speed = change.speed;
  }
  return speed;
}

ItemsAtOnceModel AtOnce(const EmulatedNode& node, const Workload& workload) {
  ItemsAtOnceModel model;
  if (!node.cores) {
    model.items = workload.concurrency > 0 ? static_cast<int>(workload.concurrency) : 1;
    return model;
  }
  const double cores = *node.cores;
  model.items = balance::ItemsAtOnce(cores, workload.concurrency);
  // A process uses at most one core: `items` of them use min(items, cores)
  // of the quota.
  model.share = std::min(static_cast<double>(model.items), cores) / cores;
  // More items than started cores: processes time-slice a core.
  if (model.items > std::ceil(cores)) model.overhead = workload.slice_overhead;
  return model;
}

namespace {

// scenario.policies: as listed, or every policy.
Status ReadPolicies(const json& root, Scenario& scenario) {
  if (const json* policies = jr::Find(root, "policies")) {
    BALLAST_RETURN_IF_ERROR(ExpectList(*policies, "policies", "policies"));
    for (size_t i = 0; i < policies->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(balance::PolicySpec spec,
                               balance::PolicyFromJson((*policies)[i], jr::Element("policies", i)));
      scenario.policies.push_back(std::move(spec));
    }
  } else {
    for (const std::string& name : balance::PolicyNames()) {
      BALLAST_ASSIGN_OR_RETURN(balance::PolicySpec spec, balance::PolicyFromJson(name, "policies"));
      scenario.policies.push_back(std::move(spec));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Scenario> ScenarioFromJson(const json& root) {
  const std::string path;
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(root, path,
                       {"name", "description", "workload", "profile", "nodes", "policies", "seed",
                        "failureDetection", "jobs", "history"}));
  Scenario scenario;
  BALLAST_ASSIGN_OR_RETURN(scenario.name, StringOr(root, path, "name", ""));
  BALLAST_ASSIGN_OR_RETURN(scenario.description, StringOr(root, path, "description", ""));
  // Read first: generated item costs default to the scenario's seed.
  if (const json* seed = jr::Find(root, "seed")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*seed, "seed", 0));
    scenario.seed = static_cast<uint64_t>(value);
  }
  BALLAST_ASSIGN_OR_RETURN(const json* workload, jr::Require(root, path, "workload"));
  BALLAST_ASSIGN_OR_RETURN(scenario.workload, ReadWorkload(*workload, "workload", scenario.seed));
  BALLAST_ASSIGN_OR_RETURN(scenario.profile, StringOr(root, path, "profile", "raspberry-pi"));
  BALLAST_ASSIGN_OR_RETURN(const json* nodes, jr::Require(root, path, "nodes"));
  BALLAST_ASSIGN_OR_RETURN(scenario.nodes,
                           cluster::NodesFromJson(*nodes, "nodes", cluster::kSimulatedNodes));
  BALLAST_RETURN_IF_ERROR(ReadPolicies(root, scenario));
  if (const json* detection = jr::Find(root, "failureDetection")) {
    BALLAST_ASSIGN_OR_RETURN(scenario.failure_detection, ReadIn(*detection, "failureDetection",
                                                                1e-6, Bounds::kMaxTime, "seconds"));
  }
  if (const json* jobs = jr::Find(root, "jobs")) {
    BALLAST_RETURN_IF_ERROR(ExpectList(*jobs, "jobs", "jobs"));
    for (size_t i = 0; i < jobs->size(); ++i) {
      BALLAST_RETURN_IF_ERROR(
          ReadJob((*jobs)[i], jr::Element("jobs", i), scenario.nodes, scenario.jobs));
    }
  }
  if (const json* history = jr::Find(root, "history")) {
    BALLAST_ASSIGN_OR_RETURN(scenario.history, ReadHistory(*history, "history"));
  }
  return scenario;
}

StatusOr<Scenario> ParseScenario(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(yaml, file_name));
  auto scenario = ScenarioFromJson(document.tree);
  if (!scenario.ok()) return document.source.Locate(scenario.status());
  if (jr::Find(jr::At(document.tree, "workload"), "itemCosts") != nullptr) {
    // Placed as an error would be, by the path of the field it is about.
    const Status placed = document.source.Locate(Status::InvalidAt(
        "workload.itemCosts",
        "the older spelling of workload.itemsFrom, still read; write itemsFrom (a list as a "
        "job's: itemsFrom.list entries {value, cost}; docs/simulator.md)"));
    scenario->warnings.push_back(placed.message());
  }
  return scenario;
}

}  // namespace ballast::sim
