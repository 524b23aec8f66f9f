// KubeClient: the interface through which the operator's reconcilers, the
// informers and leader election talk to the Kubernetes API server.
//
// Objects are nlohmann::json documents exactly as the API server sends them;
// a resource is named by a small ResourceRef. Every failure comes back as a
// Status whose code a caller acts on:
//   NotFound     404
//   Conflict     409 (a stale resourceVersion, or AlreadyExists on create)
//   Gone         410 (a resourceVersion too old to watch or list from: relist)
//   Invalid      400, 422 (the API server's message verbatim, e.g. a CRD's
//                schema error), 401 and 403 (credentials or RBAC: retrying
//                will not help until someone changes them), other 4xx
//   Unavailable  429, 5xx, timeouts and connection failures: retry with backoff
//
// Thread-safety: implementations are safe to call from several threads at
// once. Cancellation is safe to use from several threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::kube {

// A resource type, and optionally one namespace and one object of it.
struct ResourceRef {
  std::string group;     // "" for the core group, "apps", "ballast.io", ...
  std::string version;   // "v1"
  std::string resource;  // lower-case plural: "configmaps"
  bool namespaced = true;
  std::string ns;    // "" = all namespaces (list and watch only)
  std::string name;  // "" = the collection

  // A copy in namespace `ns` / naming object `name`.
  ResourceRef In(std::string namespace_name) const;
  ResourceRef Named(std::string object_name) const;
  // The request path: "/api/v1/namespaces/default/configmaps/x",
  // "/apis/ballast.io/v1alpha1/namespaces/ns/weightedjobs".
  std::string Path() const;
  // "configmaps default/x", for messages.
  std::string Describe() const;
};

// Well-known resources.
ResourceRef ConfigMaps();
ResourceRef Namespaces();
ResourceRef Leases();  // coordination.k8s.io/v1

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;  // 0: no paging (the API server returns everything)
};

struct ObjectList {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // of the list; watch from here
};

struct ApplyOptions {
  std::string field_manager = "ballast-operator";
  bool force = false;  // take ownership of fields other managers own
  // "" for the object; "status" applies to its status subresource (a
  // Node's conditions, which the object's own endpoint ignores).
  std::string subresource;
};

struct DeleteOptions {
  std::string propagation_policy;  // "", "Foreground", "Background", "Orphan"
  std::string precondition_uid;    // delete only this incarnation
  std::string precondition_resource_version;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kError;
  nlohmann::json object;  // the object; for kBookmark only its metadata.resourceVersion
  Status error;           // for kError: the event's Status (Gone for 410)
};

struct WatchOptions {
  std::string resource_version;  // "" = from now (the API server's choice)
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // the API server ends the watch after this
  std::string label_selector;
  std::string field_selector;
  // Called once when the API server has answered 200 and the stream of
  // events begins (optional; on the calling thread).
  std::function<void()> on_open;
};

// A one-shot signal to stop blocking calls (Watch, backoff sleeps) from
// another thread.
class Cancellation {
 public:
  // Idempotent; runs every registered callback once.
  void Cancel();
  bool cancelled() const;
  // Registers `fn` to run on Cancel (at once when already cancelled).
  // Returns an id for Unregister.
  uint64_t OnCancel(std::function<void()> fn);
  void Unregister(uint64_t id);
  // Sleeps for `duration` or until cancelled; returns true when cancelled.
  bool WaitFor(std::chrono::milliseconds duration) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::function<void()>> callbacks_;
};

// Returns false to end the watch.
using WatchCallback = std::function<bool(const WatchEvent&)>;

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  // The object `ref` names. NotFound when it does not exist.
  virtual StatusOr<nlohmann::json> Get(const ResourceRef& ref) = 0;
  // The objects of `ref`'s collection (one namespace, or all when ref.ns is
  // empty), following continue tokens when options.limit is set.
  virtual StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) = 0;
  // Creates `object` in ref's collection (ref.name is ignored; the object's
  // metadata.name or generateName is used). Returns the created object;
  // Conflict when it already exists.
  virtual StatusOr<nlohmann::json> Create(const ResourceRef& ref, const nlohmann::json& object) = 0;
  // Replaces the object (PUT). Conflict when metadata.resourceVersion is stale.
  virtual StatusOr<nlohmann::json> Update(const ResourceRef& ref, const nlohmann::json& object) = 0;
  // JSON merge patch (RFC 7386). A metadata.resourceVersion in the patch makes
  // it conditional (Conflict when stale).
  virtual StatusOr<nlohmann::json> MergePatch(const ResourceRef& ref,
                                              const nlohmann::json& patch) = 0;
  // Server-side apply of `object` (apiVersion, kind and metadata.name set) as
  // options.field_manager. Creates the object when it does not exist.
  // Conflict when another manager owns a field and !options.force.
  virtual StatusOr<nlohmann::json> Apply(const ResourceRef& ref, const nlohmann::json& object,
                                         const ApplyOptions& options = {}) = 0;
  // Merge patch of the status subresource, e.g. {"status": {"phase": "Running"}}.
  virtual StatusOr<nlohmann::json> PatchStatus(const ResourceRef& ref,
                                               const nlohmann::json& patch) = 0;
  // Deletes the object. NotFound when it is already gone; Conflict when a
  // precondition fails.
  virtual Status Delete(const ResourceRef& ref, const DeleteOptions& options = {}) = 0;
  // Streams changes of ref's collection (or of the one object when ref.name is
  // set) to `on_event`, on the calling thread, until the API server closes the
  // stream (returns Ok), `on_event` returns false (Ok), `cancel` is cancelled
  // (Ok), or the request fails (its Status; Gone when the resourceVersion is
  // too old). ERROR events are passed to `on_event` as kError with `error` set.
  virtual Status Watch(const ResourceRef& ref, const WatchOptions& options,
                       const WatchCallback& on_event, Cancellation* cancel = nullptr) = 0;
};

// Maps an HTTP status and the API server's response body (a metav1.Status,
// when it is one) to a Status, carrying the server's message verbatim.
// `what` describes the request for responses without a message.
Status StatusFromHttp(int http_code, const std::string& body, const std::string& what);
// Maps a metav1.Status object (as sent in watch ERROR events).
Status StatusFromApiStatus(const nlohmann::json& status, const std::string& what);

// Calls `fn` until it returns something other than Conflict, at most
// `attempts` times, with a short growing pause between attempts. `fn` must
// re-read what it changes. Returns fn's last Status.
Status RetryOnConflict(const std::function<Status()>& fn, int attempts = 5);

// "namespace/name", or "name" for a cluster-scoped object: an informer's key.
std::string ObjectKey(const nlohmann::json& object);
// metadata.resourceVersion ("" when absent).
std::string ResourceVersionOf(const nlohmann::json& object);

}  // namespace ballast::kube
