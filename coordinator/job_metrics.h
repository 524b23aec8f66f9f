// JobMetrics: the per-job and per-node series the coordinator exports
// (docs/metrics.md), built from snapshots of its jobs when /metrics is
// scraped. Nothing is counted on the report path: every value is read from a
// JobView (JobSession keeps those counters anyway), so metrics add no lock
// and no allocation to a report. A job's series exist while the coordinator
// hosts the job and end when it is removed (the operator removes a finished
// job once its pods are gone; `ballast run` exits).
//
// Labels: `weightedjob`, `job_namespace` (core/common/metric_labels.h) and
// `workload` (the text of the job's history key, history_key.h) on every series of a job, and
// `node` on the per-node ones. A job has at most 12 series plus 12 per node. Beside them one
// series per history key and node that a hosted job has measured as history counts it
// (recorded_speeds.h),
// ballast_node_speed_timestamp_seconds{workload,node}: the newest time any of
// those jobs measured the node (what the history query dates a node's history
// by, reading one series per node instead of one per job and node).
// Prometheus's history reads ballast_node_recorded_speed_cost_units_per_second,
// the speed gauge with the speeds history leaves out at 0, and a node the job
// measured Slow against its own baseline at the edge of its band, as the
// operator's store enters it (recorded_speeds.h, EnteredSpeeds).
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

#include "coordinator/job_types.h"
#include "core/fuzzy/history_prior.h"
#include "core/health/deviation.h"
#include "core/history/history_key.h"

namespace ballast::coordinator {

// One job as the coordinator sees it at a scrape.
struct JobSample {
  JobView view;  // JobSession::View(false): segments are not needed
  std::string name;
  std::string ns;
  history::HistoryKey history_key;  // JobConfig::history_key, else the workload kind's
  // The history the job's priors came from and the judgment's options
  // (JobConfig): the recorded speed gauge carries EnteredSpeeds.
  std::vector<fuzzy::NodeHistory> baseline;
  health::DeviationOptions deviation;
  // The view's clock (seconds since the job was added) and unix time now:
  // a time t of the view happened at unix_now - (view_now - t).
  double view_now = 0;
  double unix_now = 0;
};

// The predicted finish of a job in its view's seconds: now plus the cost
// still to compute over the summed measured speeds of the nodes not lost
// since they last reported; its finish when done. Returns a negative number
// when nothing is measured yet (no prediction).
double PredictedFinish(const JobView& view, double view_now);

// The job families that have series (a family with none is left out, as
// prometheus-cpp leaves out a family without children); the jobs' series in
// the order given.
std::vector<prometheus::MetricFamily> JobMetricFamilies(const std::vector<JobSample>& jobs);

}  // namespace ballast::coordinator
