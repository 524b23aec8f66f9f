#include "cli/plugin/plugin_live.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "cli/plugin/plugin_cluster.h"
#include "core/common/bounded_json.h"
#include "core/common/json_read.h"
#include "core/protocol/messages.h"
#include "operator/api/labels.h"
#include "operator/runtime/resources.h"

namespace ballast::cli {
namespace {

// The message of a Kubernetes Status object (what the API server answers an
// error with); nullopt when `body` is not one, as the coordinator's own
// refusals are not.
std::optional<std::string> ApiServerMessage(const std::string& body) {
  auto json = ParseBoundedJson(body, "the answer");
  if (!json.ok() || json_read::TextAt(*json, "kind") != "Status") return std::nullopt;
  return json_read::Cut(json_read::TextAt(*json, "message"), 240);
}

// The reason of an answer the API server gave itself (the proxy's own
// refusal: RBAC, no Service, no endpoint).
Status ApiServerRefusal(int code, const std::string& message) {
  switch (code) {
    case 401:
      return Status::Unavailable("the API server rejected the credentials: " + message);
    case 403:
      return Status::Unavailable("RBAC refuses the proxy (get services/proxy): " + message);
    case 404:
      return Status::NotFound("the API server: " + message);
    case 503:
      return Status::Unavailable("the coordinator is not reachable: " + message);
    default:
      return Status::Unavailable(fmt::format("the API server: HTTP {}: {}", code, message));
  }
}

// The reason of a refusal the coordinator sent through the proxy.
Status CoordinatorRefusal(int code, const std::string& body) {
  const protocol::Refusal refusal = protocol::ParseRefusal(body);
  if (refusal.reason == protocol::kReasonUnknownJob) {
    return Status::NotFound(
        "the coordinator does not host the job now (not registered yet, suspended, or done)");
  }
  if (refusal.reason == "no_token" || refusal.reason == "wrong_token") {
    return Status::Unavailable(
        "the coordinator has no live view (an operator older than this plugin)");
  }
  return Status::Unavailable(
      fmt::format("the coordinator: HTTP {}: {}", code, json_read::Cut(refusal.error, 120)));
}

// "GET /api/...: what" without its request, which the line has no room for.
std::string WithoutRequest(const std::string& message) {
  if (message.rfind("GET ", 0) != 0) return message;
  const auto colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

}  // namespace

std::optional<std::string> CoordinatorUrlOfPod(const nlohmann::json& pod) {
  const nlohmann::json& spec = json_read::At(pod, "spec");
  for (const nlohmann::json* container : json_read::ObjectsAt(spec, "containers")) {
    for (const nlohmann::json* env : json_read::ObjectsAt(*container, "env")) {
      if (json_read::TextAt(*env, "name") != "BALLAST_COORDINATOR") continue;
      const std::string value = json_read::TextAt(*env, "value");
      if (!value.empty()) return value;
    }
  }
  return std::nullopt;
}

StatusOr<std::string> LiveProgressPath(const std::vector<CoordinatorAddress>& addresses,
                                       const std::string& ns, const std::string& name) {
  if (addresses.empty()) {
    return Status::NotFound(
        "no address of the coordinator: the job has no worker pod yet, and no operator pod "
        "labelled ballast.io/coordinator=leader is readable");
  }
  std::string why;
  for (const CoordinatorAddress& address : addresses) {
    auto base = ServiceProxyPath(address.url);
    if (base.ok()) {
      return fmt::format("{}/v1/jobs/{}/progress", *base, api::CoordinatorJobId(ns, name));
    }
    why += fmt::format("{}{} ({}) is not a Service's, which the API server could proxy to",
                       why.empty() ? "" : "; ", json_read::Cut(address.url), address.source);
  }
  return Status::Invalid(why);
}

StatusOr<protocol::JobProgress> ReadLiveAnswer(int code, const std::string& body) {
  if (code != 200) {
    if (auto message = ApiServerMessage(body)) return ApiServerRefusal(code, *message);
    return CoordinatorRefusal(code, body);
  }
  auto json = protocol::ParseJsonText(body);
  auto progress = json.ok() ? protocol::ParseJobProgress(*json)
                            : StatusOr<protocol::JobProgress>(json.status());
  if (!progress.ok()) {
    return Status::Unavailable("the coordinator's answer does not read: " +
                               progress.status().message());
  }
  return progress;
}

TopView WithLive(TopView view, const protocol::JobProgress& live) {
  if (Finished(view)) return view;
  view.items = live.items;
  view.completed = std::max(view.completed, live.completed);
  view.total_cost = live.total_cost;
  view.completed_cost = std::max(view.completed_cost, live.completed_cost);
  std::map<std::string, const TopNode*> rows;
  for (const TopNode& row : view.nodes) rows[row.name] = &row;
  const bool weighted = std::all_of(live.nodes.begin(), live.nodes.end(),
                                    [&](const auto& node) { return rows.contains(node.name); });
  std::vector<TopNode> nodes;
  for (const protocol::NodeProgress& node : live.nodes) {
    const auto found = rows.find(node.name);
    const TopNode* row = found == rows.end() ? nullptr : found->second;
    TopNode shown;
    shown.name = node.name;
    shown.weight = weighted ? row->weight : node.prior;
    shown.speed = node.items_per_second;
    shown.items = std::max(row ? row->items : 0, node.items);
    shown.steals = std::max(row ? row->steals : 0, node.steals);
    shown.cost = std::max(row ? row->cost : 0, node.cost);
    shown.cost_speed = node.cost_per_second;
    nodes.push_back(std::move(shown));
  }
  view.nodes = std::move(nodes);
  view.node_count = std::max<uint64_t>(live.node_count, view.nodes.size());
  view.workers = static_cast<int64_t>(live.reporting);
  view.steals = std::max(view.steals, live.steals);
  view.cost_model.reset();
  if (const auto& model = live.cost_model) {
    view.cost_model = api::CostModelStatus{model->start_cost, model->start_cost > 0, model->samples,
                                           model->seconds_per_cost, model->start_seconds};
  }
  view.source = TopSource::kLive;
  view.status_age_s.reset();
  view.live_note.clear();
  return view;
}

double LiveRetrySeconds(int failures) {
  constexpr double kFirst = 5;
  constexpr double kMost = 60;
  double seconds = kFirst;
  for (int i = 1; i < failures && seconds < kMost; ++i) seconds *= 2;
  return std::min(seconds, kMost);
}

LiveProgress::LiveProgress(kube::HttpKubeClient& client, std::string ns, std::string job)
    : client_(client), ns_(std::move(ns)), job_(std::move(job)) {}

StatusOr<protocol::JobProgress> LiveProgress::Read(double now) {
  if (failures_ > 0 && now < retry_at_) return last_failure_;
  auto progress = [&]() -> StatusOr<protocol::JobProgress> {
    BALLAST_ASSIGN_OR_RETURN(const std::string path, Locate());
    auto answer = client_.GetAnswer(path, kMaxLiveAnswerBytes);
    if (!answer.ok()) {
      return Status::Unavailable("no answer through the API server: " +
                                 WithoutRequest(answer.status().message()));
    }
    return ReadLiveAnswer(answer->code, answer->body);
  }();
  if (progress.ok()) {
    failures_ = 0;
    return progress;
  }
  // Found again at the next try: the Service or the pods may have changed.
  path_.reset();
  last_failure_ = progress.status();
  retry_at_ = now + LiveRetrySeconds(++failures_);
  return last_failure_;
}

StatusOr<std::string> LiveProgress::Locate() {
  if (!path_) {
    BALLAST_ASSIGN_OR_RETURN(path_, LiveProgressPath(Addresses(), ns_, job_));
  }
  return *path_;
}

std::vector<CoordinatorAddress> LiveProgress::Addresses() {
  std::vector<CoordinatorAddress> addresses;
  kube::ListOptions options;
  options.label_selector = fmt::format("{}={}", api::kJobLabel, job_);
  options.limit = 500;
  if (auto pods = client_.List(runtime::Pods().In(ns_), options); pods.ok()) {
    for (const nlohmann::json& pod : pods->items) {
      if (auto url = CoordinatorUrlOfPod(pod)) {
        addresses.push_back({*url, "the job's worker pods' BALLAST_COORDINATOR"});
        break;
      }
    }
  }
  // Every pod labelled the leader's, in case one is a stale stand-in without
  // the flag; a Running one first.
  options.label_selector = fmt::format("{}={}", api::kCoordinatorLabel, api::kLeaderValue);
  auto leaders = client_.List(runtime::Pods(), options);
  if (!leaders.ok()) return addresses;
  std::stable_partition(leaders->items.begin(), leaders->items.end(), [](const auto& pod) {
    return json_read::TextAt(json_read::At(pod, "status"), "phase") == "Running";
  });
  for (const nlohmann::json& pod : leaders->items) {
    const nlohmann::json& meta = json_read::At(pod, "metadata");
    if (auto url = CoordinatorUrlOfArgs(OperatorArgs(pod))) {
      addresses.push_back({*url, fmt::format("the --coordinator-url of the operator's pod {}/{}",
                                             json_read::TextAt(meta, "namespace"),
                                             json_read::TextAt(meta, "name"))});
      break;
    }
  }
  return addresses;
}

}  // namespace ballast::cli
