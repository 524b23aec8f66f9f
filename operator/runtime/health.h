// The operator's probes: what /healthz (liveness) and /readyz (readiness) on
// --health-listen answer, as a pure function of what the operator's loops
// report (EvaluateHealth), and the small HTTP server that serves them
// (HealthServer, on the coordinator's hardened HttpFront).
//
//   /healthz  200 "ok" while the process's loops make progress (a standby
//             has none to check beyond answering: its elector's requests
//             time out on their own); 503 naming
//             what is stuck when a reconcile has run longer than the stall
//             bound, or an informer's list and watch have failed without a
//             success for longer than it (a dead watch: the caches no longer
//             follow the API server). The kubelet restarts the container.
//   /readyz   200 "ok" on a standby replica (waiting for the Lease: nothing
//             to sync, and a PodDisruptionBudget or `helm upgrade --wait`
//             needs it Ready) and on a leader whose informers have synced;
//             503 "informer caches not synced yet" before that, and while
//             the replica stops.
//
// Workers do not use these: they reach the coordinator's port, which only
// the leader opens (and, with --mark-leader-pod, the Service selects only
// the leader's pod).
//
// Thread-safety: EvaluateHealth is pure; HealthServer's probe callback runs
// on the server's threads and must be thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::net {
class HttpFront;
}

namespace ballast::runtime {

using HealthClock = std::chrono::steady_clock;

// One informer as the probes see it.
struct InformerHealth {
  std::string resource;  // e.g. "pods"
  bool synced = false;
  // Since when its lists and watches have failed without a success between;
  // nullopt while it works.
  std::optional<HealthClock::time_point> failing_since;
  std::string last_error;
};

// What the operator's loops report at one moment.
struct HealthInputs {
  enum class Role { kStarting, kStandby, kLeader, kStopping };
  Role role = Role::kStarting;
  std::vector<InformerHealth> informers;  // empty unless leading
  // Start times of the reconciles running now (one per busy worker thread).
  std::vector<HealthClock::time_point> reconciles_running;
};

struct HealthVerdict {
  bool live = true;
  bool ready = false;
  std::string live_message = "ok";   // what /healthz answers
  std::string ready_message = "ok";  // what /readyz answers
};

// The probes' answers at `now`: not live when a reconcile has run longer
// than `stall_bound` or an informer has failed for longer than it (the
// message names the informer, how long and its last error, or how long the
// reconcile has run); ready as the header says. Never fails.
HealthVerdict EvaluateHealth(const HealthInputs& inputs, HealthClock::time_point now,
                             std::chrono::milliseconds stall_bound);

// Serves GET /healthz and /readyz on address:port from `probe`, which is
// called once per request. Other paths answer 404.
class HealthServer {
 public:
  // Binds and starts serving. Unavailable when the address cannot be bound
  // (the message names it), Invalid for a bad address.
  static StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& address, uint16_t port,
                                                       std::function<HealthVerdict()> probe);
  ~HealthServer();  // stops serving
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  uint16_t port() const;

 private:
  explicit HealthServer(std::unique_ptr<net::HttpFront> front);
  std::unique_ptr<net::HttpFront> front_;
};

}  // namespace ballast::runtime
