// The run-to-run history file of `ballast run --history FILE`: per workload
// kind, each node's measured speed, its weighted sample count and when it
// was last measured (docs/history.md). Pure parse and format; the command
// reads and writes the file.
//
//   {"version": 1,
//    "workloads": {"primes": [{"node": "pi4b-a", "speed": 812.5, "samples": 12,
//                              "time": 1795000000, "spread": 0.01}, ...], ...}}
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"

namespace ballast::fuzzy {

struct HistoryRecord {
  std::string node;
  double speed = 0;    // cost units per second of the job it was measured in
  double samples = 0;  // weighted sample count
  int64_t time = 0;    // Unix seconds of the newest sample
  double spread = 0;   // variance of the log speed between jobs (optional in the file)
};

struct HistoryFile {
  std::map<std::string, std::vector<HistoryRecord>> workloads;  // kind -> records
};

// Bounds of a history file: what one cluster's history needs, and no more.
inline constexpr size_t kMaxHistoryBytes = size_t{4} << 20;
inline constexpr size_t kMaxHistoryWorkloads = 64;
inline constexpr size_t kMaxHistoryNodes = 10000;  // per workload
inline constexpr double kMaxHistorySpeed = 1e300;
inline constexpr double kMaxHistorySamples = 1e12;

// Parses a history file. Returns Invalid naming `file_name` and the field
// ("h.json: workloads.primes[2].speed: expected a number > 0, got -1") for
// text that is not bounded JSON, a version other than 1, unknown fields, a
// node name that is not a DNS-1123 subdomain, duplicate nodes in a workload,
// a speed or sample count that is not a finite number > 0 within its bound,
// a time outside [0, 2^40], a spread that is not a number in [0, 1e6], or more than
// kMaxHistoryWorkloads workloads or kMaxHistoryNodes nodes in one.
StatusOr<HistoryFile> ParseHistoryFile(std::string_view text, std::string_view file_name);

// The file as JSON text (records sorted by node), parseable by ParseHistoryFile.
std::string FormatHistoryFile(const HistoryFile& file);

// The records of one workload as NodeHistory, aged to `now` (Unix seconds).
std::vector<NodeHistory> HistoryAt(const std::vector<HistoryRecord>& records, int64_t now);

// NodeHistory (ages relative to `now`) as records.
std::vector<HistoryRecord> RecordsAt(const std::vector<NodeHistory>& history, int64_t now);

}  // namespace ballast::fuzzy
