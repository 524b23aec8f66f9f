// The history of measured node speeds as Prometheus holds it: the one PromQL
// query that asks, for every node at once, what the jobs kept under one key
// (history_key.h) measured there over a window, and the reader of
// Prometheus's answer. Pure: the HTTP request is made by
// net/prometheus_history_source.h.
//
// The query reads the coordinator's gauges
// ballast_node_recorded_speed_cost_units_per_second{weightedjob,job_namespace,workload,node}
// (the measured speed where history counts it, 0 where it leaves the node
// out: coordinator/recorded_speeds.h) and
// ballast_node_speed_timestamp_seconds{workload,node} (docs/metrics.md) and
// the node probe's ballast_node_throttled{node}, and answers four series per
// node, told apart by the label `stat`:
//
//   speed      mean over the window's jobs of each job's last recorded speed
//              of the node, relative to that job's mean over its recorded
//              nodes (jobs whose items differ in size measure on different
//              scales; the ratio between nodes is what a prior needs)
//   samples    how many jobs recorded the node in the window
//   age        seconds since the node's speed was last recorded, as the
//              newest sample in the window of the timestamp gauge says (one
//              read of one series per node and kind: a job's start waits for
//              it)
//   throttled  the fraction of the window ballast_node_throttled was 1
//              (absent without the probe)
//
// A sample taken while the node was throttled counts half:
//   weighted samples = samples * (1 - throttled / 2).
// A job's series are grouped by `weightedjob` and `job_namespace`, and by the
// labels coordinators before those names exported instead, `job` and
// `namespace` (`exported_job` and `exported_namespace` where a scrape without
// honor_labels renamed them): a window reaching back over an upgrade reads
// both.
//
// Jobs of coordinators older than the recorded gauge exported only
// ballast_node_speed_cost_units_per_second, some without the timestamp
// gauge: LegacyHistoryQuery reads those.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/history/history_key.h"

namespace ballast::history {

// The PromQL of the history kept under `key` (its text the label `workload`
// of the series read) over the last `window_seconds` (>= 60).
std::string HistoryQuery(const HistoryKey& key, double window_seconds);

// The history that coordinators older than the recorded gauge measured: the
// same four series from the speed gauge of the jobs that have no recorded
// speed (nothing left out), the age from the speed gauge alone — seconds
// since the node's newest speed sample, up to one step of a subquery less
// (window / 20, at least 60 s), as some of them exported no timestamp gauge.
// Its age costs Prometheus about five times what the gauge's read does
// (docs/operator.md): PrometheusHistory asks it only when HistoryQuery's
// answer has none of the nodes asked (after an upgrade, until a job of the
// kind has been recorded).
std::string LegacyHistoryQuery(const HistoryKey& key, double window_seconds);

struct AnswerLimits {
  size_t max_bytes = size_t{4} << 20;  // a body longer than this is refused unread
  int max_depth = 8;                   // the answer's form nests 5 deep
  size_t max_series = 40000;           // 4 per node: 10000 nodes
};

// The per-node history in Prometheus's answer `body` (of /api/v1/query with
// HistoryQuery or LegacyHistoryQuery), sorted by node. Nodes without a
// usable speed (absent, NaN, <= 0) or without samples are left out. A node
// whose age is absent or NaN gets age_seconds NaN: not known, which
// fuzzy::BlendHistoryPrior treats as unusable; a negative age reads as 0.
// Unavailable with Prometheus's own error for {"status":"error",...};
// Invalid naming the field for anything that is not the vector answer of the
// query ("data.result[3].value: expected [time, \"number\"], got ..."), for a
// body past limits.max_bytes or nested past limits.max_depth, or for more
// than limits.max_series series.
// Never throws.
StatusOr<std::vector<fuzzy::NodeHistory>> ParseHistoryAnswer(std::string_view body,
                                                             const AnswerLimits& limits = {});

}  // namespace ballast::history
