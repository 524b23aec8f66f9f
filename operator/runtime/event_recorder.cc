#include "operator/runtime/event_recorder.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "core/common/json_read.h"
#include "core/common/utf8.h"
#include "operator/runtime/resources.h"

namespace ballast::runtime {

using nlohmann::json;

std::string RfcTimeNow() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

EventRecorder::EventRecorder(kube::KubeClient& client, std::string instance)
    : client_(client), instance_(std::move(instance)), thread_([this] { Post(); }) {}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventRecorder::Post() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is posted
    auto [ns, event] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    auto created = client_.Create(Events().In(ns), event);
    if (created.ok()) {
      posted_.fetch_add(1);
    } else {
      failed_.fetch_add(1);
      spdlog::info("event not posted object={}/{} reason={} error=\"{}\"", ns,
                   json_read::TextAt(json_read::At(event, "involvedObject"), "name"),
                   json_read::TextAt(event, "reason"), created.status().ToString());
    }
    lock.lock();
  }
}

json EventObject(const json& object, bool warning, const std::string& reason,
                 const std::string& message, const std::string& name, const std::string& now,
                 const std::string& instance) {
  const json& meta = json_read::At(object, "metadata");
  // A cluster-scoped object (a Node) has no namespace: its events live in
  // default, and name none in involvedObject (`kubectl describe node` looks
  // them up so).
  const std::string object_ns = json_read::TextAt(meta, "namespace");
  const std::string ns = object_ns.empty() ? "default" : object_ns;
  return {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"involvedObject",
       {{"apiVersion", json_read::TextAt(object, "apiVersion")},
        {"kind", json_read::TextAt(object, "kind")},
        {"namespace", object_ns},
        {"name", json_read::TextAt(meta, "name")},
        {"uid", json_read::TextAt(meta, "uid")},
        {"resourceVersion", json_read::TextAt(meta, "resourceVersion")}}},
      {"type", warning ? "Warning" : "Normal"},
      {"reason", reason},
      {"message", EscapeControls(message)},
      {"source", {{"component", api::kManagedBy}}},
      {"reportingComponent", "ballast.io/operator"},
      {"reportingInstance", instance},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1},
  };
}

void EventRecorder::Record(const json& object, bool warning, const std::string& reason,
                           const std::string& message) {
  const std::string object_name = json_read::TextAt(json_read::At(object, "metadata"), "name");
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  // Unique like client-go's "<name>.<unix nanos in hex>"; the sequence
  // separates two events of one nanosecond.
  const std::string name = fmt::format("{}.{:x}{:x}", object_name.empty() ? "object" : object_name,
                                       nanos, sequence_.fetch_add(1));
  const json event = EventObject(object, warning, reason, message, name, RfcTimeNow(), instance_);
  const std::string ns = event["metadata"]["namespace"];
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      failed_.fetch_add(1);
      return;
    }
    queue_.emplace_back(ns, event);
  }
  cv_.notify_one();
}

}  // namespace ballast::runtime
