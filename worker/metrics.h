// Metrics: the worker's Prometheus metrics (prometheus-cpp), served on
// /metrics when a listen address is given. Every series carries the labels
// weightedjob, job_namespace (core/common/metric_labels.h), workload and node
// (docs/metrics.md):
//   ballast_worker_items_completed_total        items finished
//   ballast_worker_item_seconds                 histogram of seconds per item (per step)
//   ballast_worker_busy_seconds_total           seconds computing
//   ballast_worker_idle_seconds_total           seconds waiting for the coordinator
//   ballast_worker_leases_total                 leases received
//   ballast_worker_reports_total                reports sent
//   ballast_worker_report_round_trip_seconds    histogram of a report's round trip, by reply
// The workload kind is known once the job's description is fetched: the
// series exist from Bind on, and calls before it count nothing.
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/status.h"

namespace ballast::worker {

// The labels of the worker's series but the workload kind.
struct MetricLabels {
  std::string job;  // the job's name
  std::string ns;   // its namespace
  std::string node;
};

class Metrics {
 public:
  // Serves /metrics on `listen` ("host:port"; port 0 picks one) unless empty.
  // Returns Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<Metrics>> Create(const std::string& listen,
                                                   const MetricLabels& labels);
  ~Metrics();

  // The port /metrics is served on; 0 when not served.
  uint16_t port() const;

  // Creates the series, labelled with `workload` (the kind's name). Call once,
  // before the other methods count; later calls change nothing.
  void Bind(const std::string& workload);

  void Items(uint64_t items, double seconds);
  void Busy(double seconds);
  void Idle(double seconds);
  void Lease();
  void Report();
  // A report's round trip: `reply` is the reply's kind (lease, continue,
  // wait, done) or "error" when none came.
  void RoundTrip(const std::string& reply, double seconds);

  class Impl;

 private:
  explicit Metrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::worker
