#include "operator/runtime/health.h"

#include <fmt/format.h>

#include <algorithm>

#include "net/http_front.h"

namespace ballast::runtime {
namespace {

double Seconds(HealthClock::duration d) { return std::chrono::duration<double>(d).count(); }

// Why the loops are not live ("" when they are).
std::string Stalled(const HealthInputs& inputs, HealthClock::time_point now,
                    std::chrono::milliseconds bound) {
  std::vector<std::string> stalled;
  for (const auto& informer : inputs.informers) {
    if (!informer.failing_since || now - *informer.failing_since <= bound) continue;
    stalled.push_back(fmt::format("the {} informer has failed for {:.0f} s (last error: {})",
                                  informer.resource, Seconds(now - *informer.failing_since),
                                  informer.last_error));
  }
  if (!inputs.reconciles_running.empty()) {
    const auto oldest =
        *std::min_element(inputs.reconciles_running.begin(), inputs.reconciles_running.end());
    if (now - oldest > bound) {
      stalled.push_back(fmt::format("a reconcile has run for {:.0f} s", Seconds(now - oldest)));
    }
  }
  return fmt::format("{}", fmt::join(stalled, "; "));
}

}  // namespace

HealthVerdict EvaluateHealth(const HealthInputs& inputs, HealthClock::time_point now,
                             std::chrono::milliseconds stall_bound) {
  HealthVerdict verdict;
  const std::string stalled = Stalled(inputs, now, stall_bound);
  if (!stalled.empty()) {
    verdict.live = false;
    verdict.live_message =
        fmt::format("stalled longer than {:.0f} s: {}", Seconds(stall_bound), stalled);
  }
  using Role = HealthInputs::Role;
  switch (inputs.role) {
    case Role::kStarting:
      verdict.ready_message = "starting";
      return verdict;
    case Role::kStopping:
      verdict.ready_message = "stopping";
      return verdict;
    case Role::kStandby:
      verdict.ready = true;
      verdict.ready_message = "ok (standby: waiting for the leader Lease)";
      return verdict;
    case Role::kLeader:
      break;
  }
  std::vector<std::string> unsynced;
  for (const auto& informer : inputs.informers) {
    if (!informer.synced) unsynced.push_back(informer.resource);
  }
  if (inputs.informers.empty() || !unsynced.empty()) {
    verdict.ready_message = fmt::format(
        "informer caches not synced yet: {}",
        unsynced.empty() ? "not started" : fmt::format("{}", fmt::join(unsynced, ", ")));
    return verdict;
  }
  verdict.ready = true;
  return verdict;
}

StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& address,
                                                            uint16_t port,
                                                            std::function<HealthVerdict()> probe) {
  net::HttpFrontOptions options;
  options.address = address;
  options.port = port;
  options.max_connections = 16;
  options.max_body_bytes = 1024;
  options.threads = 1;
  auto front = net::HttpFront::Start(
      options,
      [probe = std::move(probe)](net::HttpRequest request,
                                 std::shared_ptr<net::HttpExchange> exchange) {
        net::HttpResponse response;
        response.content_type = "text/plain";
        const std::string path = request.target.substr(0, request.target.find('?'));
        if (request.method != "GET" || (path != "/healthz" && path != "/readyz")) {
          response.status = 404;
          response.body = "not found: GET /healthz or /readyz\n";
          exchange->Reply(std::move(response));
          return;
        }
        const HealthVerdict verdict = probe();
        const bool live = path == "/healthz";
        const bool ok = live ? verdict.live : verdict.ready;
        response.status = ok ? 200 : 503;
        response.body = (live ? verdict.live_message : verdict.ready_message) + "\n";
        exchange->Reply(std::move(response));
      },
      nullptr);
  if (!front.ok()) {
    return Status(front.status().code(), fmt::format("--health-listen {}:{}: {}", address, port,
                                                     front.status().message()));
  }
  return std::unique_ptr<HealthServer>(new HealthServer(std::move(*front)));
}

HealthServer::HealthServer(std::unique_ptr<net::HttpFront> front) : front_(std::move(front)) {}
HealthServer::~HealthServer() = default;
uint16_t HealthServer::port() const { return front_->port(); }

}  // namespace ballast::runtime
