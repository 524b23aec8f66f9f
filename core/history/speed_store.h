// SpeedStore: the history of measured node speeds that the operator keeps
// without Prometheus — what the jobs it finished measured, per node and
// workload kind — and its text form (the ConfigMap the chart owns holds it,
// operator/runtime/history_configmap.h; so does the file of `ballast run
// --history`, history_file.h). Every decision about it is here
// and pure: what a finished job adds, what is kept within the bounds, what a
// new job is told, how the text is written and read back.
//
// A job's speeds are kept relative to that job's mean (speed / mean of the
// job's nodes): jobs of one kind whose items differ in size (primes to 1e6 or
// 1e9) measure on different scales, but the ratio between two nodes is the
// same. A new job's prior only needs those ratios (fuzzy::NodeHistory's speed
// is "any scale").
//
// History is keyed by the node's name: a node relabelled keeps its history, a
// node renamed starts without (docs/operator.md).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/history/history_key.h"

namespace ballast::history {

// A relative speed is near 1; these bounds only keep the text form's numbers
// finite through its rounding.
inline constexpr double kMaxRelativeSpeed = 1e9;
inline constexpr double kMaxSampleTime = 1e11;  // seconds since the epoch: the year 5138

// A store's samples are jobs, one per job that measured a node: a prior from
// it is trusted fully (fuzzy::HistoryPriorOptions::full_trust_samples) at this
// many, the default of the operator's --history-full-trust-samples and of
// `ballast run --history`.
inline constexpr double kFullTrustJobs = 3;

struct SpeedSample {
  double speed = 0;  // relative to its job's mean speed
  double at = 0;     // seconds since the epoch, when the job finished
  bool operator==(const SpeedSample&) const = default;
};

// How far after the reader's clock a sample may be dated and still be kept
// (dated then at that clock): clocks of the machines that record differ by
// seconds, at most minutes. Past it, no one knows when the sample was
// measured (a Raspberry Pi has no real-time clock, and one that booted
// without the network can be years off), and dated in the future it would
// stay the newest of its node for good: every real sample would be trimmed
// before it, and its age would read 0. Such a sample is dropped.
inline constexpr double kFutureSlackSeconds = 3600;

struct StoreLimits {
  size_t samples_per_node = 16;          // per node and workload kind: the newest kept
  size_t max_bytes = size_t{256} << 10;  // of the text form (a ConfigMap holds 1 MiB)
};

struct SpeedStore {
  // node -> history key (HistoryKey::text) -> samples, oldest first.
  std::map<std::string, std::map<std::string, std::vector<SpeedSample>>> nodes;
  bool operator==(const SpeedStore&) const = default;
};

// What DropFutureSamples took out of a store.
struct DroppedSamples {
  size_t count = 0;
  std::map<std::pair<std::string, std::string>, size_t> by_entry;  // (node, kind) -> samples
  double latest = 0;                                               // the latest date among them
  bool operator==(const DroppedSamples&) const = default;
};

// Takes out of `store` each sample dated more than `slack` seconds after
// `now` (kFutureSlackSeconds) and dates `now` those within the slack, so
// that no sample is dated after `now`; each entry stays oldest first.
// Returns what was taken out (count 0: nothing).
DroppedSamples DropFutureSamples(SpeedStore& store, double now, double slack = kFutureSlackSeconds);

// What was dropped, for a warning: "dropped 3 samples dated more than 3600 s
// after now (the latest 4102444800; recorded by a clock set wrong?):
// pi4b-a primes 1, pi5-a primes 2" (at most 10 entries named, then "and N
// more"); "" when nothing was.
std::string DescribeDropped(const DroppedSamples& dropped, double slack = kFutureSlackSeconds);

// Adds what a finished job kept under `key` measured: `measured` maps node ->
// speed (cost units per busy second; nodes with a speed <= 0 or not finite
// are skipped), stored relative to their mean, at time `now`. Each entry it
// adds to is first rid of samples dated past `now` (DropFutureSamples's rule,
// what a reader should have reported already), then sorted by date and
// trimmed to the newest limits.samples_per_node. Returns false (and changes
// nothing) when fewer than two nodes have a usable speed: one node's speed
// relative to itself says nothing.
bool RecordJob(SpeedStore& store, const HistoryKey& key,
               const std::map<std::string, double>& measured, double now,
               const StoreLimits& limits);

// What the store knows of `nodes` under `key` at `now`: per node with
// samples, the mean relative speed, the number of samples and the age of the
// newest, in the order of `nodes`. Samples dated more than
// kFutureSlackSeconds after `now` are passed over (DropFutureSamples); nodes
// it knows nothing else of are absent.
std::vector<fuzzy::NodeHistory> LookupHistory(const SpeedStore& store, const HistoryKey& key,
                                              const std::vector<std::string>& nodes, double now);

// What StoreToText left out to keep within its bytes.
struct LeftOut {
  size_t entries = 0;  // node-and-kind entries, the stalest
  size_t samples = 0;  // their samples
  double newest = 0;   // the date of the newest sample among them
  bool operator==(const LeftOut&) const = default;
};

// The text form, at most limits.max_bytes long: the node-and-kind entries
// whose newest sample is oldest are left out until it fits, and said in
// `*left_out` when it is given (entries 0: nothing). Never fails.
std::string StoreToText(const SpeedStore& store, const StoreLimits& limits);
std::string StoreToText(const SpeedStore& store, const StoreLimits& limits, LeftOut* left_out);

// What was left out, for a warning: "kept within 262144 bytes: left out the
// 12 stalest node-and-workload entries (190 samples, the newest of them dated
// 1795463627)"; "" when nothing was.
std::string DescribeLeftOut(const LeftOut& left_out, const StoreLimits& limits);

// The store of `text` (StoreToText's form). An empty text is an empty store.
// Invalid naming the field (e.g. "history.nodes.pi5-0.primes[2]: expected
// [speed, time] with speed in (0, 1e9] and time in [0, 1e11], got ...") for anything else, and for
// a text past 4 * limits.max_bytes or nested deeper than JSON's form needs. Never throws.
StatusOr<SpeedStore> StoreFromText(std::string_view text, const StoreLimits& limits);

// The store of `root`, StoreToText's form already parsed (ParseBoundedJson),
// its fields named from `path` ("history" for StoreFromText, "" for a file:
// "nodes.pi5-0.primes[2]: ..."). Keeps the newest limits.samples_per_node
// samples per node and kind. Invalid as StoreFromText says. Never throws.
StatusOr<SpeedStore> StoreFromJson(const nlohmann::json& root, std::string_view path,
                                   const StoreLimits& limits);

}  // namespace ballast::history
