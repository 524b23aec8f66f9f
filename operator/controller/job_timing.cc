#include "operator/controller/job_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ballast::controller {

namespace {

double Rounded(double value) { return std::round(value * 1000) / 1000; }

}  // namespace

JobTiming ComputeTiming(const TimingMoments& moments, double ideal_s) {
  JobTiming timing;
  const double origin = moments.created.value_or(moments.started);
  timing.end_to_end_s = std::max(0.0, moments.finished - origin);
  // A resumed job computed in sessions, and only the last one's first report
  // is known: its compute from there would be a part of the job's against an
  // ideal of the whole (computeEfficiency above 1). It gets end to end only.
  if (!moments.first_report || moments.resumed) return timing;
  const double first = std::clamp(*moments.first_report, origin, moments.finished);
  timing.compute_s = moments.finished - first;
  if (ideal_s > 0 && *timing.compute_s > 0) timing.compute_efficiency = ideal_s / *timing.compute_s;
  timing.first_node = moments.first_node;
  // Without the creation time the session's start is the origin: nothing
  // can be said of the operator or the wait for nodes.
  const bool created = moments.created.has_value();
  const struct {
    std::optional<double> at;
    const char* key;
    const char* what;
  } ends[] = {
      {created ? moments.accepted : std::nullopt, "operatorSeconds", "operator"},
      {created ? std::optional(moments.started) : std::nullopt, "waitingForNodesSeconds",
       "waiting for nodes"},
      {moments.scheduled, "podSchedulingSeconds", "pod scheduling"},
      {moments.sandbox_ready, "podStartSeconds", "pod start"},
      {moments.init_finished, "initContainersSeconds", "init containers"},
      {moments.container_started, "containerStartSeconds", "container start"},
      {first, "workerStartSeconds", "worker start"},
  };
  double previous = origin;
  for (const auto& end : ends) {
    if (!end.at) continue;
    const double at = std::clamp(*end.at, previous, first);
    timing.before_first_report.push_back({end.key, end.what, at - previous});
    previous = at;
  }
  return timing;
}

nlohmann::json TimingToJson(const JobTiming& timing) {
  nlohmann::json out = {{"endToEndSeconds", Rounded(timing.end_to_end_s)}};
  if (timing.compute_s) out["computeSeconds"] = Rounded(*timing.compute_s);
  if (timing.compute_efficiency) out["computeEfficiency"] = Rounded(*timing.compute_efficiency);
  if (!timing.first_node.empty()) out["firstReportNode"] = timing.first_node;
  if (!timing.before_first_report.empty()) {
    nlohmann::json parts = nlohmann::json::object();
    for (const TimingPart& part : timing.before_first_report) {
      parts[part.key] = Rounded(part.seconds);
    }
    out["beforeFirstReport"] = std::move(parts);
  }
  return out;
}

std::string TimingSummary(const JobTiming& timing) {
  std::string text = fmt::format("{:.1f} s end to end", timing.end_to_end_s);
  if (!timing.compute_s) return text;
  text += fmt::format(", {:.1f} s computing", *timing.compute_s);
  const auto longest = std::max_element(
      timing.before_first_report.begin(), timing.before_first_report.end(),
      [](const TimingPart& a, const TimingPart& b) { return a.seconds < b.seconds; });
  if (longest != timing.before_first_report.end() && longest->seconds >= 0.05) {
    text += fmt::format("; before it mostly {} {:.1f} s", longest->what, longest->seconds);
  }
  return text;
}

}  // namespace ballast::controller
