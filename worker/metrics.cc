#include "worker/metrics.h"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace ballast::worker {

class Metrics::Impl {
 public:
  Impl(const std::string& job, const std::string& worker)
      : registry_(std::make_shared<prometheus::Registry>()),
        labels_{{"job_name", job}, {"worker", worker}},
        items_(Counter("ballast_worker_items_completed_total", "Items finished")),
        busy_(Counter("ballast_worker_busy_seconds_total", "Seconds spent computing")),
        idle_(Counter("ballast_worker_idle_seconds_total", "Seconds waiting for the coordinator")),
        leases_(Counter("ballast_worker_leases_total", "Leases received")),
        reports_(Counter("ballast_worker_reports_total", "Reports sent")),
        item_seconds_(prometheus::BuildHistogram()
                          .Name("ballast_worker_item_seconds")
                          .Help("Seconds per item, observed once per computed step")
                          .Register(*registry_)
                          .Add(labels_, prometheus::Histogram::BucketBoundaries{
                                            1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100})) {}

  prometheus::Counter& Counter(const std::string& name, const std::string& help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(*registry_).Add(labels_);
  }

  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string, std::string> labels_;
  prometheus::Counter& items_;
  prometheus::Counter& busy_;
  prometheus::Counter& idle_;
  prometheus::Counter& leases_;
  prometheus::Counter& reports_;
  prometheus::Histogram& item_seconds_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

StatusOr<std::unique_ptr<Metrics>> Metrics::Create(const std::string& listen,
                                                   const std::string& job,
                                                   const std::string& worker) {
  auto impl = std::make_unique<Impl>(job, worker);
  if (!listen.empty()) {
    try {
      impl->exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/1);
    } catch (const std::exception& e) {
      return Status::Unavailable(fmt::format("cannot serve metrics on {}: {}", listen, e.what()));
    }
    impl->exposer_->RegisterCollectable(impl->registry_);
  }
  return std::unique_ptr<Metrics>(new Metrics(std::move(impl)));
}

Metrics::Metrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Metrics::~Metrics() = default;

uint16_t Metrics::port() const {
  if (!impl_->exposer_) return 0;
  auto ports = impl_->exposer_->GetListeningPorts();
  return ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
}

void Metrics::Items(uint64_t items, double seconds) {
  impl_->items_.Increment(static_cast<double>(items));
  if (items > 0) impl_->item_seconds_.Observe(seconds / static_cast<double>(items));
}
void Metrics::Busy(double seconds) { impl_->busy_.Increment(seconds); }
void Metrics::Idle(double seconds) { impl_->idle_.Increment(seconds); }
void Metrics::Lease() { impl_->leases_.Increment(); }
void Metrics::Report() { impl_->reports_.Increment(); }

}  // namespace ballast::worker
