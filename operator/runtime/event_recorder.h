// EventRecorder: posts core/v1 Events about the objects the operator manages,
// so `kubectl describe wj NAME` and `kubectl get events` tell what happened
// (pods created, job started, completed, failed, a node lost...).
//
// Events are best effort, as in client-go: Record queues the event and
// returns at once (a reconcile pass never waits for the API server on its
// account); a thread of the recorder posts them in order. A failure to post
// one is logged and counted; when more than kMaxQueued wait, new ones are
// dropped and counted.
//
// Thread-safety: Record may be called from several threads at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>

#include "net/kube/client.h"

namespace ballast::runtime {

class EventRecorder {
 public:
  // `client` must outlive the recorder. `instance` names this replica (the
  // pod or host name) in reportingInstance.
  EventRecorder(kube::KubeClient& client, std::string instance);
  ~EventRecorder();  // posts what is queued, then stops
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  static constexpr size_t kMaxQueued = 1000;

  // Posts an Event about `object` (its apiVersion, kind, namespace, name, uid
  // and resourceVersion): type Warning when `warning`, else Normal; `reason`
  // in CamelCase; `message` for people. An object without a namespace (a
  // Node) gets its event in namespace default.
  void Record(const nlohmann::json& object, bool warning, const std::string& reason,
              const std::string& message);

  uint64_t posted() const { return posted_.load(); }
  uint64_t failed() const { return failed_.load(); }  // includes dropped ones

 private:
  void Post();

  kube::KubeClient& client_;
  const std::string instance_;
  std::atomic<uint64_t> sequence_{0};
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> failed_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, nlohmann::json>> queue_;  // namespace, event
  bool stopping_ = false;
  std::thread thread_;
};

// The core/v1 Event that Record posts about `object` (its arguments), named
// `name`, at `now` (RFC 3339), from `instance`. Its message has its control
// characters written out (EscapeControls, core/common/utf8.h): a user's
// command's error or output reaches it, and `kubectl describe` and `kubectl
// get events` print it as it is to a terminal. The namespace is the
// object's, or default for a cluster-scoped one.
nlohmann::json EventObject(const nlohmann::json& object, bool warning, const std::string& reason,
                           const std::string& message, const std::string& name,
                           const std::string& now, const std::string& instance);

// The time as RFC 3339 in UTC with seconds: "2026-11-22T10:00:00Z".
std::string RfcTimeNow();

}  // namespace ballast::runtime
