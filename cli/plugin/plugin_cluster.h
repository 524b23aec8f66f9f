// Where `kubectl ballast fit` finds the cluster's history of measured speeds:
// the operator's own source, read from the arguments of its leading replica's
// pod (labelled ballast.io/coordinator=leader by --mark-leader-pod, as the
// chart runs it): --prometheus-url, asked through the API server's service
// proxy so that only kubectl's access is needed, or --history-configmap, the
// store of finished jobs' speeds the chart makes. Flags override either.
//
// OperatorHistoryFromArgs and ServiceProxyBase are pure; ClusterHistorySpeeds
// talks to the API server.
//
// Thread-safety: runs on the command's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/fit_speeds.h"
#include "core/common/status.h"
#include "core/fuzzy/profile.h"
#include "net/kube/client.h"
#include "net/kube/http_client.h"

namespace ballast::cli {

struct FitFlags {
  std::string profile = "raspberry-pi";
  std::string workload = "primes";
  std::string selector;
  std::string prometheus;         // --prometheus URL, asked directly
  std::string history_configmap;  // --history-configmap NAMESPACE/NAME
  std::string window;             // "" = the operator's, else the default
  double timeout_s = 5;
};

// The history the operator's arguments name.
struct OperatorHistory {
  std::string prometheus_url;  // --prometheus-url
  std::string window;          // --prometheus-window, as written
  std::string configmap;       // --history-configmap NAMESPACE/NAME
  bool disabled = false;       // --no-history
};

// Reads `--flag=value` and `--flag value` forms of the operator's flags from
// `args` (a container's args). Unknown arguments are ignored. A configmap
// without a namespace gets `pod_namespace`. Without --prometheus-url nor
// --history-configmap, the operator's default store:
// <--lease-namespace or pod_namespace>/<--lease-name>-history when
// --lease-name is given.
OperatorHistory OperatorHistoryFromArgs(const std::vector<std::string>& args,
                                        const std::string& pod_namespace);

// The value of --coordinator-url in the operator's arguments (`--flag=value`
// or `--flag value`; the last one); nullopt without one.
std::optional<std::string> CoordinatorUrlOfArgs(const std::vector<std::string>& args);

// The operator container's arguments in `pod` (the one whose args name
// --mark-leader-pod; else the first container's).
std::vector<std::string> OperatorArgs(const nlohmann::json& pod);

// The API server path that proxies to the in-cluster URL `url`
// ("http://coordinator.ballast.svc:8080" ->
// "/api/v1/namespaces/ballast/services/http:coordinator:8080/proxy"),
// without a trailing slash. Invalid "URL: why" when its host is not a
// Service's DNS name (as ServiceProxyBase), or its scheme is not http or
// https.
StatusOr<std::string> ServiceProxyPath(const std::string& url);

// The API server path that proxies to the in-cluster URL `url`
// ("http://prometheus-server.monitoring.svc:9090/prom" ->
// "/api/v1/namespaces/monitoring/services/http:prometheus-server:9090/proxy/prom"),
// without a trailing slash. Invalid naming the URL when its host is not a
// Service's DNS name (NAME.NAMESPACE, NAME.NAMESPACE.svc,
// NAME.NAMESPACE.svc.cluster.local or any cluster domain after .svc), or its
// scheme is not http or https.
StatusOr<std::string> ServiceProxyBase(const std::string& url);

// The measured speeds of `nodes` for flags.workload in the cluster's history
// at unix time `now`, as FitSpeeds (origin says where from). NotFound saying
// what to pass when no operator pod says where its history is and no flag
// does; Unavailable or Invalid from the history's source, naming it.
StatusOr<FitSpeeds> ClusterHistorySpeeds(kube::HttpKubeClient& client, const FitFlags& flags,
                                         const std::vector<fuzzy::NodeFacts>& nodes, double now);

}  // namespace ballast::cli
