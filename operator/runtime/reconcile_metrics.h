// ReconcileMetrics: the operator's own series of its reconcile passes, in
// its Prometheus registry (docs/metrics.md): each pass's wall time (a
// summary with windowed quantiles, and a histogram to aggregate across
// replicas), the reconcile thread's CPU time in it, passes by result, and
// the jobs tracked.
//
// Thread-safety: prometheus-cpp's series are; Observe from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>

#include <cstddef>

namespace ballast::runtime {

class ReconcileMetrics {
 public:
  explicit ReconcileMetrics(prometheus::Registry& registry);

  // A pass that took `seconds` of wall time and `cpu_seconds` of its
  // thread's CPU, `ok` or not, with `tracked_jobs` tracked after it.
  void Observe(double seconds, double cpu_seconds, bool ok, size_t tracked_jobs);

 private:
  prometheus::Summary& seconds_;  // windowed quantiles (bench/operator_bench)
  prometheus::Histogram& duration_;
  prometheus::Summary& cpu_seconds_;
  prometheus::Family<prometheus::Counter>& passes_;
  prometheus::Gauge& jobs_;
};

}  // namespace ballast::runtime
