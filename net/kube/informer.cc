#include "net/kube/informer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ballast::kube {

Informer::Informer(KubeClient& client, ResourceRef resource, InformerOptions options,
                   InformerHandlers handlers)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      handlers_(std::move(handlers)) {
  resource_version_ = options_.resume_resource_version;
}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

bool Informer::HasSynced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return synced_cv_.wait_for(lock, timeout, [this] { return synced_; });
}

void DropManagedFields(nlohmann::json& object) {
  if (auto it = object.find("metadata"); it != object.end() && it->is_object()) {
    it->erase("managedFields");
  }
}

ObjectPtr Informer::Get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Informer::List() const {
  std::lock_guard lock(mu_);
  std::vector<ObjectPtr> objects;
  objects.reserve(cache_.size());
  for (const auto& [key, object] : cache_) objects.push_back(object);
  return objects;
}

std::vector<ObjectPtr> Informer::ListIndexed(const std::string& ns,
                                             const std::string& value) const {
  std::lock_guard lock(mu_);
  std::vector<ObjectPtr> objects;
  auto it = index_.find(ns + "/" + value);
  if (it == index_.end()) return objects;
  for (const auto& key : it->second) objects.push_back(cache_.at(key));
  return objects;
}

ObjectPtr Informer::Prepare(nlohmann::json object) const {
  if (options_.transform) options_.transform(object);
  return std::make_shared<const nlohmann::json>(std::move(object));
}

std::string Informer::IndexKey(const nlohmann::json& object) const {
  if (options_.index_label.empty()) return "";
  const auto& meta = object.at("metadata");
  auto labels = meta.find("labels");
  if (labels == meta.end() || !labels->is_object()) return "";
  auto value = labels->find(options_.index_label);
  if (value == labels->end() || !value->is_string()) return "";
  return meta.value("namespace", "") + "/" + value->get<std::string>();
}

void Informer::IndexLocked(const std::string& key, const ObjectPtr& object, const ObjectPtr& old) {
  const std::string before = old ? IndexKey(*old) : "";
  const std::string after = object ? IndexKey(*object) : "";
  if (before == after) return;
  if (!before.empty()) {
    auto it = index_.find(before);
    it->second.erase(key);
    if (it->second.empty()) index_.erase(it);
  }
  if (!after.empty()) index_[after].insert(key);
}

std::string Informer::ResourceVersion() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

InformerStats Informer::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Informer::SetSynced() {
  {
    std::lock_guard lock(mu_);
    synced_ = true;
  }
  synced_cv_.notify_all();
}

void Informer::Run() {
  bool need_list = options_.resume_resource_version.empty();
  auto backoff = options_.initial_backoff;
  while (!cancel_.cancelled()) {
    const Status status = need_list ? ListAndReplace() : WatchOnce();
    if (cancel_.cancelled()) break;
    if (status.ok()) {
      need_list = false;
      backoff = options_.initial_backoff;
      std::lock_guard lock(mu_);
      stats_.failing_since.reset();
      continue;
    }
    if (status.code() == StatusCode::kGone) {
      spdlog::debug("informer relists resource={} reason={}", resource_.Describe(),
                    status.message());
      std::lock_guard lock(mu_);
      ++stats_.gone;
      need_list = true;
      continue;
    }
    spdlog::info("informer retries resource={} backoff_ms={} error={}", resource_.Describe(),
                 backoff.count(), status.ToString());
    {
      std::lock_guard lock(mu_);
      ++stats_.errors;
      if (!stats_.failing_since) stats_.failing_since = std::chrono::steady_clock::now();
      stats_.last_error = status.ToString();
    }
    cancel_.WaitFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Status Informer::ListAndReplace() {
  auto list = client_.List(resource_, {options_.label_selector, options_.field_selector, 0});
  if (!list.ok()) return list.status();
  std::map<std::string, ObjectPtr> fresh;
  for (auto& item : list->items) {
    std::string key = ObjectKey(item);  // before the move below
    fresh[key] = Prepare(std::move(item));
  }
  std::map<std::string, ObjectPtr> old;
  {
    std::lock_guard lock(mu_);
    old.swap(cache_);
    cache_ = fresh;
    index_.clear();
    for (const auto& [key, object] : cache_) IndexLocked(key, object, nullptr);
    resource_version_ = list->resource_version;
    ++stats_.lists;
  }
  for (const auto& [key, object] : fresh) {
    auto it = old.find(key);
    if (it == old.end()) {
      if (handlers_.on_add) handlers_.on_add(*object);
    } else if (ResourceVersionOf(*it->second) != ResourceVersionOf(*object)) {
      if (handlers_.on_update) handlers_.on_update(*it->second, *object);
    }
  }
  for (const auto& [key, object] : old) {
    if (!fresh.contains(key) && handlers_.on_delete) handlers_.on_delete(*object);
  }
  SetSynced();
  return Status::Ok();
}

Status Informer::WatchOnce() {
  WatchOptions watch;
  watch.resource_version = ResourceVersion();
  watch.allow_bookmarks = true;
  watch.timeout_seconds = options_.watch_timeout_seconds;
  watch.label_selector = options_.label_selector;
  watch.field_selector = options_.field_selector;
  {
    std::lock_guard lock(mu_);
    ++stats_.watches;
  }
  // The API server answered: the watch works, even while nothing changes.
  watch.on_open = [this] {
    std::lock_guard lock(mu_);
    stats_.failing_since.reset();
  };
  Status event_error;
  const Status status = client_.Watch(
      resource_, watch, [&](const WatchEvent& event) { return HandleEvent(event, &event_error); },
      &cancel_);
  return status.ok() ? event_error : status;
}

bool Informer::HandleEvent(const WatchEvent& event, Status* error) {
  switch (event.type) {
    case WatchEventType::kAdded:
    case WatchEventType::kModified:
      Upsert(event.object);
      return true;
    case WatchEventType::kDeleted:
      Remove(event.object);
      return true;
    case WatchEventType::kBookmark: {
      std::lock_guard lock(mu_);
      resource_version_ = ResourceVersionOf(event.object);
      ++stats_.bookmarks;
      return true;
    }
    case WatchEventType::kError:
      *error = event.error.ok() ? Status::Unavailable("watch ERROR event") : event.error;
      return false;
  }
  return true;
}

void Informer::Upsert(const nlohmann::json& event_object) {
  const ObjectPtr object = Prepare(event_object);
  const std::string key = ObjectKey(*object);
  ObjectPtr old;
  {
    std::lock_guard lock(mu_);
    ObjectPtr& slot = cache_[key];
    old = std::move(slot);
    slot = object;
    IndexLocked(key, object, old);
    resource_version_ = ResourceVersionOf(*object);
  }
  if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, *object);
  } else if (handlers_.on_add) {
    handlers_.on_add(*object);
  }
}

void Informer::Remove(const nlohmann::json& event_object) {
  const std::string key = ObjectKey(event_object);
  ObjectPtr old;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      old = std::move(it->second);
      cache_.erase(it);
      IndexLocked(key, nullptr, old);
    }
    resource_version_ = ResourceVersionOf(event_object);
  }
  if (handlers_.on_delete) handlers_.on_delete(event_object);
}

}  // namespace ballast::kube
