#include "net/kube/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/common/bounded_json.h"
#include "core/common/utf8.h"

namespace ballast::kube {

ResourceRef ResourceRef::In(std::string namespace_name) const {
  ResourceRef copy = *this;
  copy.ns = std::move(namespace_name);
  return copy;
}

ResourceRef ResourceRef::Named(std::string object_name) const {
  ResourceRef copy = *this;
  copy.name = std::move(object_name);
  return copy;
}

std::string ResourceRef::Path() const {
  std::string path =
      group.empty() ? fmt::format("/api/{}", version) : fmt::format("/apis/{}/{}", group, version);
  if (namespaced && !ns.empty()) path += fmt::format("/namespaces/{}", ns);
  path += "/" + resource;
  if (!name.empty()) path += "/" + name;
  return path;
}

std::string ResourceRef::Describe() const {
  std::string what = group.empty() ? resource : resource + "." + group;
  if (name.empty()) return ns.empty() ? what : fmt::format("{} in {}", what, ns);
  return ns.empty() ? fmt::format("{} {}", what, name) : fmt::format("{} {}/{}", what, ns, name);
}

ResourceRef ConfigMaps() { return {"", "v1", "configmaps", true, "", ""}; }
ResourceRef Namespaces() { return {"", "v1", "namespaces", false, "", ""}; }
ResourceRef Leases() { return {"coordination.k8s.io", "v1", "leases", true, "", ""}; }

void Cancellation::Cancel() {
  std::map<uint64_t, std::function<void()>> callbacks;
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& [id, fn] : callbacks) fn();
}

bool Cancellation::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

uint64_t Cancellation::OnCancel(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (!cancelled_) {
      callbacks_[next_id_] = std::move(fn);
      return next_id_++;
    }
  }
  fn();
  return 0;
}

void Cancellation::Unregister(uint64_t id) {
  std::lock_guard lock(mu_);
  callbacks_.erase(id);
}

bool Cancellation::WaitFor(std::chrono::milliseconds duration) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, duration, [this] { return cancelled_; });
}

Status StatusFromApiStatus(const nlohmann::json& status, const std::string& what) {
  const int code = status.is_object() ? status.value("code", 0) : 0;
  return StatusFromHttp(code, status.is_object() ? DumpJson(status) : "", what);
}

namespace {

// The message of a metav1.Status body, or "" when the body is not one (or is
// over ParseBoundedJson's default limits, 16 MiB and 64 levels: a Status is a
// few hundred bytes).
std::string ApiMessage(const std::string& body) {
  auto parsed = ParseBoundedJson(body, "API status");
  if (!parsed.ok()) return "";
  const nlohmann::json& json = *parsed;
  if (!json.is_object() || json.value("kind", "") != "Status") return "";
  auto message = json.find("message");
  return message != json.end() && message->is_string() ? message->get<std::string>() : "";
}

}  // namespace

Status StatusFromHttp(int http_code, const std::string& body, const std::string& what) {
  if (http_code >= 200 && http_code < 300) return Status::Ok();
  std::string message = ApiMessage(body);
  if (message.empty()) {
    message = fmt::format("{}: HTTP {}{}", what, http_code,
                          body.empty() ? "" : ": " + body.substr(0, 200));
  }
  switch (http_code) {
    case 404:
      return Status::NotFound(std::move(message));
    case 409:
      return Status::Conflict(std::move(message));
    case 410:
      return Status::Gone(std::move(message));
    // Retried, not permanent: a service account's token rotates, RBAC
    // bindings propagate after the operator starts, and a ResourceQuota
    // refuses a pod with 403 only until others finish.
    case 401:
      return Status::Unavailable("unauthorized (the API server rejected the credentials): " +
                                 message);
    case 403:
      return Status::Unavailable("forbidden (RBAC or a quota does not allow it): " + message);
    case 408:
    case 429:
      return Status::Unavailable(std::move(message));
    default:
      if (http_code >= 500 || http_code == 0) return Status::Unavailable(std::move(message));
      return Status::Invalid(std::move(message));
  }
}

Status RetryOnConflict(const std::function<Status()>& fn, int attempts) {
  Status status;
  auto pause = std::chrono::milliseconds(10);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
    status = fn();
    if (status.code() != StatusCode::kConflict) return status;
  }
  return status;
}

std::string ObjectKey(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const std::string name = meta->value("name", "");
  const std::string ns = meta->value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  return meta->value("resourceVersion", "");
}

}  // namespace ballast::kube
