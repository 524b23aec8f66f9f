// ConfigMapHistory: the history of measured speeds without Prometheus — the
// speeds the jobs this operator finished recorded (history/speed_store.h),
// kept in one ConfigMap (the chart makes it, as it makes the leader Lease,
// so that `helm uninstall` removes it; RBAC lets the operator get and update
// that one name). It survives an operator restart and a change of leader.
//
// Neither call waits for the API server on a reconcile pass's behalf when it
// need not:
// - Record queues the job's speeds and returns; one writer thread takes
//   everything queued, adds it all to the ConfigMap as this instance last
//   read or wrote it, and updates it with that resourceVersion (a Conflict,
//   when someone else wrote since, reads it again). A job's speeds cost one
//   update, and jobs that end together (a burst of a hundred) one between
//   them. A write that fails loses those speeds (history is a hint:
//   the next jobs measure again) and is logged; Flush returns its error.
// - Lookup waits for the writer if it has records queued (so that what this
//   operator recorded is in the answer), then answers from the store this
//   instance last read or wrote when that was under `fresh_for` ago
//   (default 5 s), and reads it (one GET) otherwise. A new leader has read nothing yet, so it
//   reads; what another operator wrote in the last `fresh_for` is all a lookup can miss.
// A ConfigMap whose text does not parse is logged once per read, reported as
// the lookup's trouble, and replaced by the next write, which starts from an
// empty store. A missing ConfigMap is an empty store; the writer creates it
// (an operator run without the chart).
//
// Thread-safety: safe from several threads (the API server orders writes).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/history/history_source.h"
#include "core/history/speed_store.h"
#include "net/kube/client.h"

namespace ballast::runtime {

// The key of the ConfigMap's data that holds the store's text.
inline constexpr const char* kHistoryDataKey = "speeds.json";

// How ConfigMapHistory writes and caches (defaults for the operator).
struct ConfigMapHistoryOptions {
  history::StoreLimits limits;
  // How long a store read or written stays good for lookups (0: each reads).
  std::chrono::milliseconds fresh_for{5000};
  // Records queued and not yet written, at most; past it Record refuses.
  size_t max_queued = 4096;
  // What `fresh_for` is counted on (tests set their own).
  std::function<std::chrono::steady_clock::time_point()> clock = std::chrono::steady_clock::now;
};

class ConfigMapHistory final : public history::HistorySource {
 public:
  using Options = ConfigMapHistoryOptions;

  // `client` must outlive this; Flush before it goes.
  ConfigMapHistory(kube::KubeClient& client, std::string ns, std::string name,
                   Options options = {});
  // Stops the writer after it has written what is queued.
  ~ConfigMapHistory() override;
  ConfigMapHistory(const ConfigMapHistory&) = delete;
  ConfigMapHistory& operator=(const ConfigMapHistory&) = delete;

  history::HistoryLookup Lookup(const history::HistoryKey& key,
                                const std::vector<std::string>& nodes, double now) override;
  // Queues; Unavailable when max_queued records wait already.
  Status Record(const history::HistoryKey& key, const std::map<std::string, double>& speeds,
                double now) override;
  // Conflict after five tries, or the API server's error, of the last write
  // that failed since the previous Flush.
  Status Flush() override;

  // "ConfigMap <ns>/<name>", for messages.
  std::string Describe() const;

 private:
  struct Queued {
    history::HistoryKey key;
    std::map<std::string, double> speeds;
    double now = 0;
  };
  // The store and the ConfigMap it came from (nullopt: none yet). A corrupt
  // text gives an empty store and sets `corrupt` to why.
  struct Read {
    history::SpeedStore store;
    std::optional<nlohmann::json> config_map;
    std::string corrupt;
  };
  StatusOr<Read> ReadStore();
  // The store a ConfigMap object holds (parsed from its text, as bounded).
  Read FromObject(nlohmann::json object) const;
  // The ConfigMap as written.
  StatusOr<nlohmann::json> WriteStore(const Read& read, const history::SpeedStore& store);
  // One read-add-write of `batch`, retried on Conflict.
  Status WriteBatch(const std::vector<Queued>& batch);
  void WriterLoop();
  // Keeps `read` as the freshest known (under mutex_).
  void Remember(Read read);

  kube::KubeClient& client_;
  const kube::ResourceRef ref_;
  const Options options_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Queued> queue_;
  uint64_t queued_total_ = 0;   // records ever queued
  uint64_t written_total_ = 0;  // of them, taken by the writer and done with
  Status last_error_;           // since the last Flush
  bool stopping_ = false;
  // The ConfigMap this instance last read or wrote, and when.
  std::optional<Read> last_;
  std::chrono::steady_clock::time_point last_at_;
  std::thread writer_;  // last: started once the rest exists
};

}  // namespace ballast::runtime
