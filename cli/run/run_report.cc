#include "cli/run/run_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "cli/simulate/gantt_svg.h"
#include "core/common/utf8.h"
#include "core/protocol/messages.h"
#include "core/sim/simulator.h"

namespace ballast::cli {
namespace {

// The fraction of the job's cost that is done (items of growing cost count more).
// CPU seconds spent on completions another worker handed in first.
double DroppedCpuSeconds(const coordinator::JobView& view) {
  double seconds = 0;
  for (const auto& worker : view.workers) seconds += worker.dropped_cpu_s;
  return seconds;
}

double CostFraction(const coordinator::JobView& view) {
  double cost = 0;
  for (const auto& worker : view.workers) cost += worker.cost;
  return view.items > 0 ? std::clamp(cost / static_cast<double>(view.items), 0.0, 1.0) : 0;
}

// The run as a simulator result, so the simulator's Gantt renderer draws it.
sim::SimResult AsSimResult(const job::JobSpec& job, const LocalRunOutcome& outcome) {
  sim::SimResult result;
  result.policy = job.policy.display();
  result.makespan_s = outcome.makespan_s;
  result.ideal_s = outcome.ideal_s;
  result.efficiency = outcome.efficiency;
  result.messages = outcome.view.messages;
  result.moved_items = outcome.view.policy.moved_items;
  for (size_t i = 0; i < outcome.nodes.size(); ++i) {
    const NodeOutcome& node = outcome.nodes[i];
    sim::WorkerResult worker;
    worker.name = node.name;
    worker.prior_speed = node.weight;
    worker.true_speed = node.speed;
    worker.items = node.items;
    worker.leases = node.leases;
    worker.busy_s = node.busy_s;
    worker.idle_s = node.idle_s;
    double at = 0;
    for (const auto& [start, end] : outcome.view.workers[i].busy) {
      if (start > at) worker.timeline.push_back({at, start, sim::Segment::Kind::kIdle});
      worker.timeline.push_back({start, end, sim::Segment::Kind::kBusy});
      at = std::max(at, end);
    }
    if (at < outcome.makespan_s) {
      worker.timeline.push_back({at, outcome.makespan_s, sim::Segment::Kind::kIdle});
    }
    result.workers.push_back(std::move(worker));
  }
  return result;
}

std::string NodeTableSvg(const LocalRunOutcome& outcome) {
  const std::vector<std::string> headers = {"node",  "weight", "speed",  "measured",
                                            "items", "busy s", "idle s", "cuts"};
  const std::vector<double> x = {10, 170, 240, 310, 400, 500, 580, 660};
  const double row = 20;
  std::string body;
  for (size_t c = 0; c < headers.size(); ++c) {
    body +=
        fmt::format(R"(<text x="{}" y="{}" font-weight="bold">{}</text>)", x[c], row, headers[c]);
  }
  for (size_t r = 0; r < outcome.nodes.size(); ++r) {
    const NodeOutcome& n = outcome.nodes[r];
    const std::vector<std::string> cells = {EscapeXml(n.name),
                                            fmt::format("{:g}", n.weight),
                                            fmt::format("{:.3g}", n.speed),
                                            fmt::format("{:.3f}", n.measured_speed),
                                            std::to_string(n.items),
                                            fmt::format("{:.2f}", n.busy_s),
                                            fmt::format("{:.2f}", n.idle_s),
                                            std::to_string(n.cuts)};
    for (size_t c = 0; c < cells.size(); ++c) {
      body += fmt::format(R"(<text x="{}" y="{}">{}</text>)", x[c], row * (r + 2), cells[c]);
    }
  }
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="740" height="{0}" font-family="sans-serif" font-size="13"><rect width="740" height="{0}" fill="white"/>{1}</svg>)",
      row * (outcome.nodes.size() + 2), body);
}

// What the job's opt-in verification cost (docs/trust.md); nothing when off.
void PrintVerification(const LocalRunOutcome& outcome) {
  const coordinator::VerificationView& v = outcome.view.verification;
  if (v.fraction <= 0) return;
  if (v.sampled == 0) {
    fmt::print(
        "verification (fraction {:g}): none of the {} finished ranges was sampled; nothing was "
        "verified (a larger fraction samples more)\n",
        v.fraction, v.ranges);
    return;
  }
  const double share = outcome.view.items > 0 ? 100.0 * v.items / outcome.view.items : 0;
  fmt::print(
      "verification (fraction {:g}): {} of {} finished ranges sampled, recomputed on another "
      "worker and equal; cost {} items ({:.1f} % of the job), {:.2f} CPU s, not counted in the "
      "work above",
      v.fraction, v.checked, v.ranges, v.items, share, v.cpu_s);
  if (v.finished_at > outcome.makespan_s) {
    fmt::print("; the last check ended {:.2f} s after the last result",
               v.finished_at - outcome.makespan_s);
  }
  fmt::print("\n");
}

// After the efficiency, when it was capped at 1: why.
std::string CappedNote(const LocalRunOutcome& outcome) {
  if (!outcome.efficiency_capped) return "";
  return fmt::format(
      " (capped at 1: the workers' CPU seconds say more work than {:.3g} cores could do in the "
      "makespan; {} reports had their seconds cut)",
      outcome.total_speed, outcome.view.clamped_reports);
}

// Where the workers' logs are; the node of each file whose name is not
// "<node>.log" (a name too long for a file name).
void PrintLogs(const LocalRunOutcome& outcome) {
  fmt::print("workers' logs in {}, <node>.log each\n", outcome.log_dir);
  for (const NodeOutcome& n : outcome.nodes) {
    if (n.log_file != n.name + ".log") fmt::print("  node {}: {}\n", n.name, n.log_file);
  }
}

nlohmann::json VerificationJson(const coordinator::VerificationView& v) {
  if (v.fraction <= 0) return nullptr;
  return {{"fraction", v.fraction},         {"ranges", v.ranges},  {"sampled", v.sampled},
          {"checked", v.checked},           {"items", v.items},    {"cpu_s", v.cpu_s},
          {"finished_at_s", v.finished_at}, {"failure", v.failure}};
}

}  // namespace

void PrintWeights(const job::ClusterSpec& cluster, const fuzzy::WeightResult& weights) {
  fmt::print("{:<18} {:>7} {:>7} {:>7}\n", "NODE", "SCORE", "WEIGHT", "SPEED");
  for (size_t i = 0; i < weights.nodes.size(); ++i) {
    fmt::print("{:<18} {:>7.3f} {:>7g} {:>7.3g}\n", weights.nodes[i].name, weights.nodes[i].score,
               weights.nodes[i].weight, cluster.nodes[i].speed);
  }
  for (const auto& warning : weights.warnings) fmt::print("warning: {}\n", warning);
}

void PrintRunTable(const job::JobSpec& job, const LocalRunOutcome& outcome) {
  fmt::print("\n{:<18} {:>6} {:>6} {:>9} {:>10} {:>8} {:>8} {:>7} {:>5} {:>9}\n", "NODE", "WEIGHT",
             "SPEED", "MEASURED", "ITEMS", "BUSY_S", "IDLE_S", "LEASES", "CUTS", "RESTARTS");
  for (const NodeOutcome& n : outcome.nodes) {
    fmt::print("{:<18} {:>6g} {:>6.3g} {:>9.3f} {:>10} {:>8.2f} {:>8.2f} {:>7} {:>5} {:>9}\n",
               n.name, n.weight, n.speed, n.measured_speed, n.items, n.busy_s, n.idle_s, n.leases,
               n.cuts, n.restarts);
  }
  bool elastic = false;
  for (const NodeOutcome& n : outcome.nodes) {
    if (n.joined_s) {
      elastic = true;
      if (*n.joined_s < 0) {
        fmt::print("{} never joined: the job ended before its joinAt\n", n.name);
      } else {
        fmt::print("{} joined the job at {:.2f} s\n", n.name, *n.joined_s);
      }
    }
    if (n.left_s) {
      elastic = true;
      fmt::print("{} was drained at {:.2f} s\n", n.name, *n.left_s);
    }
  }
  const auto& view = outcome.view;
  const std::string bound =
      outcome.ideal_bound == balance::LimitBound::kLargestItem
          ? fmt::format(
                "the largest item on the fastest node: it cannot be split; work {:.2f} "
                "core-s / {:.3g} cores is less",
                outcome.work_s, outcome.total_speed)
          : fmt::format("work {:.2f} core-s / {:.3g} cores{}", outcome.work_s, outcome.total_speed,
                        elastic ? ", each while its node was in the job" : "");
  fmt::print("\npolicy {}: makespan {:.2f} s, ideal {:.2f} s ({}), efficiency {:.3f}{}\n",
             job.policy.display(), outcome.makespan_s, outcome.ideal_s, bound, outcome.efficiency,
             CappedNote(outcome));
  fmt::print(
      "messages {}, moved items {}, steals {} (backups {}), rebalances {}, dropped duplicates {} "
      "({:.2f} core-s, not in the work)\n",
      view.messages, view.policy.moved_items, view.policy.steals, view.policy.backups,
      view.policy.rebalances, view.dropped_completions, DroppedCpuSeconds(view));
  PrintVerification(outcome);
  fmt::print("speeds emulated by {}\n", outcome.speed_method);
  fmt::print("processes: {}\n", DescribeContainment(outcome.containment));
  PrintLogs(outcome);
  // What a command wrote is in it: its control characters written out.
  fmt::print("result: {}\n", EscapeControls(view.result.Summary(workload::NamesOf(job.workload))));
}

nlohmann::json RunJson(const job::JobSpec& job, const LocalRunOutcome& outcome) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeOutcome& n : outcome.nodes) {
    nodes.push_back({{"name", n.name},
                     {"score", n.score},
                     {"weight", n.weight},
                     {"speed", n.speed},
                     {"measured_speed", n.measured_speed},
                     {"items", n.items},
                     {"busy_s", n.busy_s},
                     {"idle_s", n.idle_s},
                     {"leases", n.leases},
                     {"reports", n.reports},
                     {"cuts", n.cuts},
                     {"restarts", n.restarts},
                     {"log", n.log_file}});
    if (n.joined_s) nodes.back()["joined_s"] = *n.joined_s;
    if (n.left_s) nodes.back()["left_s"] = *n.left_s;
  }
  const auto& view = outcome.view;
  return {{"job", job.name},
          {"policy", job.policy.display()},
          {"items", view.items},
          {"result", view.result.ToJson()},
          {"summary", view.result.Summary(workload::NamesOf(job.workload))},
          {"failed_values", job.workload.item_values != nullptr
                                ? view.result.FailedValues(*job.workload.item_values, 100)
                                : std::vector<std::string>{}},
          {"makespan_s", outcome.makespan_s},
          {"ideal_s", outcome.ideal_s},
          {"ideal_bound", balance::LimitBoundName(outcome.ideal_bound)},
          {"work_s", outcome.work_s},
          {"total_speed", outcome.total_speed},
          {"efficiency", outcome.efficiency},
          {"efficiency_capped", outcome.efficiency_capped},
          {"messages", view.messages},
          {"moved_items", view.policy.moved_items},
          {"steals", view.policy.steals},
          {"backups", view.policy.backups},
          {"dropped_completions", view.dropped_completions},
          {"dropped_cpu_s", DroppedCpuSeconds(view)},
          {"speed_method", outcome.speed_method},
          {"log_dir", outcome.log_dir},
          {"verification", VerificationJson(view.verification)},
          {"processes", ContainmentJson(outcome.containment)},
          {"nodes", nodes}};
}

std::string DescribeContainment(const ContainmentReport& report) {
  // What left the run's cgroups (or sessions) and was found all the same.
  const std::string escaped =
      report.escaped == 0
          ? ""
          : fmt::format(
                "; {} had left its {} and {} found (as the run's orphans, or in its CPU-quota "
                "groups) and killed",
                report.escaped, report.by_cgroup ? "cgroups" : "workers' sessions",
                report.escaped == 1 ? "was" : "were");
  if (!report.by_cgroup) {
    return fmt::format(
        "the workers are stopped and {} processes left in their sessions were killed{}; without "
        "cgroups ({}) a process that started a session of its own runs on until the run ends, "
        "and one handed to a process outside the run cannot be found, and may still run",
        report.killed, escaped, report.where);
  }
  if (report.clean()) {
    return fmt::format(
        "the run's processes are stopped: {} were still running at its end and were killed with "
        "its cgroup (cgroup.kill){}; none remain, and its cgroups are removed",
        report.killed, escaped);
  }
  std::string text = fmt::format(
      "{}: {} were still running at its end and were killed with its cgroup {} (cgroup.kill){}",
      report.remaining > 0 ? "the run's processes are not all stopped"
                           : "the run's processes are stopped",
      report.killed, report.where, escaped);
  text += report.remaining > 0 ? fmt::format("; {} still running after the kill", report.remaining)
                               : std::string("; none remain");
  if (!report.groups_left.empty()) {
    text += fmt::format("; {} of its cgroups could not be removed:", report.groups_left.size());
    for (size_t i = 0; i < report.groups_left.size(); ++i) {
      const LeftGroup& left = report.groups_left[i];
      text += fmt::format("{} {} ({})", i == 0 ? "" : ",", left.dir, left.why);
    }
  }
  return text;
}

nlohmann::json ContainmentJson(const ContainmentReport& report) {
  nlohmann::json left = nlohmann::json::array();
  for (const LeftGroup& group : report.groups_left) {
    left.push_back({{"cgroup", group.dir}, {"why", group.why}});
  }
  return {{"contained_by", report.by_cgroup ? "cgroup" : "session"},
          {"where", report.where},
          {"killed", report.killed},
          {"escaped", report.escaped},
          {"remaining", report.by_cgroup ? nlohmann::json(report.remaining) : nlohmann::json()},
          {"cgroups_left", report.groups_left.size()},
          {"left_cgroups", left},
          {"clean", report.clean()}};
}

std::string EnergyHtml(const health::JobEnergy& energy) {
  std::string rows;
  for (const health::NodeEnergy& n : energy.nodes) {
    const std::string dash = "-";
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        EscapeXml(n.node), n.known ? fmt::format("{:g}{}", n.idle_w, n.estimate ? "*" : "") : dash,
        n.known ? fmt::format("{:g}{}", n.load_w, n.estimate ? "*" : "") : dash, n.busy_seconds,
        n.idle_seconds, n.known ? fmt::format("{:.1f}", n.joules) : dash, n.items,
        n.known && n.items > 0 ? fmt::format("{:.4g}", n.joules / static_cast<double>(n.items))
                               : dash);
  }
  return fmt::format(
      "<h2>Energy</h2>\n<p>Estimated: {} (each board's idle and load power over its idle and "
      "busy time in the run{}).</p>\n"
      "<table>\n<tr><th>node</th><th>idle W</th><th>load W</th><th>busy s</th><th>idle s</th>"
      "<th>energy J</th><th>items</th><th>J/item</th></tr>\n{}</table>",
      EscapeXml(health::DescribeEnergy(energy)),
      energy.estimate ? "; * an estimate, no published figure" : "", rows);
}

std::string RenderRunReport(const job::JobSpec& job, const LocalRunOutcome& outcome,
                            const health::JobEnergy& energy) {
  const std::string title = fmt::format("{} — {}", job.name, job.policy.display());
  const std::string gantt = RenderGantt(title, {AsSimResult(job, outcome)});
  return fmt::format(
      R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Ballast run: {0}</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} p {{ max-width: 60em; }}</style></head>
<body>
<h1>Ballast run: {0}</h1>
<p>Makespan {1:.2f} s against a physical limit of {2:.2f} s (efficiency {3:.3f}{8}); result: {4}.
Busy time is green, idle time grey; speeds emulated by {5}.</p>
{6}
<h2>Nodes</h2>
{7}
{9}
</body></html>
)",
      EscapeXml(title), outcome.makespan_s, outcome.ideal_s, outcome.efficiency,
      EscapeXml(outcome.view.result.Summary(workload::NamesOf(job.workload))),
      EscapeXml(outcome.speed_method), gantt, NodeTableSvg(outcome), EscapeXml(CappedNote(outcome)),
      EnergyHtml(energy));
}

ProgressPrinter::ProgressPrinter(std::FILE* out)
    : out_(out), tty_(isatty(fileno(out)) != 0), last_(std::chrono::steady_clock::now()) {}

void ProgressPrinter::Update(const coordinator::JobView& view) {
  const auto now = std::chrono::steady_clock::now();
  const double fraction = CostFraction(view);
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  if (finished_) return;
  if (!tty_ && drawn_ && elapsed < 5 && !view.done) return;
  if (tty_ && drawn_ && elapsed < 0.1 && !view.done) return;
  finished_ = view.done;
  last_ = now;
  drawn_ = true;
  // ETA from the elapsed job time and the share of the cost done.
  double job_elapsed = 0;
  for (const auto& worker : view.workers) job_elapsed = std::max(job_elapsed, worker.last_contact);
  const std::string eta = fraction > 0.01 && !view.done
                              ? fmt::format("ETA {:.0f} s", job_elapsed * (1 - fraction) / fraction)
                              : std::string("ETA --");
  if (tty_) {
    const int width = 30;
    const int filled = static_cast<int>(fraction * width);
    fmt::print(out_, "\r[{}{}] {:5.1f}%  {}/{} items  {}   ", std::string(filled, '#'),
               std::string(width - filled, '-'), 100 * fraction, view.completed, view.items, eta);
  } else {
    fmt::print(out_, "progress {:.1f}% items={}/{} {}\n", 100 * fraction, view.completed,
               view.items, eta);
  }
  std::fflush(out_);
}

void ProgressPrinter::Finish() {
  if (tty_ && drawn_) fmt::print(out_, "\n");
}

}  // namespace ballast::cli
