// ConfigMapHistory: the history of measured speeds without Prometheus — the
// speeds the jobs this operator finished recorded (history/speed_store.h),
// kept in one ConfigMap (the chart makes it, as it makes the leader Lease,
// so that `helm uninstall` removes it; RBAC lets the operator get and update
// that one name). It survives an operator restart and a change of leader.
//
// Each Lookup reads the ConfigMap (one GET; no cache that a new leader could
// hold stale); each Record reads, adds and updates it with the
// resourceVersion read (a Conflict reads again). A ConfigMap whose text does
// not parse is logged once per read, reported as the lookup's trouble, and
// replaced by the next Record, which starts from an empty store. A missing
// ConfigMap is an empty store; Record creates it (an operator run without
// the chart).
//
// Thread-safety: safe from several threads (the API server orders writes).
#pragma once

#include <string>

#include "core/history/history_source.h"
#include "core/history/speed_store.h"
#include "net/kube/client.h"

namespace ballast::controller {

// The key of the ConfigMap's data that holds the store's text.
inline constexpr const char* kHistoryDataKey = "speeds.json";

class ConfigMapHistory final : public history::HistorySource {
 public:
  // `client` must outlive this.
  ConfigMapHistory(kube::KubeClient& client, std::string ns, std::string name,
                   history::StoreLimits limits = {});

  history::HistoryLookup Lookup(const std::string& workload, const std::vector<std::string>& nodes,
                                double now) override;
  // Conflict after five tries; the API server's error otherwise.
  Status Record(const std::string& workload, const std::map<std::string, double>& speeds,
                double now) override;

  // "ConfigMap <ns>/<name>", for messages.
  std::string Describe() const;

 private:
  // The store and the ConfigMap it came from (nullopt: none yet). A corrupt
  // text gives an empty store and sets `corrupt` to why.
  struct Read {
    history::SpeedStore store;
    std::optional<nlohmann::json> config_map;
    std::string corrupt;
  };
  StatusOr<Read> ReadStore();
  Status WriteStore(const Read& read, const history::SpeedStore& store);

  kube::KubeClient& client_;
  const kube::ResourceRef ref_;
  const history::StoreLimits limits_;
};

}  // namespace ballast::controller
