#include "worker/probe/report.h"

#include <fmt/format.h>

#include <set>

#include "core/common/utf8.h"
#include "core/fuzzy/profile.h"
#include "core/probe/facts_json.h"
#include "core/probe/node_notice.h"
#include "worker/probe/tree_reader.h"

namespace ballast::worker {
namespace {

using nlohmann::ordered_json;

const fuzzy::Profile& RaspberryPi() {
  static const fuzzy::Profile profile = [] {
    auto builtin = fuzzy::BuiltinProfile("raspberry-pi");
    return builtin.ok() ? *builtin : fuzzy::Profile{};
  }();
  return profile;
}

}  // namespace

ProbeReport MakeReport(const std::string& root, const probe::Snapshot& snapshot) {
  probe::ProbeResult result = probe::DeriveFacts(snapshot);
  probe::LabelResult labels = probe::ProbeLabels(result.facts, RaspberryPi());
  ProbeReport report{root, std::move(result.facts), std::move(labels.labels),
                     std::move(result.warnings)};
  for (probe::Warning& warning : labels.warnings) report.warnings.push_back(std::move(warning));
  return report;
}

void AddBenchmark(ProbeReport& report, const probe::BenchmarkScore& score) {
  report.benchmark = score;
  report.labels[kBenchScoreLabel] = score.bucket;
}

StatusOr<ProbeReport> Probe(const std::string& root) {
  BALLAST_ASSIGN_OR_RETURN(probe::Snapshot snapshot, ReadSnapshot(root));
  return MakeReport(root, snapshot);
}

ordered_json ReportToJson(const ProbeReport& report) {
  ordered_json out;
  out["root"] = ToValidUtf8(report.root);  // a path given on the command line
  out["facts"] = probe::FactsToJson(report.facts);
  out["benchmark"] = nullptr;
  if (const auto& b = report.benchmark) {
    out["benchmark"] = {{"workload", fmt::format("primes below {}, trial division, one core",
                                                 probe::kBenchmarkPrimesLimit)},
                        {"unit", "runs per second"},
                        {"score", b->median},
                        {"bucket", b->bucket},
                        {"min", b->min},
                        {"max", b->max},
                        {"spread", b->spread},
                        {"samples", b->samples},
                        {"repetitions", b->repetitions}};
  }
  out["labels"] = ordered_json::object();
  for (const auto& [key, value] : report.labels) out["labels"][key] = value;
  out["warnings"] = probe::WarningsToJson(report.warnings);
  // Why BOARD stays empty on this machine (the node's ballast.io/board-note).
  const std::string note = probe::BoardNote(report.facts);
  out["boardNote"] = note.empty() ? ordered_json() : ordered_json(note);
  return out;
}

std::vector<probe::Warning> ProfileWarnings(const ProbeReport& report) {
  // The facts behind the profile's labels, by the names facts.cc gives them.
  static const std::set<std::string> kFacts = {"cpu-model", "os-bits",    "ram",
                                               "sd-gb",     "os-release", "board"};
  std::set<std::string> labels;
  for (const fuzzy::Criterion& criterion : RaspberryPi().criteria) labels.insert(criterion.label);
  std::vector<probe::Warning> out;
  for (const probe::Warning& warning : report.warnings) {
    if (kFacts.count(warning.fact) != 0 || labels.count(warning.fact) != 0) out.push_back(warning);
  }
  return out;
}

}  // namespace ballast::worker
