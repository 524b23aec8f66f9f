// The /metrics endpoint of the worker's processes (the worker loop and the node
// probe): a prometheus-cpp Exposer serving one registry.
// Thread-safety: the functions are; the Exposer is prometheus-cpp's.
#pragma once

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/status.h"

namespace ballast::worker {

// Serves `registry` on /metrics at `listen` (host:port; port 0 picks a free
// one) with one thread. Returns the exposer, or Unavailable naming the address
// and the cause.
StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(
    const std::string& listen, const std::shared_ptr<prometheus::Registry>& registry);

// The port `exposer` listens on; 0 when it is null.
uint16_t MetricsPort(const prometheus::Exposer* exposer);

}  // namespace ballast::worker
