#include "cli/plugin/plugin_cluster.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>
#include <utility>

// After the standard headers (DEVELOPERS.md).
#include <cpprest/base_uri.h>

#include "cli/cli_common.h"
#include "cli/plugin/plugin_top.h"
#include "core/common/duration.h"
#include "core/common/json_read.h"
#include "core/history/prometheus_history.h"
#include "core/history/speed_store.h"
#include "operator/runtime/history_configmap.h"
#include "operator/runtime/resources.h"

namespace ballast::cli {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{4} << 20;  // history::AnswerLimits' default

// The value of `--name=value` or `--name value` at args[*i]; advances *i
// past a separate value. nullopt when args[*i] is another argument.
std::optional<std::string> FlagValue(const std::vector<std::string>& args, size_t* i,
                                     const std::string& name) {
  const std::string& arg = args[*i];
  if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
  if (arg == name && *i + 1 < args.size()) return args[++*i];
  return std::nullopt;
}

// The leading operator replica's pod; NotFound when none is labelled so.
StatusOr<nlohmann::json> LeaderPod(kube::KubeClient& client) {
  kube::ListOptions options;
  options.label_selector = "ballast.io/coordinator=leader";
  BALLAST_ASSIGN_OR_RETURN(kube::ObjectList pods, client.List(runtime::Pods(), options));
  for (const nlohmann::json& pod : pods.items) {
    if (json_read::TextAt(json_read::At(pod, "status"), "phase") == "Running") return pod;
  }
  if (!pods.items.empty()) return pods.items.front();
  return Status::NotFound(
      "no Ballast operator pod labelled ballast.io/coordinator=leader in the cluster (is the "
      "chart installed?); name the history with --prometheus URL or --history-configmap "
      "NAMESPACE/NAME");
}

const HistoryWording kClusterWording{"the history", "the cluster's nodes"};

StatusOr<FitSpeeds> ProxiedPrometheusSpeeds(kube::HttpKubeClient& client, const FitFlags& flags,
                                            const OperatorHistory& history,
                                            const std::vector<fuzzy::NodeFacts>& nodes,
                                            double now) {
  BALLAST_ASSIGN_OR_RETURN(std::string base, ServiceProxyBase(history.prometheus_url));
  BALLAST_ASSIGN_OR_RETURN(double window_s,
                           FitWindowSeconds(flags.window.empty() ? history.window : flags.window));
  const std::string asked = fmt::format(
      "the operator's Prometheus {} (through the API server: {}/)", history.prometheus_url, base);
  const auto ask = [&](const std::string& query) -> StatusOr<std::vector<fuzzy::NodeHistory>> {
    const std::string path = fmt::format("{}/api/v1/query?query={}&time={:.3f}", base,
                                         web::uri::encode_data_string(query), std::floor(now));
    auto body = client.GetText(path, kMaxAnswerBytes);
    if (!body.ok()) {
      return Status::Unavailable(fmt::format("{}: {}", asked, body.status().message()));
    }
    auto answer = history::ParseHistoryAnswer(*body);
    if (!answer.ok()) {
      return Status::Unavailable(fmt::format("{}: {}", asked, answer.status().message()));
    }
    return answer;
  };
  const auto key = history::HistoryKey::FromText(flags.workload);
  BALLAST_ASSIGN_OR_RETURN(auto answer, ask(history::HistoryQuery(key, window_s)));
  // Nothing recorded yet: what coordinators older than the recorded gauge
  // measured (PrometheusHistory::History does the same).
  if (answer.empty()) {
    BALLAST_ASSIGN_OR_RETURN(answer, ask(history::LegacyHistoryQuery(key, window_s)));
  }
  const auto at = std::chrono::sys_seconds(std::chrono::seconds(static_cast<int64_t>(now)));
  return SelectNodeSpeeds(
      answer, nodes,
      fmt::format("{}, workload {}, the {} up to {:%Y-%m-%dT%H:%M:%SZ} (the operator's history "
                  "query)",
                  asked, flags.workload, FormatDuration(window_s), at),
      kClusterWording);
}

StatusOr<FitSpeeds> ConfigMapSpeeds(kube::KubeClient& client, const FitFlags& flags,
                                    const std::string& configmap, const std::string& flag,
                                    const std::vector<fuzzy::NodeFacts>& nodes, double now) {
  BALLAST_ASSIGN_OR_RETURN(auto name, SplitNamespacedName(configmap, flag));
  const std::string what = fmt::format("the operator's ConfigMap {}/{}", name.first, name.second);
  auto object = client.Get(kube::ConfigMaps().In(name.first).Named(name.second));
  if (!object.ok()) {
    return Status(object.status().code(), fmt::format("{}: {}", what, object.status().message()));
  }
  const std::string text =
      json_read::TextAt(json_read::At(*object, "data"), runtime::kHistoryDataKey);
  auto store = history::StoreFromText(text, history::StoreLimits{});
  if (!store.ok()) {
    return Status::Invalid(
        fmt::format("{}, key {}: {}", what, runtime::kHistoryDataKey, store.status().message()));
  }
  std::vector<std::string> names;
  for (const fuzzy::NodeFacts& node : nodes) names.push_back(node.name);
  return SelectNodeSpeeds(
      history::LookupHistory(*store, history::HistoryKey::FromText(flags.workload), names, now),
      nodes,
      fmt::format("{}, workload {} (the speeds of the jobs the operator finished, relative to "
                  "each job's mean)",
                  what, flags.workload),
      kClusterWording);
}

}  // namespace

std::vector<std::string> OperatorArgs(const nlohmann::json& pod) {
  const nlohmann::json& containers = json_read::At(json_read::At(pod, "spec"), "containers");
  std::vector<std::string> first;
  if (!containers.is_array()) return first;
  for (const auto& container : containers) {
    std::vector<std::string> args;
    const nlohmann::json& container_args = json_read::At(container, "args");
    if (!container_args.is_array()) continue;
    for (const auto& arg : container_args) {
      if (arg.is_string()) args.push_back(arg.get<std::string>());
    }
    if (first.empty()) first = args;
    for (const std::string& arg : args) {
      if (arg.rfind("--mark-leader-pod", 0) == 0) return args;
    }
  }
  return first;
}

std::optional<std::string> CoordinatorUrlOfArgs(const std::vector<std::string>& args) {
  std::optional<std::string> url;
  for (size_t i = 0; i < args.size(); ++i) {
    if (auto value = FlagValue(args, &i, "--coordinator-url")) url = std::move(value);
  }
  return url;
}

OperatorHistory OperatorHistoryFromArgs(const std::vector<std::string>& args,
                                        const std::string& pod_namespace) {
  OperatorHistory out;
  std::string lease_namespace = "default";  // the operator's defaults (operator_command.cc)
  std::string lease_name = "ballast-operator";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--no-history") out.disabled = true;
    if (auto v = FlagValue(args, &i, "--prometheus-url"))
      out.prometheus_url = *v;
    else if (auto w = FlagValue(args, &i, "--prometheus-window"))
      out.window = *w;
    else if (auto c = FlagValue(args, &i, "--history-configmap"))
      out.configmap = *c;
    else if (auto n = FlagValue(args, &i, "--lease-namespace"))
      lease_namespace = *n;
    else if (auto l = FlagValue(args, &i, "--lease-name"))
      lease_name = *l;
  }
  if (!out.configmap.empty() && out.configmap.find('/') == std::string::npos) {
    out.configmap = pod_namespace + "/" + out.configmap;
  }
  if (out.prometheus_url.empty() && out.configmap.empty()) {
    out.configmap = lease_namespace + "/" + lease_name + "-history";
  }
  return out;
}

StatusOr<std::string> ServiceProxyPath(const std::string& url) {
  const auto refuse = [&url](const std::string& why) {
    return Status::Invalid(fmt::format("{}: {}", json_read::Cut(url), why));
  };
  std::string scheme;
  std::string rest;
  for (const char* prefix : {"http://", "https://"}) {
    if (url.rfind(prefix, 0) == 0) {
      scheme = std::string(prefix).substr(0, std::string(prefix).find(':'));
      rest = url.substr(std::string(prefix).size());
    }
  }
  if (scheme.empty()) return refuse("not an http(s) URL");
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (prefix.find_first_of("?#") != std::string::npos) return refuse("a query in the URL");
  const auto colon = authority.rfind(':');
  const std::string host = authority.substr(0, colon);
  const std::string port =
      colon == std::string::npos ? (scheme == "https" ? "443" : "80") : authority.substr(colon + 1);
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5) {
    return refuse("not a port number");
  }
  std::vector<std::string> labels;
  for (size_t at = 0; at <= host.size();) {
    const auto dot = host.find('.', at);
    labels.push_back(host.substr(at, dot == std::string::npos ? std::string::npos : dot - at));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  const bool service_name = labels.size() == 2 || (labels.size() >= 3 && labels[2] == "svc");
  if (!service_name || labels[0].empty() || labels[1].empty() ||
      host.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos) {
    return refuse("its host is not a Service's name (NAME.NAMESPACE[.svc...])");
  }
  return fmt::format("/api/v1/namespaces/{}/services/{}:{}:{}/proxy{}", labels[1], scheme,
                     labels[0], port, prefix);
}

StatusOr<std::string> ServiceProxyBase(const std::string& url) {
  auto path = ServiceProxyPath(url);
  if (path.ok()) return path;
  return Status::Invalid(
      fmt::format("the operator's Prometheus {}; reach it yourself (kubectl port-forward) and pass "
                  "--prometheus URL",
                  path.status().message()));
}

StatusOr<FitSpeeds> ClusterHistorySpeeds(kube::HttpKubeClient& client, const FitFlags& flags,
                                         const std::vector<fuzzy::NodeFacts>& nodes, double now) {
  if (!flags.prometheus.empty()) {
    FitSpeedsOptions options;
    options.source = flags.prometheus;
    options.workload = flags.workload;
    options.window = flags.window;
    options.timeout_s = flags.timeout_s;
    if (!IsPrometheusUrl(flags.prometheus)) {
      return Status::Invalid(
          fmt::format("--prometheus {}: expected an http:// or https:// URL", flags.prometheus));
    }
    return LoadFitSpeeds(options, nodes);
  }
  if (!flags.history_configmap.empty()) {
    return ConfigMapSpeeds(client, flags, flags.history_configmap, "--history-configmap", nodes,
                           now);
  }
  BALLAST_ASSIGN_OR_RETURN(nlohmann::json pod, LeaderPod(client));
  const nlohmann::json& meta = json_read::At(pod, "metadata");
  const std::string pod_name =
      json_read::TextAt(meta, "namespace") + "/" + json_read::TextAt(meta, "name");
  const OperatorHistory history =
      OperatorHistoryFromArgs(OperatorArgs(pod), json_read::TextAt(meta, "namespace"));
  if (history.disabled) {
    return Status::NotFound(fmt::format(
        "the operator (pod {}) runs with --no-history: it keeps no speeds; name a Prometheus "
        "with --prometheus URL",
        pod_name));
  }
  if (!history.prometheus_url.empty()) {
    return ProxiedPrometheusSpeeds(client, flags, history, nodes, now);
  }
  return ConfigMapSpeeds(client, flags, history.configmap,
                         fmt::format("the --history-configmap of pod {}", pod_name), nodes, now);
}

}  // namespace ballast::cli
