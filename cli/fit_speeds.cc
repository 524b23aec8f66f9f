#include "cli/fit_speeds.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <set>

#include "cli/cli_common.h"
#include "core/common/duration.h"
#include "core/common/names.h"
#include "core/fuzzy/fit.h"
#include "core/history/history_key.h"
#include "core/workload/workload.h"
#include "net/prometheus_history_source.h"

namespace ballast::cli {

namespace {

constexpr size_t kNamesShown = 10;  // a warning names this many nodes, then counts

// "a, b, c" or "a, b, ... and 12 more"; a name that is not a node's name
// (Prometheus's labels are anyone's text) quoted and shortened.
std::string NameList(const std::vector<std::string>& names) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
    const bool plain = CheckName(names[i], NameKind::kDnsSubdomain).ok();
    shown.push_back(plain ? names[i] : QuoteForMessage(names[i]));
  }
  if (names.size() <= kNamesShown) return fmt::format("{}", fmt::join(shown, ", "));
  return fmt::format("{} and {} more", fmt::join(shown, ", "), names.size() - kNamesShown);
}

// The history key of the workload kind --workload names; Invalid naming the flag.
StatusOr<history::HistoryKey> KindKey(const std::string& workload) {
  std::vector<std::string> kinds;
  for (auto kind : {workload::WorkloadKind::kPrimes, workload::WorkloadKind::kMatmul,
                    workload::WorkloadKind::kExec}) {
    kinds.emplace_back(workload::WorkloadKindName(kind));
    if (kinds.back() == workload) return history::HistoryKey(kind);
  }
  if (workload.empty()) {
    return Status::Invalid(fmt::format(
        "--workload: required with --fit URL (Prometheus keeps each workload kind's speeds "
        "apart): one of {}",
        fmt::join(kinds, ", ")));
  }
  return Status::Invalid(
      fmt::format("--workload: expected one of {}, got \"{}\"", fmt::join(kinds, ", "), workload));
}

// The Prometheus of options.source, asked with the options' window and timeout.
StatusOr<std::unique_ptr<net::PrometheusHistory>> Connect(const FitSpeedsOptions& options,
                                                          double window_s) {
  if (!(options.timeout_s > 0 && options.timeout_s <= 60)) {
    return Status::Invalid(
        fmt::format("--timeout: expected seconds in (0, 60], got {}", options.timeout_s));
  }
  net::PrometheusHistoryOptions prometheus;
  prometheus.url = options.source;
  prometheus.flag = "--fit";
  prometheus.window_seconds = window_s;
  prometheus.timeout = std::chrono::milliseconds(std::llround(options.timeout_s * 1000));
  return net::PrometheusHistory::Create(std::move(prometheus));
}

StatusOr<FitSpeeds> PrometheusSpeeds(const FitSpeedsOptions& options,
                                     const std::vector<fuzzy::NodeFacts>& nodes) {
  BALLAST_ASSIGN_OR_RETURN(history::HistoryKey key, KindKey(options.workload));
  BALLAST_ASSIGN_OR_RETURN(double window_s, FitWindowSeconds(options.window));
  BALLAST_ASSIGN_OR_RETURN(auto prometheus, Connect(options, window_s));
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const std::string asked = fmt::format("--fit {} (workload {}, --window {})", options.source, key,
                                        FormatDuration(window_s));
  auto history = prometheus->History(key, static_cast<double>(now.time_since_epoch().count()));
  if (!history.ok()) {
    return Status::Unavailable(
        fmt::format("{}: Prometheus gave no speeds: {}", asked, history.status().message()));
  }
  auto speeds = SelectNodeSpeeds(
      *history, nodes,
      fmt::format("Prometheus at {}, workload {}, the {} up to {:%Y-%m-%dT%H:%M:%SZ} (the "
                  "operator's history query)",
                  options.source, key, FormatDuration(window_s), now));
  if (!speeds.ok()) {
    return Status(speeds.status().code(), fmt::format("{}: {}", asked, speeds.status().message()));
  }
  return speeds;
}

StatusOr<FitSpeeds> FileSpeeds(const FitSpeedsOptions& options) {
  if (!options.url_flags.empty()) {
    return Status::Invalid(fmt::format(
        "{}: only with --fit URL (Prometheus); --fit {} is a speeds file, fitted as it is",
        options.url_flags.front(), options.source));
  }
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(options.source));
  BALLAST_ASSIGN_OR_RETURN(auto speeds, fuzzy::ParseSpeeds(text, options.source));
  return FitSpeeds{std::move(speeds), {}, "the file " + options.source, {}};
}

// The error of fewer than two nodes with a speed, naming them and the nodes
// of the answer --nodes does not list (a --nodes of another cluster?).
Status TooFewNodes(const std::map<std::string, double>& speeds,
                   const std::vector<std::string>& unknown, const HistoryWording& wording) {
  std::vector<std::string> measured;
  for (const auto& [node, speed] : speeds) measured.push_back(node);
  std::string message =
      fmt::format("{} node(s) of {} have a speed{}{}", measured.size(), wording.nodes,
                  measured.empty() ? "" : ": ", NameList(measured));
  if (!unknown.empty()) {
    message += fmt::format(" (and {} node(s) not in {}: {})", unknown.size(), wording.nodes,
                           NameList(unknown));
  }
  return Status::Unavailable(message +
                             "; the fit needs two or more (run the workload on more nodes, or "
                             "widen --window)");
}

}  // namespace

double DefaultFitWindowSeconds() { return net::PrometheusHistoryOptions{}.window_seconds; }

StatusOr<double> FitWindowSeconds(const std::string& window) {
  if (window.empty()) return DefaultFitWindowSeconds();
  BALLAST_ASSIGN_OR_RETURN(double seconds, ParseDuration(window, "--window"));
  if (seconds < 60) {
    return Status::Invalid(fmt::format(
        "--window: expected at least 60 s (the history query's least), got {}", window));
  }
  return seconds;
}

bool IsPrometheusUrl(const std::string& source) {
  return source.starts_with("http://") || source.starts_with("https://");
}

StatusOr<FitSpeeds> SelectNodeSpeeds(const std::vector<fuzzy::NodeHistory>& history,
                                     const std::vector<fuzzy::NodeFacts>& nodes,
                                     const std::string& origin, const HistoryWording& wording) {
  std::set<std::string> unmeasured;
  for (const fuzzy::NodeFacts& node : nodes) unmeasured.insert(node.name);
  FitSpeeds out{{}, {}, origin, {}};
  std::vector<std::string> unknown;
  for (const fuzzy::NodeHistory& node : history) {
    if (unmeasured.erase(node.node) == 0) {
      unknown.push_back(node.node);
      continue;
    }
    out.speeds[node.node] = node.speed;
    out.samples[node.node] = node.samples;
  }
  if (!unknown.empty()) {
    out.warnings.push_back(
        fmt::format("{} has speeds of {} node(s) not in {}, left out of the fit: {}",
                    wording.holder, unknown.size(), wording.nodes, NameList(unknown)));
  }
  const std::vector<std::string> missing(unmeasured.begin(), unmeasured.end());
  if (!missing.empty()) {
    out.warnings.push_back(
        fmt::format("{} node(s) of {} have no speed in {}, left out of the fit: {}", missing.size(),
                    wording.nodes, wording.holder, NameList(missing)));
  }
  if (out.speeds.size() < 2) return TooFewNodes(out.speeds, unknown, wording);
  return out;
}

StatusOr<FitSpeeds> LoadFitSpeeds(const FitSpeedsOptions& options,
                                  const std::vector<fuzzy::NodeFacts>& nodes) {
  return IsPrometheusUrl(options.source) ? PrometheusSpeeds(options, nodes) : FileSpeeds(options);
}

}  // namespace ballast::cli
