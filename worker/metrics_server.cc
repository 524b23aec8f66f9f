#include "worker/metrics_server.h"

#include <fmt/format.h>

namespace ballast::worker {

StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(
    const std::string& listen, const std::shared_ptr<prometheus::Registry>& registry) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return Status::Unavailable(fmt::format("cannot serve metrics on {}: {}", listen, e.what()));
  }
  exposer->RegisterCollectable(registry);
  return exposer;
}

uint16_t MetricsPort(const prometheus::Exposer* exposer) {
  if (exposer == nullptr) return 0;
  const auto ports = exposer->GetListeningPorts();
  return ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
}

}  // namespace ballast::worker
