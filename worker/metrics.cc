#include "worker/metrics.h"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <map>
#include <mutex>

#include "core/common/metric_labels.h"
#include "worker/metrics_server.h"

namespace ballast::worker {
namespace {

// The reply kinds a round trip is counted under.
constexpr std::array<const char*, 5> kReplies = {"lease", "continue", "wait", "done", "error"};

}  // namespace

// The series of one job, made by Bind.
struct Series {
  prometheus::Counter* items = nullptr;
  prometheus::Counter* busy = nullptr;
  prometheus::Counter* idle = nullptr;
  prometheus::Counter* leases = nullptr;
  prometheus::Counter* reports = nullptr;
  prometheus::Histogram* item_seconds = nullptr;
  std::map<std::string, prometheus::Histogram*> round_trips;  // by kReplies
};

class Metrics::Impl {
 public:
  explicit Impl(const MetricLabels& labels)
      : registry_(std::make_shared<prometheus::Registry>()),
        labels_{{kWeightedJobLabel, labels.job},
                {kJobNamespaceLabel, labels.ns},
                {"node", labels.node}} {}

  void Bind(const std::string& workload) {
    std::lock_guard lock(bind_mutex_);
    if (series_.load() != nullptr) return;
    auto labels = labels_;
    labels["workload"] = workload;
    bound_.items = &Counter("ballast_worker_items_completed_total", "Items finished", labels);
    bound_.busy = &Counter("ballast_worker_busy_seconds_total", "Seconds spent computing", labels);
    bound_.idle = &Counter("ballast_worker_idle_seconds_total",
                           "Seconds waiting for the coordinator", labels);
    bound_.leases = &Counter("ballast_worker_leases_total", "Leases received", labels);
    bound_.reports = &Counter("ballast_worker_reports_total", "Reports sent", labels);
    bound_.item_seconds = &prometheus::BuildHistogram()
                               .Name("ballast_worker_item_seconds")
                               .Help("Seconds per item, observed once per computed step")
                               .Register(*registry_)
                               .Add(labels, prometheus::Histogram::BucketBoundaries{
                                                1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100});
    auto& trips = prometheus::BuildHistogram()
                      .Name("ballast_worker_report_round_trip_seconds")
                      .Help(
                          "Seconds from sending a report to its reply, by the reply's kind "
                          "(a 'wait' may be held by the coordinator up to its wait timeout)")
                      .Register(*registry_);
    for (const char* reply : kReplies) {
      auto with_reply = labels;
      with_reply["reply"] = reply;
      bound_.round_trips[reply] = &trips.Add(
          with_reply,
          prometheus::Histogram::BucketBoundaries{1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
                                                  2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30});
    }
    series_.store(&bound_);
  }

  prometheus::Counter& Counter(const std::string& name, const std::string& help,
                               const std::map<std::string, std::string>& labels) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(*registry_).Add(labels);
  }

  // The series once bound; nullptr before.
  const Series* series() const { return series_.load(); }

  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string, std::string> labels_;
  std::mutex bind_mutex_;
  Series bound_;  // written once, under bind_mutex_, before series_ points at it
  std::atomic<const Series*> series_{nullptr};
  std::unique_ptr<prometheus::Exposer> exposer_;
};

StatusOr<std::unique_ptr<Metrics>> Metrics::Create(const std::string& listen,
                                                   const MetricLabels& labels) {
  auto impl = std::make_unique<Impl>(labels);
  if (!listen.empty()) {
    BALLAST_ASSIGN_OR_RETURN(impl->exposer_, ServeMetrics(listen, impl->registry_));
  }
  return std::unique_ptr<Metrics>(new Metrics(std::move(impl)));
}

Metrics::Metrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Metrics::~Metrics() = default;

uint16_t Metrics::port() const { return MetricsPort(impl_->exposer_.get()); }

void Metrics::Bind(const std::string& workload) { impl_->Bind(workload); }

void Metrics::Items(uint64_t items, double seconds) {
  const Series* series = impl_->series();
  if (!series) return;
  series->items->Increment(static_cast<double>(items));
  if (items > 0) series->item_seconds->Observe(seconds / static_cast<double>(items));
}
void Metrics::Busy(double seconds) {
  if (const Series* series = impl_->series()) series->busy->Increment(seconds);
}
void Metrics::Idle(double seconds) {
  if (const Series* series = impl_->series()) series->idle->Increment(seconds);
}
void Metrics::Lease() {
  if (const Series* series = impl_->series()) series->leases->Increment();
}
void Metrics::Report() {
  if (const Series* series = impl_->series()) series->reports->Increment();
}
void Metrics::RoundTrip(const std::string& reply, double seconds) {
  const Series* series = impl_->series();
  if (!series) return;
  auto it = series->round_trips.find(reply);
  if (it == series->round_trips.end()) it = series->round_trips.find("error");
  it->second->Observe(seconds);
}

}  // namespace ballast::worker
