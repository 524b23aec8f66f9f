// The history file of `ballast run --history FILE`: the operator's store of
// measured speeds (speed_store.h) as a file, so that local runs and the
// operator keep history one way — per node and history key, each job's speed
// relative to that job's mean (docs/history.md, "The history file").
//
// Files of the earlier form are still read: version 1 with "workloads", per
// workload kind each node's aggregate (a speed on some job's scale, weighted
// samples, the time of the newest, a spread between jobs):
//
//   {"version": 1,
//    "workloads": {"primes": [{"node": "pi4b-a", "speed": 812.5, "samples": 12,
//                              "time": 1795000000, "spread": 0.01}, ...], ...}}
//
// Each node's aggregate becomes one sample of the store: its speed relative to
// the mean speed of its workload's nodes, at its time (as RecordJob records a
// job). The file is written back in the store's form (StoreToText).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/common/status.h"
#include "core/history/speed_store.h"

namespace ballast::history {

// The largest history file read, in either form.
inline constexpr size_t kMaxHistoryFileBytes = size_t{4} << 20;

// Bounds of a file of the earlier form: what one cluster's history needed.
inline constexpr size_t kMaxOldFileWorkloads = 64;
inline constexpr size_t kMaxOldFileNodes = 10000;  // per workload

// The store a history file holds. An empty (or all-blank) text is an empty
// store. Text whose top-level object has "workloads" is read as the earlier
// form and converted (above); a workload with fewer than two nodes gives no
// samples (one node's speed relative to itself says nothing, RecordJob).
// Anything else is read as the store (StoreFromJson), keeping the newest
// limits.samples_per_node samples per node and key.
//
// Returns Invalid naming `file_name` and the field
// ("h.json: workloads.primes[2].speed: expected a number > 0, got -1",
// "h.json: nodes.pi5-0.primes[0]: expected [speed, time] ...") for text
// longer than kMaxHistoryFileBytes or nested deeper than either form needs,
// text that is not JSON, and in the earlier form: a version other than 1,
// unknown fields, a node name that is not a DNS-1123 subdomain, a node listed
// twice in a workload, a speed or sample count that is not a finite number >
// 0 (speed <= 1e300, samples <= 1e12), a time outside [0, 2^40], a spread
// outside [0, 1e6], more than kMaxOldFileWorkloads workloads or
// kMaxOldFileNodes nodes in one. Never throws.
StatusOr<SpeedStore> ReadHistoryFile(std::string_view text, std::string_view file_name,
                                     const StoreLimits& limits);

}  // namespace ballast::history
