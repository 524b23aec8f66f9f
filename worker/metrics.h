// Metrics: the worker's Prometheus metrics (prometheus-cpp), served on
// /metrics when a listen address is given.
//   ballast_worker_items_completed_total   items finished
//   ballast_worker_item_seconds            histogram of seconds per item (per step)
//   ballast_worker_busy_seconds_total      seconds computing
//   ballast_worker_idle_seconds_total      seconds waiting for the coordinator
//   ballast_worker_leases_total            leases received
//   ballast_worker_reports_total           reports sent
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace ballast::worker {

class Metrics {
 public:
  // Serves /metrics on `listen` ("host:port"; port 0 picks one) unless empty.
  // Returns Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<Metrics>> Create(const std::string& listen,
                                                   const std::string& job,
                                                   const std::string& worker);
  ~Metrics();

  // The port /metrics is served on; 0 when not served.
  uint16_t port() const;

  void Items(uint64_t items, double seconds);
  void Busy(double seconds);
  void Idle(double seconds);
  void Lease();
  void Report();

  class Impl;

 private:
  explicit Metrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::worker
