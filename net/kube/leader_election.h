// LeaderElector: one leader among several operator replicas, through a
// coordination.k8s.io/v1 Lease (after client-go's leaderelection).
//
// Every retry_period each elector reads the Lease. It takes the Lease when
// nobody holds it, when the holder released it (holderIdentity ""), or when
// the record has not changed for lease_duration by this elector's own clock
// (renewTime is another machine's clock, so it is compared for change only).
// The leader renews every retry_period; all writes are PUTs conditional on
// the resourceVersion, so two electors can never both win. A leader that
// cannot renew within renew_deadline stops leading (on_stopped_leading) and
// competes again. Stop() releases a held Lease (holder "", duration 1 s) so a
// successor takes over at its next retry instead of after lease_duration.
//
// Thread-safety: IsLeader, Leader and Stop may be called from any thread.
// Callbacks run on the elector's thread, except the on_stopped_leading that
// Stop() itself causes, which runs on Stop's caller; on_started_leading must
// return promptly (start the work elsewhere).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "net/kube/client.h"

namespace ballast::kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;                             // unique per replica, e.g. the pod name
  std::chrono::milliseconds lease_duration{15000};  // whole seconds on the Lease, at least 1
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // optional
};

class LeaderElector {
 public:
  // `client` must outlive the elector.
  LeaderElector(KubeClient& client, LeaderElectionConfig config);
  ~LeaderElector();  // Stop()
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts competing on a thread of its own. Call once.
  void Start();
  // Stops competing; when leading, releases the Lease and calls
  // on_stopped_leading. Idempotent.
  void Stop();

  bool IsLeader() const { return leading_.load(); }
  // The holder last observed on the Lease ("" when none).
  std::string Leader() const;

 private:
  void Run();
  // Returns true when this elector holds the Lease after the call.
  bool TryAcquireOrRenew();
  StatusOr<nlohmann::json> ReadLease(bool* created);
  void Observe(const nlohmann::json& spec);
  void SetLeading(bool leading);
  void Release();

  KubeClient& client_;
  const LeaderElectionConfig config_;
  const ResourceRef lease_;
  Cancellation cancel_;
  std::thread thread_;
  std::atomic<bool> leading_{false};

  mutable std::mutex mu_;
  std::string observed_holder_;
  nlohmann::json observed_spec_;
  std::chrono::steady_clock::time_point observed_at_{};
  std::chrono::steady_clock::time_point last_renew_{};
};

// The time as a Kubernetes MicroTime: "2024-05-01T12:00:00.123456Z".
std::string MicroTimeNow();

}  // namespace ballast::kube
