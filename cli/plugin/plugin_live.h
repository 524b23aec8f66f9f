// `kubectl ballast top`'s live view: a running job's progress as its
// coordinator knows it at the redraw (GET /v1/jobs/{job}/progress,
// core/protocol/progress.h), laid over the view of the WeightedJob's status
// (plugin_top.h), whose progress the operator writes only every step of the
// job or every --progress-interval.
//
// The plugin reaches the coordinator through the API server's service proxy
// (GET /api/v1/namespaces/NS/services/http:NAME:PORT/proxy/v1/jobs/...): the
// user's own credentials and RBAC (`get` on `services/proxy`), no network
// path to the operator's pod. The coordinator's Service is found from where
// the job's workers reach it (their pods' BALLAST_COORDINATOR), else from the
// operator's leading pod (its --coordinator-url, as `fit` finds the history);
// the first of them that names a Service (NAME.NAMESPACE[.svc...]) is used.
//
// Without a live answer — the address is not a Service's, RBAC refuses the
// proxy, the coordinator is not up or does not host the job — top shows the
// status, with the reason in one line; the live view is asked again after a
// pause that doubles with each failure (LiveRetrySeconds). A finished job is
// read from its status alone.
//
// The pure parts (the addresses, the answer's reading, the merge, the pause)
// are functions; LiveProgress does the requests.
//
// Thread-safety: pure functions; a LiveProgress is used by one thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/plugin/plugin_top.h"
#include "core/common/status.h"
#include "core/protocol/progress.h"
#include "net/kube/http_client.h"

namespace ballast::cli {

// The largest live answer read (the coordinator's is a few tens of KiB).
inline constexpr size_t kMaxLiveAnswerBytes = size_t{256} << 10;

// The coordinator's URL a worker pod's containers are given
// (BALLAST_COORDINATOR); nullopt when none carries it.
std::optional<std::string> CoordinatorUrlOfPod(const nlohmann::json& pod);

// Where an address was read, for messages ("the job's worker pods").
struct CoordinatorAddress {
  std::string url;
  std::string source;
};

// The API server path of the job `ns`/`name`'s progress through the service
// proxy, from the first address that names a Service; Invalid saying why
// none does (naming each address and where it was read) otherwise, NotFound
// when there is none.
StatusOr<std::string> LiveProgressPath(const std::vector<CoordinatorAddress>& addresses,
                                       const std::string& ns, const std::string& name);

// The progress in an answer of the proxy (`code`, `body`). Otherwise a
// one-line reason: NotFound when the coordinator does not host the job (not
// registered yet, suspended, or removed once finished) or the Service does not
// exist; Unavailable when RBAC refuses the proxy, the coordinator is not up, or
// its answer does not read; the API server's own message where it gave one.
StatusOr<protocol::JobProgress> ReadLiveAnswer(int code, const std::string& body);

// `view` (of the job's status) with the live figures of `live` over it:
// the job's and each shown node's items, costs, speeds and steals, the node
// count, the workers (those reporting) and the cost model; never fewer items
// or less cost than the status had (a node's items count this coordinator
// session's; the status's may count an earlier one's). Each node keeps the status's weight, or —
// when the status has no row of some node yet — every node takes its prior from the coordinator, so
// the shares stay of one kind. The source is kLive, the status's age unset. A finished view is
// returned as it is.
TopView WithLive(TopView view, const protocol::JobProgress& live);

// Seconds before the live view is asked again after `failures` failures in a
// row (>= 1): 5, doubling, at most 60.
double LiveRetrySeconds(int failures);

// Reads a job's live progress through the API server, finding the
// coordinator's Service once (and again after a failure).
class LiveProgress {
 public:
  // `client` must outlive this; its request timeout bounds each request.
  LiveProgress(kube::HttpKubeClient& client, std::string ns, std::string job);

  // The progress at unix time `now`, or the reason there is none (the last
  // failure's, without a request, while its pause lasts).
  StatusOr<protocol::JobProgress> Read(double now);

 private:
  StatusOr<std::string> Locate();
  std::vector<CoordinatorAddress> Addresses();

  kube::HttpKubeClient& client_;
  std::string ns_;
  std::string job_;
  std::optional<std::string> path_;  // the proxy path, once found
  Status last_failure_;
  int failures_ = 0;
  double retry_at_ = 0;
};

}  // namespace ballast::cli
