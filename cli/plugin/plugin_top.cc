#include "cli/plugin/plugin_top.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/common/json_read.h"
#include "core/common/utf8.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"
#include "operator/api/weighted_job.h"

namespace ballast::cli {
namespace {

constexpr int kMinWidth = 60;
constexpr size_t kMinNameWidth = 4;
constexpr size_t kMaxNameWidth = 24;
constexpr int kMaxBar = 40;

// Seconds since the epoch of an RFC 3339 UTC time ("2026-11-26T06:16:09Z");
// nullopt when it does not parse.
std::optional<double> ParseTime(const std::string& text) {
  std::tm tm{};
  if (text.empty() || strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
    return std::nullopt;
  }
  return static_cast<double>(timegm(&tm));
}

// `text` on one line, printable, at most `width` columns (an ASCII cut; an
// object's names are ASCII, a message may not be).
std::string OneLine(const std::string& text, size_t width) {
  std::string out;
  for (const char c : ToValidUtf8(text)) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte == 0x7f ? ' ' : c;
  }
  if (out.size() <= width) return out;
  if (width <= 3) return out.substr(0, width);
  return std::string(Utf8Prefix(out, width - 3)) + "...";
}

// "[#####-----]" of `fraction` (clamped to [0, 1]) with `width` cells inside.
std::string Bar(double fraction, int width) {
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(std::floor(fraction * width));
  return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "]";
}

std::string FormatSpeed(double speed) {
  if (speed <= 0 || !std::isfinite(speed)) return "-";
  if (speed >= 1000) return fmt::format("{:.0f}", speed);
  return fmt::format("{:.3g}", speed);
}

// The condition to show: the newest by lastTransitionTime among those whose
// status is True, else among all; "Reason: message".
std::string ConditionLine(const std::vector<api::StatusCondition>& conditions) {
  const api::StatusCondition* best = nullptr;
  for (const auto& condition : conditions) {
    if (best == nullptr || (condition.status && !best->status) ||
        (condition.status == best->status &&
         condition.last_transition_time > best->last_transition_time)) {
      best = &condition;
    }
  }
  if (best == nullptr) return "";
  const std::string reason = api::ReasonName(best->reason);
  return best->message.empty() ? reason : reason + ": " + best->message;
}

// The start cost per item the policy learned (status.costModel), in cost
// units, at most the largest the fit gives (StartCostFitOptions: a thousand
// mean items); 0 while the declared costs stand.
double StartCost(const TopView& view) {
  if (!view.cost_model || view.items == 0) return 0;
  const double start = view.cost_model->start_cost;
  const double mean = view.total_cost / static_cast<double>(view.items);
  return std::isfinite(start) && start > 0 ? std::min(start, 1e3 * mean) : 0;
}

// A node's work done in the model's units: its declared cost plus the start
// cost of each of its items.
double Work(const TopNode& node, double start) {
  return node.cost + start * static_cast<double>(node.items);
}

// A node's speed in the model's units: its declared cost per busy second
// (cost_speed) scaled to the work those seconds did.
double ModelSpeed(const TopNode& node, double start) {
  if (start == 0) return node.cost_speed;
  if (node.cost <= 0 || node.cost_speed <= 0) return 0;
  return node.cost_speed * Work(node, start) / node.cost;
}

// The nodes' summed speed in the model's units, and whether every node has one.
double SummedSpeed(const std::vector<TopNode>& nodes, double start, bool* all_measured) {
  double sum = 0;
  *all_measured = !nodes.empty();
  for (const TopNode& node : nodes) {
    const double speed = ModelSpeed(node, start);
    sum += speed;
    if (speed <= 0) *all_measured = false;
  }
  return sum;
}

// The job's work in the model's units: its declared cost plus the start
// cost of every item; and what of it is done.
double JobWork(const TopView& view) {
  return view.total_cost + static_cast<double>(view.items) * StartCost(view);
}
double JobWorkDone(const TopView& view) {
  return view.completed_cost + StartCost(view) * static_cast<double>(view.completed);
}

// The job's progress by cost (with the learned start cost), in [0, 1].
double JobFraction(const TopView& view) {
  const double work = JobWork(view);
  if (view.items == 0 || !(work > 0)) return 0;
  return std::clamp(JobWorkDone(view) / work, 0.0, 1.0);
}

// "0.42 s", "12.5 ms": seconds of a small figure, three significant digits.
std::string FormatShortSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  if (seconds > 0 && seconds < 0.1) return fmt::format("{:.3g} ms", seconds * 1000);
  return fmt::format("{:.3g} s", seconds);
}

// One line of the cost model the policy splits by: what an item of declared
// cost c takes, start + c x seconds per cost unit; "" without a model.
std::string CostModelLine(const TopView& view) {
  if (!view.cost_model) return "";
  const api::CostModelStatus& model = *view.cost_model;
  const bool learned = StartCost(view) > 0;
  const std::string source = learned
                                 ? fmt::format("learned from {} reports", model.samples)
                                 : fmt::format("no start cost found in {} reports", model.samples);
  if (model.seconds_per_cost && learned && model.start_seconds) {
    return fmt::format("cost model: an item takes {} + {} x its cost ({})",
                       FormatShortSeconds(*model.start_seconds),
                       FormatShortSeconds(*model.seconds_per_cost), source);
  }
  if (model.seconds_per_cost && !learned) {
    return fmt::format("cost model: an item takes {} x its cost (declared; {})",
                       FormatShortSeconds(*model.seconds_per_cost), source);
  }
  if (learned) {
    return fmt::format("cost model: an item costs {:.3g} to start + its cost ({})", StartCost(view),
                       source);
  }
  return fmt::format("cost model: the declared costs ({})", source);
}

// The result as `ballast run` prints it ("25997 primes, checksum 0x..."),
// or its JSON when the workload's kind is not known here.
std::string ResultText(std::optional<workload::WorkloadKind> kind, const nlohmann::json& result) {
  if (kind) {
    auto parsed = workload::Result::FromJson(*kind, result);
    if (parsed.ok()) return parsed->Summary();
  }
  return result.dump();
}

// Seconds until the job's end; nullopt when nothing says.
std::optional<double> JobEta(const TopView& view) {
  if (Finished(view) || view.items == 0) return std::nullopt;
  const double left = std::max(0.0, JobWork(view) - JobWorkDone(view));
  bool all_measured = false;
  const double speed = SummedSpeed(view.nodes, StartCost(view), &all_measured);
  if (view.node_count == view.nodes.size() && all_measured && speed > 0) return left / speed;
  const double fraction = JobFraction(view);
  if (view.elapsed_s && *view.elapsed_s > 0 && fraction > 0.01)
    return *view.elapsed_s * (1 - fraction) / fraction;
  return std::nullopt;
}

// Each node's expected work: the job's work times its share of the summed
// speeds (of the weights while any node has no speed yet), in the model's
// units (the declared cost while no start cost is learned).
std::vector<double> ExpectedCost(const TopView& view) {
  const double start = StartCost(view);
  bool all_measured = false;
  const double speed = SummedSpeed(view.nodes, start, &all_measured);
  double weights = 0;
  for (const TopNode& node : view.nodes) weights += node.weight;
  std::vector<double> expected;
  // With only some nodes in the table, their share of the cost is unknown:
  // the shown nodes' own cost and speeds stand for them.
  double cost = JobWork(view);
  if (view.node_count > view.nodes.size()) {
    cost = 0;
    for (const TopNode& node : view.nodes) cost += Work(node, start);
  }
  for (const TopNode& node : view.nodes) {
    const double share = all_measured && speed > 0 ? ModelSpeed(node, start) / speed
                                                   : (weights > 0 ? node.weight / weights : 0);
    expected.push_back(cost * share);
  }
  return expected;
}

std::string HeaderLine(const TopView& view) {
  const std::string phase = view.phase ? api::JobPhaseName(*view.phase) : "Pending (no status yet)";
  std::string line = fmt::format("WeightedJob {}/{}  {}", view.ns, view.name, phase);
  if (view.workload) line += std::string("  ") + workload::WorkloadKindName(*view.workload);
  if (!view.policy.empty()) line += " (" + view.policy + ")";
  line += fmt::format("  {} workers", view.workers);
  if (view.elapsed_s) line += "  elapsed " + FormatSeconds(*view.elapsed_s);
  return line;
}

// When the status was last written: the newest time of the object's
// managedFields entries for the status subresource; nullopt when none says.
std::optional<double> StatusWrittenAt(const nlohmann::json& job) {
  std::optional<double> newest;
  for (const nlohmann::json* entry :
       json_read::ObjectsAt(json_read::At(job, "metadata"), "managedFields")) {
    if (json_read::TextAt(*entry, "subresource") != "status") continue;
    const auto time = ParseTime(json_read::TextAt(*entry, "time"));
    if (time && (!newest || *time > *newest)) newest = time;
  }
  return newest;
}

// " (later by 11s: why)" when the ETA puts the job's finish later than the
// trail's last one by more than the slack; "" otherwise. Keeps the figures
// in the trail.
std::string LaterNote(const TopView& view, double eta, TopTrail* trail) {
  if (trail == nullptr) return "";
  bool all_measured = false;
  const double speed = SummedSpeed(view.nodes, StartCost(view), &all_measured);
  const double work = JobWork(view);
  const double finish_at = view.now + eta;
  std::string note;
  const double slack = std::max(kEtaSlackSeconds, kEtaSlackFraction * eta);
  if (trail->finish_at && finish_at > *trail->finish_at + slack) {
    std::string why = "less was done than the speeds foretold";
    if (trail->source && *trail->source != view.source) {
      why = view.source == TopSource::kLive ? "live now, the status before"
                                            : "the status now, live before";
    } else if (speed > 0 && speed < 0.97 * trail->speed) {
      why = fmt::format("the nodes' speed fell {} -> {}/s", FormatSpeed(trail->speed),
                        FormatSpeed(speed));
    } else if (work > 1.001 * trail->work) {
      why = "a start cost per item was learned";
    }
    note = fmt::format(" (later by {}: {})", FormatSeconds(finish_at - *trail->finish_at), why);
  }
  trail->finish_at = finish_at;
  trail->speed = speed;
  trail->work = work;
  trail->source = view.source;
  return note;
}

std::string TopProgressLine(const TopView& view, int width, TopTrail* trail) {
  double fraction = view.phase == api::JobPhase::kSucceeded ? 1 : JobFraction(view);
  if (trail) fraction = trail->job = std::max(trail->job, fraction);
  std::string tail =
      fmt::format(" {:5.1f}% of the work  {}/{} items", 100 * fraction, view.completed, view.items);
  // Where the figures are from, before what a narrow terminal cuts.
  if (!Finished(view) && view.source == TopSource::kLive) tail += "  live";
  if (!Finished(view) && view.status_age_s && *view.status_age_s >= kStaleStatusSeconds) {
    tail += "  as of " + FormatSeconds(*view.status_age_s) + " ago";
  }
  if (auto eta = JobEta(view)) {
    // From the status write: what has passed since comes off.
    *eta = std::max(0.0, *eta - view.status_age_s.value_or(0));
    tail += "  ETA " + FormatSeconds(*eta) + LaterNote(view, *eta, trail);
  }
  if (Finished(view) && view.makespan_s) tail += "  makespan " + FormatSeconds(*view.makespan_s);
  const int bar = std::clamp(width - static_cast<int>(tail.size()) - 2, 10, kMaxBar * 2);
  return Bar(fraction, bar) + tail;
}

}  // namespace

bool Finished(const TopView& view) {
  return view.phase == api::JobPhase::kSucceeded || view.phase == api::JobPhase::kFailed;
}

std::string PhaseText(const TopView& view) {
  return view.phase ? api::JobPhaseName(*view.phase) : "";
}

StatusOr<TopView> TopViewFromJob(const nlohmann::json& job, double now) {
  BALLAST_ASSIGN_OR_RETURN(const api::WeightedJobObject object, api::WeightedJobFromJson(job));
  TopView view = TopViewOf(object, now);
  if (const auto written = StatusWrittenAt(job)) view.status_age_s = std::max(0.0, now - *written);
  return view;
}

TopView TopViewOf(const api::WeightedJobObject& object, double now) {
  const api::WeightedJobStatus& status = object.status;
  TopView view;
  view.ns = object.ns;
  view.name = object.name;
  if (const auto& spec = object.spec.spec) {
    view.workload = spec->job.workload.kind;
    view.policy = spec->job.policy.display();
  }
  view.now = now;
  view.phase = status.phase;
  view.completed = status.completed_items.value_or(0);
  view.items = status.items.value_or(0);
  view.workers = status.workers.value_or(0);
  if (const auto start = ParseTime(status.start_time.value_or(""))) {
    const auto end = ParseTime(status.completion_time.value_or(""));
    view.elapsed_s = std::max(0.0, end.value_or(now) - *start);
  }
  // An operator that writes no cost: the count stands for it.
  view.completed_cost = status.completed_cost.value_or(static_cast<double>(view.completed));
  view.total_cost = status.total_cost.value_or(static_cast<double>(view.items));
  for (const api::NodeRow& row : status.nodes.value_or(std::vector<api::NodeRow>{})) {
    view.nodes.push_back({row.name, row.weight, row.estimated_speed, row.items, row.steals,
                          row.cost.value_or(static_cast<double>(row.items)),
                          row.cost ? row.cost_speed.value_or(0) : row.estimated_speed});
    view.steals += row.steals;
  }
  view.node_count = std::max<uint64_t>(object.node_count.value_or(0), view.nodes.size());
  if (object.steals) view.steals = *object.steals;
  view.excluded = object.excluded_count.value_or(status.excluded_nodes.size());
  view.condition = ConditionLine(status.conditions);
  view.makespan_s = status.makespan_seconds;
  view.efficiency = status.efficiency;
  view.efficiency_reference = status.efficiency_reference.value_or("");
  view.limit_bound = status.limit_bound.value_or("");
  view.cost_model = status.cost_model;
  if (status.result && Finished(view)) view.result = ResultText(view.workload, *status.result);
  return view;
}

std::string FormatSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  const auto total = static_cast<int64_t>(std::llround(seconds));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

namespace {

// The table of nodes: its header and a row each, with a bar of the node's
// work against its expected share.
void NodeTable(const TopView& view, int width, TopTrail* trail, std::vector<std::string>& lines) {
  size_t name_width = kMinNameWidth;
  for (const TopNode& node : view.nodes) name_width = std::max(name_width, node.name.size());
  name_width = std::min(name_width, kMaxNameWidth);
  // NODE WEIGHT SPEED/S ITEMS STEALS [bar] PCT ETA
  const std::string head = fmt::format("{:<{}} {:>6} {:>8} {:>9} {:>6} ", "NODE", name_width,
                                       "WEIGHT", "ITEMS/S", "ITEMS", "STEALS");
  // After the bar: its two brackets, " 100%", "  " and an ETA of up to 6.
  const int bar = std::clamp(width - static_cast<int>(head.size()) - 15, 5, kMaxBar);
  lines.push_back(head + fmt::format("{:<{}} {:>4}  {}", "PROGRESS", bar + 2, "", "ETA"));
  const std::vector<double> expected = ExpectedCost(view);
  const double start = StartCost(view);
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    const TopNode& node = view.nodes[i];
    const double work = Work(node, start);
    double fraction = expected[i] > 0 ? work / expected[i] : 0;
    if (view.phase == api::JobPhase::kSucceeded) fraction = 1;
    fraction = std::clamp(fraction, 0.0, 1.0);
    if (trail) fraction = trail->nodes[node.name] = std::max(trail->nodes[node.name], fraction);
    std::string eta = "--";
    if (const double speed = ModelSpeed(node, start); !Finished(view) && speed > 0) {
      eta = FormatSeconds(std::max(0.0, expected[i] - work) / speed);
    }
    lines.push_back(fmt::format("{:<{}} {:>6g} {:>8} {:>9} {:>6} {} {:>3.0f}%  {}",
                                OneLine(node.name, name_width), name_width, node.weight,
                                FormatSpeed(node.speed), node.items, node.steals,
                                Bar(fraction, bar), std::floor(100 * fraction), eta));
  }
  if (view.nodes.empty()) lines.emplace_back("(no nodes yet: the operator has not placed workers)");
}

// A finished job's efficiency (and what it is measured against) and result.
void FinishedLines(const TopView& view, size_t columns, std::vector<std::string>& lines) {
  if (view.efficiency) {
    std::string against;
    if (view.efficiency_reference == "estimate") {
      against = " (the job's own estimate)";
    } else if (!view.efficiency_reference.empty()) {
      against = fmt::format(" (against {}{})", view.efficiency_reference,
                            view.limit_bound.empty() ? "" : ", " + view.limit_bound + "-bound");
    }
    lines.push_back(
        OneLine(fmt::format("efficiency {:.3f} of the physical limit{}", *view.efficiency, against),
                columns));
  }
  if (!view.result.empty()) lines.push_back(OneLine("result " + view.result, columns));
}

}  // namespace

std::string RenderTop(const TopView& view, int width, TopTrail* trail) {
  width = std::max(width, kMinWidth);
  const auto columns = static_cast<size_t>(width);
  std::vector<std::string> lines;
  lines.push_back(OneLine(HeaderLine(view), columns));
  lines.push_back(TopProgressLine(view, width, trail));
  if (!Finished(view) && !view.live_note.empty()) {
    lines.push_back(OneLine("from the status: " + view.live_note, columns));
  }
  if (!view.condition.empty()) lines.push_back(OneLine(view.condition, columns));
  if (const std::string model = CostModelLine(view); !model.empty()) {
    lines.push_back(OneLine(model, columns));
  }
  lines.emplace_back();
  NodeTable(view, width, trail, lines);
  if (view.node_count > view.nodes.size()) {
    lines.push_back(
        OneLine(fmt::format("{} of {} nodes shown, those furthest from their predicted speed; {} "
                            "steals in all",
                            view.nodes.size(), view.node_count, view.steals),
                columns));
  }
  if (view.excluded > 0) {
    lines.push_back(OneLine(fmt::format("{} selected node(s) carry no worker (kubectl describe wj "
                                        "{}: status.excludedNodes)",
                                        view.excluded, view.name),
                            columns));
  }
  if (Finished(view)) FinishedLines(view, columns, lines);
  std::string out;
  for (const std::string& line : lines) out += OneLine(line, columns) + "\n";
  return out;
}

}  // namespace ballast::cli
