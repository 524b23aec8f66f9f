#include "cli/plugin/plugin_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "cli/plugin/plugin_top.h"
#include "cli/simulate/gantt_svg.h"
#include "core/common/utf8.h"
#include "core/sim/simulator.h"
#include "operator/api/weighted_job.h"

namespace ballast::cli {
namespace {

std::string Figure(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

// A node's busy seconds as the status lets us say: items over estimated
// speed; 0 for a node without a speed.
double BusySeconds(const api::NodeRow& row) {
  if (row.estimated_speed <= 0 || !std::isfinite(row.estimated_speed)) return 0;
  return static_cast<double>(row.items) / row.estimated_speed;
}

sim::SimResult AsSimResult(const api::WeightedJobStatus& status, const std::string& policy) {
  sim::SimResult result;
  result.policy = policy;
  result.makespan_s = status.makespan_seconds.value_or(0);
  result.ideal_s = status.ideal_seconds.value_or(0);
  result.efficiency = status.efficiency.value_or(0);
  for (const api::NodeRow& row : status.nodes.value_or(std::vector<api::NodeRow>{})) {
    sim::WorkerResult worker;
    worker.name = row.name;
    worker.prior_speed = row.weight;
    worker.items = row.items;
    const double busy = std::min(BusySeconds(row), std::max(result.makespan_s, 0.0));
    worker.busy_s = busy;
    worker.idle_s = std::max(0.0, result.makespan_s - busy);
    if (busy > 0) worker.timeline.push_back({0, busy, sim::Segment::Kind::kBusy});
    if (result.makespan_s > busy) {
      worker.timeline.push_back({busy, result.makespan_s, sim::Segment::Kind::kIdle});
    }
    result.steals += row.steals;
    result.workers.push_back(std::move(worker));
  }
  return result;
}

// A node's estimated energy per item it finished, "-" without either.
std::string JoulesPerItem(const api::NodeRow& row) {
  if (!row.energy_joules || row.items == 0) return "-";
  return fmt::format("{:.4g}", *row.energy_joules / static_cast<double>(row.items));
}

std::string NodeTable(const api::WeightedJobStatus& status) {
  std::string rows;
  for (const api::NodeRow& row : status.nodes.value_or(std::vector<api::NodeRow>{})) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{:g}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        EscapeXml(row.name), row.weight, EscapeXml(row.prior ? row.prior->source : "-"),
        fmt::format("{:.4g}", row.estimated_speed), Figure(row.measured_speed, "{:.4g}"), row.items,
        row.steals, fmt::format("{:.2f}", BusySeconds(row)),
        Figure(row.duplicate_seconds, "{:.2f}"),
        row.prior_error ? fmt::format("{:+.1f}%", 100 * *row.prior_error) : std::string("-"),
        Figure(row.baseline_ratio, "{:.3f}"), Figure(row.energy_joules, "{:.1f}"),
        JoulesPerItem(row));
  }
  return fmt::format(
      "<table>\n<tr><th>node</th><th>weight</th><th>prior</th><th>items/s</th>"
      "<th>measured</th><th>items</th><th>steals</th><th>busy s</th><th>dropped s</th>"
      "<th>prior error</th>"
      "<th>of baseline</th><th>energy J</th><th>J/item</th></tr>\n"
      "{}</table>",
      rows);
}

// status.energy's summary line, or why there is none.
std::string EnergyLine(const api::WeightedJobStatus& status) {
  if (status.energy && status.energy->is_object()) {
    const auto summary = status.energy->find("summary");
    if (summary != status.energy->end() && summary->is_string()) {
      return "Estimated energy: " + summary->get<std::string>() +
             " (each board's idle and load power over its idle and busy time).";
    }
  }
  return "No energy estimate: the operator states one for a job that succeeds.";
}

}  // namespace

StatusOr<std::string> RenderJobReport(const nlohmann::json& job) {
  BALLAST_ASSIGN_OR_RETURN(const api::WeightedJobObject object, api::WeightedJobFromJson(job));
  const TopView view = TopViewOf(object, 0);
  if (!Finished(view)) {
    return Status(
        StatusCode::kTerminal,
        fmt::format("WeightedJob {}/{} is {}: a report needs a finished job (Succeeded "
                    "or Failed); `kubectl ballast top {}` shows a running one",
                    view.ns, view.name, view.phase ? PhaseText(view) : "not started", view.name));
  }
  const api::WeightedJobStatus& status = object.status;
  const std::string policy = view.policy.empty() ? "adaptive" : view.policy;
  const std::string title = fmt::format("{}/{} — {}", view.ns, view.name, policy);
  const std::string gantt = RenderGantt(title, {AsSimResult(status, policy)});
  std::string shown;
  if (view.node_count > view.nodes.size()) {
    shown = fmt::format(
        " The status keeps {} of the job's {} nodes: those furthest from their "
        "predicted speed.",
        view.nodes.size(), view.node_count);
  }
  return fmt::format(
      R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Ballast job: {0}</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} p {{ max-width: 60em; }}
td, th {{ padding: 0.2em 0.8em; text-align: right; }} td:first-child, th:first-child {{ text-align: left; }}</style></head>
<body>
<h1>Ballast job: {0}</h1>
<p>{1}: makespan {2} s against a physical limit of {3} s (efficiency {4}, against {5}; the
job's own estimate {15});
{6} items, {7} steals; started {8}, finished {9}.</p>
<p>Result: <code>{10}</code></p>
<p>{16}</p>
<p>{11}</p>
{12}
<p>Each node's busy time is its items over its estimated speed, drawn from the start of the
makespan: the job's status keeps per-node totals, not the timeline of its leases.{13}</p>
<h2>Nodes</h2>
{14}
</body></html>
)",
      EscapeXml(title), EscapeXml(PhaseText(view)), Figure(status.makespan_seconds, "{:.2f}"),
      Figure(status.ideal_seconds, "{:.2f}"), Figure(status.efficiency, "{:.3f}"),
      EscapeXml(status.efficiency_reference.value_or("-")), view.items, view.steals,
      EscapeXml(status.start_time.value_or("-")), EscapeXml(status.completion_time.value_or("-")),
      EscapeXml(ToValidUtf8(view.result.empty() ? "-" : view.result)),
      EscapeXml(ToValidUtf8(view.condition)), gantt, shown, NodeTable(status),
      Figure(status.estimated_efficiency, "{:.3f}"), EscapeXml(ToValidUtf8(EnergyLine(status))));
}

}  // namespace ballast::cli
