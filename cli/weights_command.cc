// ballast weights: the fuzzy performance weights of a set of nodes under a
// WeightProfile (core/fuzzy), printed as a table or as JSON.
//
// Thread-safety: runs once on the main thread.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/fit_speeds.h"
#include "cli/weights.h"
#include "core/common/duration.h"
#include "core/common/utf8.h"
#include "core/fuzzy/fit.h"
#include "core/fuzzy/model.h"
#include "core/fuzzy/profile.h"
#include "core/probe/node_marks.h"

namespace ballast::cli {
namespace {

struct WeightsOptions {
  std::string profile = "raspberry-pi";
  std::string nodes;
  std::string output = "table";
  FitSpeedsOptions fit;  // --fit and its flags: fit the profile's ranks to measured speeds
};

// Returns the profile in file `spec` if such a file exists, else the built-in
// profile named `spec`; NotFound when neither exists, Invalid for a bad file.
StatusOr<fuzzy::Profile> LoadProfile(const std::string& spec) {
  std::error_code error;
  if (std::filesystem::is_regular_file(spec, error)) {
    BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(spec));
    return fuzzy::ParseProfile(text, spec);
  }
  auto builtin = fuzzy::BuiltinProfile(spec);
  if (builtin.ok() || builtin.status().code() != StatusCode::kNotFound) return builtin;
  return Status::NotFound(
      fmt::format("{}: no such profile file, and no built-in profile of that "
                  "name (built-in: {})",
                  spec, fmt::join(fuzzy::BuiltinProfileNames(), ", ")));
}

// Returns the text of `path`, or of standard input when path is "-"; either
// within kMaxUserFileBytes (Invalid past it: a `yes |` is no nodes file).
StatusOr<std::string> ReadInput(const std::string& path) {
  if (path != "-") return ReadFile(path);
  std::string text;
  char buffer[16 << 10];
  while (text.size() <= kMaxUserFileBytes && std::cin) {
    std::cin.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<size_t>(std::cin.gcount()));
  }
  if (std::cin.bad()) return Status::Unavailable("<stdin>: read failed");
  if (text.size() > kMaxUserFileBytes) {
    return Status::Invalid(fmt::format("<stdin>: larger than {} bytes", kMaxUserFileBytes));
  }
  return text;
}

// Node name -> the labels the node probe set (core/probe/node_marks.h).
using ProbeMarks = std::map<std::string, std::set<std::string>>;

// Whether `node`'s value of `criterion` came from a label the probe set.
bool FromProbe(const ProbeMarks& marks, const std::string& node,
               const fuzzy::Criterion& criterion) {
  const auto it = marks.find(node);
  return it != marks.end() && it->second.count(criterion.label) != 0;
}

std::string FormatWeight(double weight, fuzzy::Rounding rounding) {
  if (rounding == fuzzy::Rounding::kNone) return fmt::format("{:.3f}", weight);
  return fmt::format("{}", static_cast<int64_t>(weight));
}

// One row per node; numbers right-aligned, names left-aligned.
std::string FormatTable(const fuzzy::Profile& profile, const fuzzy::WeightResult& result,
                        const ProbeMarks& marks) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"NODE", "SCORE", "RELATIVE", "WEIGHT"};
  for (const fuzzy::Criterion& criterion : profile.criteria) header.push_back(criterion.name);
  rows.push_back(header);
  for (const fuzzy::NodeWeight& node : result.nodes) {
    std::vector<std::string> row = {node.name, fmt::format("{:.3f}", node.score),
                                    fmt::format("{:.3f}", node.relative),
                                    FormatWeight(node.weight, profile.rounding)};
    for (size_t c = 0; c < node.criteria.size(); ++c) {
      const fuzzy::CriterionResult& criterion = node.criteria[c];
      const bool probed = FromProbe(marks, node.name, profile.criteria[c]);
      row.push_back(
          fmt::format("{:.3f} ({}){}", criterion.membership, criterion.value, probed ? "*" : ""));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out = fmt::format("profile {} (rounding {}); criterion columns: membership (value)\n",
                                profile.name, fuzzy::RoundingName(profile.rounding));
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool numeric = c >= 1 && c <= 3;  // SCORE, RELATIVE, WEIGHT
      line += numeric ? fmt::format("{:>{}}", row[c], widths[c])
                      : fmt::format("{:<{}}", row[c], widths[c]);
      if (c + 1 < row.size()) line += "  ";
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  if (!marks.empty()) {
    out +=
        "* from a label the node probe set (annotation ballast.io/probe-labels; docs/probe.md)\n";
  }
  return out;
}

std::string FormatJson(const fuzzy::Profile& profile, const fuzzy::WeightResult& result,
                       const ProbeMarks& marks) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const fuzzy::NodeWeight& node : result.nodes) {
    nlohmann::ordered_json memberships = nlohmann::ordered_json::object();
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const fuzzy::CriterionResult& criterion : node.criteria) {
      memberships[criterion.name] = criterion.membership;
      values[criterion.name] = criterion.value;
    }
    nlohmann::ordered_json entry;
    entry["name"] = node.name;
    entry["score"] = node.score;
    if (profile.rounding == fuzzy::Rounding::kNone) {
      entry["weight"] = node.weight;
    } else {
      entry["weight"] = static_cast<int64_t>(node.weight);
    }
    entry["relative"] = node.relative;
    entry["memberships"] = std::move(memberships);
    entry["values"] = std::move(values);
    // The criteria whose label the node probe set (docs/probe.md).
    nlohmann::ordered_json probed = nlohmann::ordered_json::array();
    for (const fuzzy::Criterion& criterion : profile.criteria) {
      if (FromProbe(marks, node.name, criterion)) probed.push_back(criterion.name);
    }
    entry["from_probe"] = std::move(probed);
    nodes.push_back(std::move(entry));
  }
  nlohmann::ordered_json out;
  out["nodes"] = std::move(nodes);
  out["warnings"] = result.warnings;
  return DumpJson(out, 2) + "\n";
}

// The table of PrintFit, one YAML comment line per node; the samples column
// only for speeds that come with samples (Prometheus).
std::string FitTable(const fuzzy::FitResult& fit, const FitSpeeds& speeds) {
  const bool samples = !speeds.samples.empty();
  std::string out =
      fmt::format("# {:<20} {:>10}{} {:>9} {:>7} {:>9} {:>7} {:>13} {:>12}\n", "node", "speed",
                  samples ? fmt::format(" {:>8}", "samples") : "", "relative", "weight", "fitted",
                  "weight", "error before", "error after");
  for (const fuzzy::NodeFit& node : fit.nodes) {
    const auto count = speeds.samples.find(node.node);
    out += fmt::format(
        "# {:<20} {:>10.4g}{} {:>9.3f} {:>7g} {:>9.3f} {:>7g} {:>12.1f}% {:>11.1f}%\n", node.node,
        node.speed, count != speeds.samples.end() ? fmt::format(" {:>8.3g}", count->second) : "",
        node.relative_before, node.weight_before, node.relative_after, node.weight_after,
        100 * node.error_before, 100 * node.error_after);
  }
  return out;
}

// The fitted profile on stdout, preceded by where the speeds came from and
// the error of every node before and after as YAML comments, so that the
// output is a profile file as it stands.
int PrintFit(const fuzzy::FitResult& fit, const FitSpeeds& speeds) {
  std::string out = fmt::format(
      "# Ranks fitted to measured speeds by least squares on the log score "
      "(docs/fuzzy-weights.md).\n"
      "# speeds: {}\n"
      "# error: a node's share of the model's relative scores against its share of the\n"
      "# measured speeds; the weight is the relative score rounded as the profile says.\n",
      speeds.origin);
  out += FitTable(fit, speeds);
  out += fmt::format("# rms error: {:.1f}% before, {:.1f}% after\n", 100 * fit.rms_before,
                     100 * fit.rms_after);
  fmt::print("{}{}", out, fuzzy::FormatProfileYaml(fit.profile));
  std::fflush(stdout);
  return kExitOk;
}

int RunFit(const WeightsOptions& options, const fuzzy::Profile& profile,
           const std::vector<fuzzy::NodeFacts>& nodes) {
  auto speeds = LoadFitSpeeds(options.fit, nodes);
  if (!speeds.ok()) return ReportError(speeds.status());
  return PrintFittedProfile(profile, nodes, *speeds, options.fit.source);
}

// Returns the exit code: kExitOk, or the code ReportError gives.
int RunWeights(const WeightsOptions& options) {
  auto profile = LoadProfile(options.profile);
  if (!profile.ok()) return ReportError(profile.status());
  auto text = ReadInput(options.nodes);
  if (!text.ok()) return ReportError(text.status());
  const std::string name = options.nodes == "-" ? "<stdin>" : options.nodes;
  if (!options.fit.source.empty()) {
    auto nodes = fuzzy::ParseNodes(*text, name);
    if (!nodes.ok()) return ReportError(nodes.status());
    return RunFit(options, *profile, *nodes);
  }
  return PrintNodeWeights(*profile, *text, name,
                          options.output == "json" ? Output::kJson : Output::kTable);
}

constexpr const char* kWeightsFooter =
    R"(The weight of a node is its fuzzy score divided by the lowest score, rounded as
the profile says (Zubov & Kupin: the next integer up). Each criterion of the
profile reads one node label; a missing or malformed label gets the criterion's
default and a warning on stderr. See docs/fuzzy-weights.md.

Examples:
  # The three Raspberry Pi nodes of the paper: weights 5, 5, 1.
  ballast weights --nodes examples/nodes/seed000.yaml

  # Fit the profile's ranks to measured speeds (node: speed, YAML or JSON);
  # prints the error per node before and after, and the fitted profile.
  ballast weights --nodes nodes.yaml --fit speeds.yaml > fitted-profile.yaml

  # The same with the speeds primes jobs measured in the last 30 days, from the
  # Prometheus the operator asks (--prometheus-url), by the operator's query.
  kubectl get nodes -o yaml | ballast weights --nodes - \
      --fit http://prometheus.monitoring:9090 --workload primes --window 30d

  # The nodes of a live cluster, with a profile of your own, as JSON.
  kubectl get nodes -o yaml | ballast weights --profile my-profile.yaml --nodes - -o json

Exit codes: 0 ok (warnings allowed), 1 --fit URL failed (Prometheus down, not
answering within --timeout, answering garbage, or speeds of fewer than two
nodes), 2 bad input (the message names the file, the line or the flag and what
was expected).)";

// --fit and the flags of --fit URL.
void AddFitFlags(CLI::App* command, const std::shared_ptr<WeightsOptions>& options) {
  FitSpeedsOptions& fit = options->fit;
  command->add_option(
      "--fit", fit.source,
      "Measured speeds: fit the profile's ranks to them and print the fitted WeightProfile with "
      "each node's error before and after. A speeds file (node: speed), finished WeightedJobs "
      "(kubectl get weightedjobs -o yaml), or an http(s) URL of the Prometheus that scrapes the "
      "coordinators (with --workload)");
  command->add_option(
      "--workload", fit.workload,
      "With --fit URL, required: the workload kind whose speeds to fit (primes, matmul, exec)");
  command->add_option("--window", fit.window,
                      fmt::format("With --fit URL: how far back Prometheus looks, seconds or a "
                                  "duration like 7d or 1d12h (default: {}, as the operator's "
                                  "--prometheus-window)",
                                  FormatDuration(DefaultFitWindowSeconds())));
  command
      ->add_option("--timeout", fit.timeout_s,
                   "With --fit URL: seconds to wait for Prometheus's answer, at most 60")
      ->capture_default_str();
}

}  // namespace

int PrintNodeWeights(const fuzzy::Profile& profile, const std::string& nodes_text,
                     const std::string& nodes_name, Output output) {
  auto nodes = fuzzy::ParseNodes(nodes_text, nodes_name);
  if (!nodes.ok()) return ReportError(nodes.status());
  auto result = fuzzy::ComputeWeights(profile, *nodes);
  if (!result.ok()) return ReportError(result.status());

  // The same text parsed again for the probe's marks; it parsed as nodes,
  // so an error here cannot happen, and would only lose the marks.
  auto marks = probe::ProbeLabelsOfNodes(nodes_text, "nodes");
  const ProbeMarks no_marks;
  const ProbeMarks& probe_marks = marks.ok() ? *marks : no_marks;

  for (const std::string& warning : result->warnings) fmt::print(stderr, "warning: {}\n", warning);
  const std::string formatted = output == Output::kJson
                                    ? FormatJson(profile, *result, probe_marks)
                                    : FormatTable(profile, *result, probe_marks);
  fmt::print("{}", formatted);
  std::fflush(stdout);
  return kExitOk;
}

int PrintFittedProfile(const fuzzy::Profile& profile, const std::vector<fuzzy::NodeFacts>& nodes,
                       const FitSpeeds& speeds, const std::string& source) {
  for (const std::string& warning : speeds.warnings) fmt::print(stderr, "warning: {}\n", warning);
  auto fit = fuzzy::FitProfileRanks(profile, nodes, speeds.speeds);
  if (!fit.ok()) {
    return ReportError(
        Status(fit.status().code(), fmt::format("{}: {}", source, fit.status().message())));
  }
  return PrintFit(*fit, speeds);
}

void RegisterWeights(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<WeightsOptions>();
  CLI::App* command = app.add_subcommand(
      "weights", "Compute the fuzzy performance weights of nodes from their labels");
  command->footer(kWeightsFooter);
  command
      ->add_option("-p,--profile", options->profile,
                   fmt::format("WeightProfile: a YAML file, or the name of a built-in profile ({})",
                               fmt::join(fuzzy::BuiltinProfileNames(), ", ")))
      ->capture_default_str();
  command
      ->add_option("-n,--nodes", options->nodes,
                   "Nodes: a YAML file with `nodes: [{name, labels}]`, or a NodeList as printed by "
                   "`kubectl get nodes -o yaml`; - reads standard input")
      ->required();
  AddFitFlags(command, options);
  command->add_option("-o,--output", options->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->callback([options, exit_code, command] {
    for (const char* flag : {"--workload", "--window", "--timeout"}) {
      if (command->count(flag) > 0) options->fit.url_flags.emplace_back(flag);
    }
    *exit_code = RunWeights(*options);
  });
}

}  // namespace ballast::cli
