#include "core/history/prometheus_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/common/bounded_json.h"
#include "core/common/json_read.h"

namespace ballast::history {

using nlohmann::json;
namespace jr = json_read;

namespace {

constexpr const char* kSpeedMetric = "ballast_node_speed_cost_units_per_second";
constexpr const char* kRecordedMetric = "ballast_node_recorded_speed_cost_units_per_second";
constexpr const char* kMeasuredAtMetric = "ballast_node_speed_timestamp_seconds";
constexpr const char* kThrottledMetric = "ballast_node_throttled";
// The labels that tell a job's series apart: weightedjob and job_namespace
// (core/common/metric_labels.h), and those that named the job before them,
// job and namespace, or exported_job and exported_namespace where a scrape
// without honor_labels renamed them; a window of history reaches back over
// an upgrade. Series of the current names carry the scrape's own job and
// namespace too, the same for every series of a job.
constexpr const char* kJobLabels =
    "weightedjob, job_namespace, job, exported_job, namespace, exported_namespace";

// `text` as a PromQL double-quoted string.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string Tagged(const std::string& expression, const char* stat) {
  return fmt::format("label_replace({}, \"stat\", \"{}\", \"\", \"\")", expression, stat);
}

struct Stats {
  double speed = NAN, samples = 0, age = NAN, throttled = 0;
};

// The number in a sample's value string ("1.5", "NaN", "+Inf").
StatusOr<double> SampleValue(const json& value, const std::string& path) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_string()) {
    return jr::Expected(path, "[time, \"number\"]", value);
  }
  const std::string text = value[1].get<std::string>();
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return jr::Expected(path, "[time, \"number\"]", value);
  }
  return number;
}

Status ReadSeries(const json& series, const std::string& path, std::map<std::string, Stats>& out) {
  if (!series.is_object()) return jr::Expected(path, "a series object", series);
  const json* metric = jr::Find(series, "metric");
  const json* value = jr::Find(series, "value");
  if (!metric || !metric->is_object()) {
    return jr::Expected(jr::Field(path, "metric"), "an object of labels",
                        metric ? *metric : json());
  }
  if (!value) return Status::Invalid(jr::Field(path, "value") + ": missing");
  BALLAST_ASSIGN_OR_RETURN(double number, SampleValue(*value, jr::Field(path, "value")));
  const json node = metric->value("node", json());
  const json stat = metric->value("stat", json());
  if (!node.is_string() || !stat.is_string() || node.get<std::string>().empty()) {
    return jr::Expected(jr::Field(path, "metric"), "labels node and stat", *metric);
  }
  Stats& stats = out[node.get<std::string>()];
  const std::string name = stat.get<std::string>();
  if (name == "speed") {
    stats.speed = number;
  } else if (name == "samples") {
    stats.samples = number;
  } else if (name == "age") {
    stats.age = number;
  } else if (name == "throttled") {
    stats.throttled = number;
  } else {
    return jr::Expected(jr::Field(path, "metric.stat"), "speed, samples, age or throttled", stat);
  }
  return Status::Ok();
}

// The window as PromQL's duration, at least 60 s.
std::string Window(double window_seconds) {
  return fmt::format("{:.0f}s", std::max(60.0, std::round(window_seconds)));
}

std::string Selector(const char* metric, const HistoryKey& key) {
  return fmt::format("{}{{workload={}}}", metric, Quoted(key.text()));
}

// The query from `last`, each job's last speed of each node it counts, and
// `age`, each node's age.
std::string QueryOf(const std::string& last, const std::string& window, const std::string& age) {
  const std::string relative = fmt::format("({} / on({}) group_left() avg by ({}) ({}))", last,
                                           kJobLabels, kJobLabels, last);
  return fmt::format(
      "{} or {} or {} or {}", Tagged(fmt::format("avg by (node) {}", relative), "speed"),
      Tagged(fmt::format("count by (node) ({})", last), "samples"), Tagged(age, "age"),
      Tagged(fmt::format("avg by (node) (avg_over_time({}[{}]))", kThrottledMetric, window),
             "throttled"));
}

}  // namespace

std::string HistoryQuery(const HistoryKey& key, double window_seconds) {
  const std::string window = Window(window_seconds);
  // The recorded speed is 0 where history leaves the node out: `> 0` drops
  // those from the ratios and the counts alike. The age: one series per node
  // and kind, a read that costs a fraction of the subquery's
  // (docs/operator.md).
  return QueryOf(
      fmt::format("(last_over_time({}[{}]) > 0)", Selector(kRecordedMetric, key), window), window,
      fmt::format("time() - max by (node) (max_over_time({}[{}]))",
                  Selector(kMeasuredAtMetric, key), window));
}

std::string LegacyHistoryQuery(const HistoryKey& key, double window_seconds) {
  const double window_s = std::max(60.0, std::round(window_seconds));
  const std::string window = Window(window_s);
  const std::string step = fmt::format("{:.0f}s", std::max(60.0, std::round(window_s / 20)));
  const std::string speed = Selector(kSpeedMetric, key);
  // Each step T of the subquery stands for the samples in (T - step, T]; its
  // steps are aligned to multiples of `step`, so the samples after the last
  // one belong to the step that ends now, which takes precedence. The age is
  // short by less than one step, never longer than the newest sample's.
  const std::string newest_step = fmt::format("timestamp(last_over_time({}[{}]))", speed, step);
  return QueryOf(fmt::format("(last_over_time({}[{}]) unless on({}) last_over_time({}[{}]))", speed,
                             window, kJobLabels, Selector(kRecordedMetric, key), window),
                 window,
                 fmt::format("time() - (max by (node) ({}) or max by (node) "
                             "(max_over_time({}[{}:{}])))",
                             newest_step, newest_step, window, step));
}

StatusOr<std::vector<fuzzy::NodeHistory>> ParseHistoryAnswer(std::string_view body,
                                                             const AnswerLimits& limits) {
  BALLAST_ASSIGN_OR_RETURN(json root, ParseBoundedJson(body, "the Prometheus answer",
                                                       {limits.max_bytes, limits.max_depth}));
  if (!root.is_object()) return jr::Expected("answer", "an object", root);
  const json status = root.value("status", json());
  if (status == "error") {
    return Status::Unavailable(fmt::format("Prometheus refused the query: {}: {}",
                                           jr::Shown(root.value("errorType", json("?"))),
                                           jr::Shown(root.value("error", json("?")))));
  }
  if (status != "success") return jr::Expected("status", "\"success\"", status);
  const json data = root.value("data", json());
  if (!data.is_object() || data.value("resultType", json()) != "vector") {
    return jr::Expected("data", "a vector result", data);
  }
  const json* result = jr::Find(data, "result");
  if (!result || !result->is_array()) {
    return jr::Expected("data.result", "a list of series", result ? *result : json());
  }
  if (result->size() > limits.max_series) {
    return Status::Invalid(fmt::format("data.result: {} series, more than the {} allowed",
                                       result->size(), limits.max_series));
  }
  std::map<std::string, Stats> by_node;
  for (size_t i = 0; i < result->size(); ++i) {
    BALLAST_RETURN_IF_ERROR(ReadSeries((*result)[i], jr::Element("data.result", i), by_node));
  }
  std::vector<fuzzy::NodeHistory> history;
  for (const auto& [node, stats] : by_node) {
    if (!(std::isfinite(stats.speed) && stats.speed > 0)) continue;
    if (!(std::isfinite(stats.samples) && stats.samples > 0)) continue;
    const double throttled =
        std::isfinite(stats.throttled) ? std::clamp(stats.throttled, 0.0, 1.0) : 0.0;
    // Absent (a coordinator without the timestamp gauge) or NaN: not known.
    const double age = std::isnan(stats.age) ? NAN : std::max(0.0, stats.age);
    history.push_back({node, stats.speed, stats.samples * (1 - throttled / 2), age});
  }
  return history;
}

}  // namespace ballast::history
