// HttpKubeClient: the KubeClient that speaks REST to a real API server over
// cpprestsdk — TLS with the config's CA (or the system roots), a client
// certificate and key from memory, a bearer token re-read on each request
// (projected tokens rotate), request timeouts, and a count of API requests per
// verb (get, list, watch, create, update, patch, delete) so the operator can
// report what a job cost the API server.
//
// cpprestsdk stays out of this header: callers need none of its macros.
//
// Thread-safety: every method may be called from several threads at once;
// each Watch holds its own connection for as long as it runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "net/kube/client.h"
#include "net/kube/kubeconfig.h"

namespace ballast::kube {

struct HttpClientOptions {
  // A request that gets no byte from the API server for this long fails with
  // Unavailable. A watch waits its timeout_seconds plus this.
  std::chrono::seconds request_timeout{30};
  std::string user_agent = "ballast-operator";
};

// An HTTP answer as it came: its status code and body.
struct HttpAnswer {
  int code = 0;
  std::string body;
};

class HttpKubeClient final : public KubeClient {
 public:
  // Checks the config (the server URL, that the CA, the certificate and the
  // key parse and belong together). Returns Invalid naming config.source
  // otherwise. Makes no request.
  static StatusOr<std::unique_ptr<HttpKubeClient>> Create(const ClusterConfig& config,
                                                          const HttpClientOptions& options = {});
  ~HttpKubeClient() override;

  StatusOr<nlohmann::json> Get(const ResourceRef& ref) override;
  StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) override;
  StatusOr<nlohmann::json> Create(const ResourceRef& ref, const nlohmann::json& object) override;
  StatusOr<nlohmann::json> Update(const ResourceRef& ref, const nlohmann::json& object) override;
  StatusOr<nlohmann::json> MergePatch(const ResourceRef& ref, const nlohmann::json& patch) override;
  StatusOr<nlohmann::json> Apply(const ResourceRef& ref, const nlohmann::json& object,
                                 const ApplyOptions& options = {}) override;
  StatusOr<nlohmann::json> PatchStatus(const ResourceRef& ref,
                                       const nlohmann::json& patch) override;
  Status Delete(const ResourceRef& ref, const DeleteOptions& options = {}) override;
  Status Watch(const ResourceRef& ref, const WatchOptions& options, const WatchCallback& on_event,
               Cancellation* cancel = nullptr) override;

  // GET of `path` (from the server's root, with its query) whose answer is
  // not a Kubernetes object: a Service's or a pod's API server proxy, e.g.
  // "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy/api/v1/query?query=...".
  // Returns the body of a 2xx answer; errors as the other calls, and
  // Unavailable naming the path for a body longer than `max_bytes`.
  StatusOr<std::string> GetText(const std::string& path, size_t max_bytes);
  // The same GET, its answer whatever its code (a Service's own refusal
  // beside the API server's): Unavailable naming the path only when no
  // answer came, or its body is longer than `max_bytes`.
  StatusOr<HttpAnswer> GetAnswer(const std::string& path, size_t max_bytes);

  // Requests sent so far, by Kubernetes verb ("get", "list", "watch",
  // "create", "update", "patch", "delete"); failed requests count too.
  std::map<std::string, uint64_t> RequestCounts() const;
  uint64_t TotalRequests() const;

  struct Impl;

 private:
  explicit HttpKubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::kube
