// ProbeReport: one probe of a root directory — its facts, the labels they
// give and every warning — and its JSON form, which `ballast-worker probe -o
// json` prints (docs/probe.md).
//
// Thread-safety: values and functions over them; Probe reads the file system.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/probe/benchmark.h"
#include "core/probe/facts.h"
#include "core/probe/labels.h"

namespace ballast::worker {

struct ProbeReport {
  std::string root;
  probe::Facts facts;
  std::map<std::string, std::string> labels;
  std::vector<probe::Warning> warnings;                 // the facts' warnings, then the labels'
  std::optional<probe::BenchmarkScore> benchmark = {};  // only with --benchmark
};

// The label of the benchmark's score.
inline constexpr const char* kBenchScoreLabel = "ballast.io/bench-score";

// Sets `report.benchmark` to `score` and the label kBenchScoreLabel to its
// bucket. Pure.
void AddBenchmark(ProbeReport& report, const probe::BenchmarkScore& score);

// Derives the report of a snapshot against the built-in raspberry-pi
// profile (which only names the defaults of labels left out). Pure.
ProbeReport MakeReport(const std::string& root, const probe::Snapshot& snapshot);

// Reads `root` (ReadSnapshot) and makes its report. Returns Invalid when the
// root is not a directory.
StatusOr<ProbeReport> Probe(const std::string& root);

// {"root", "facts": {...}, "benchmark": {...} or null, "labels": {...},
// "warnings": [{fact, file, message}]}; a fact that is unknown is null. Every
// string in it is valid UTF-8 (the facts and warnings are made so by
// DeriveFacts, the root here), so dumping it never throws.
nlohmann::ordered_json ReportToJson(const ProbeReport& report);

// The warnings about facts a label of the raspberry-pi profile needs: the
// ones an Event on the Node reports.
std::vector<probe::Warning> ProfileWarnings(const ProbeReport& report);

}  // namespace ballast::worker
