#include "operator/runtime/reconcile_metrics.h"

namespace ballast::runtime {
namespace {

const prometheus::Summary::Quantiles kQuantiles{{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}};

}  // namespace

ReconcileMetrics::ReconcileMetrics(prometheus::Registry& registry)
    : seconds_(prometheus::BuildSummary()
                   .Name("ballast_operator_reconcile_seconds")
                   .Help("Time one reconcile pass of a WeightedJob took")
                   .Register(registry)
                   .Add({}, kQuantiles)),
      duration_(
          prometheus::BuildHistogram()
              .Name("ballast_operator_reconcile_duration_seconds")
              .Help("Time one reconcile pass of a WeightedJob took (a histogram "
                    "to aggregate across replicas)")
              .Register(registry)
              .Add({}, prometheus::Histogram::BucketBoundaries{1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
                                                               5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25,
                                                               0.5, 1, 2.5, 5, 10})),
      cpu_seconds_(prometheus::BuildSummary()
                       .Name("ballast_operator_reconcile_cpu_seconds")
                       .Help("CPU time of the reconcile thread in one pass (the "
                             "rest of its wall time is waiting: API server, CPU)")
                       .Register(registry)
                       .Add({}, kQuantiles)),
      passes_(prometheus::BuildCounter()
                  .Name("ballast_operator_reconciles_total")
                  .Help("Reconcile passes by result (ok, error)")
                  .Register(registry)),
      jobs_(prometheus::BuildGauge()
                .Name("ballast_operator_jobs")
                .Help("WeightedJobs the operator tracks")
                .Register(registry)
                .Add({})) {}

void ReconcileMetrics::Observe(double seconds, double cpu_seconds, bool ok, size_t tracked_jobs) {
  seconds_.Observe(seconds);
  duration_.Observe(seconds);
  cpu_seconds_.Observe(cpu_seconds);
  passes_.Add({{"result", ok ? "ok" : "error"}}).Increment();
  jobs_.Set(static_cast<double>(tracked_jobs));
}

}  // namespace ballast::runtime
