#include "operator/runtime/history_configmap.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iterator>
#include <utility>

#include "core/common/json_read.h"
#include "operator/runtime/resources.h"

namespace ballast::runtime {

using history::HistoryLookup;

using nlohmann::json;

ConfigMapHistory::ConfigMapHistory(kube::KubeClient& client, std::string ns, std::string name,
                                   Options options)
    : client_(client),
      ref_(kube::ConfigMaps().In(std::move(ns)).Named(std::move(name))),
      options_(options),
      writer_([this] { WriterLoop(); }) {}

ConfigMapHistory::~ConfigMapHistory() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();
}

std::string ConfigMapHistory::Describe() const {
  return fmt::format("ConfigMap {}/{}", ref_.ns, ref_.name);
}

StatusOr<ConfigMapHistory::Read> ConfigMapHistory::ReadStore() {
  auto object = client_.Get(ref_);
  if (!object.ok()) {
    if (object.status().code() == StatusCode::kNotFound) return Read{};
    return object.status();
  }
  return FromObject(std::move(*object));
}

ConfigMapHistory::Read ConfigMapHistory::FromObject(json object) const {
  Read read;
  // No data or no key: no history yet. A value that is not text is as
  // unreadable as text that is not a store.
  const json& text = json_read::At(json_read::At(object, "data"), kHistoryDataKey);
  StatusOr<history::SpeedStore> store = history::SpeedStore{};
  if (text.is_string()) {
    store = history::StoreFromText(text.get_ref<const std::string&>(), options_.limits);
  } else if (!text.is_null()) {
    store = json_read::Expected(json_read::Field("data", kHistoryDataKey), "a string", text);
  }
  read.config_map = std::move(object);
  if (store.ok()) {
    read.store = std::move(*store);
  } else {
    read.corrupt = store.status().message();
    spdlog::info("history store unreadable, starting empty configmap={} error=\"{}\"", Describe(),
                 read.corrupt);
  }
  return read;
}

StatusOr<json> ConfigMapHistory::WriteStore(const Read& read, const history::SpeedStore& store) {
  history::LeftOut left_out;
  const std::string text = history::StoreToText(store, options_.limits, &left_out);
  if (left_out.entries > 0) {
    spdlog::info("history store past its bytes, stalest entries left out configmap={} what=\"{}\"",
                 Describe(), history::DescribeLeftOut(left_out, options_.limits));
  }
  if (!read.config_map) {
    json object = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata",
         {{"name", ref_.name},
          {"namespace", ref_.ns},
          {"labels", {{std::string(api::kManagedByLabel), std::string(api::kManagedBy)}}}}},
        {"data", {{kHistoryDataKey, text}}}};
    return client_.Create(ref_, object);
  }
  json object = *read.config_map;
  object["data"][kHistoryDataKey] = text;  // resourceVersion as read: Conflict when stale
  return client_.Update(ref_, object);
}

void ConfigMapHistory::Remember(Read read) {
  last_ = std::move(read);
  last_at_ = options_.clock();
}

history::HistoryLookup ConfigMapHistory::Lookup(const history::HistoryKey& key,
                                                const std::vector<std::string>& nodes, double now) {
  history::HistoryLookup lookup;
  lookup.origin = Describe();
  std::optional<history::SpeedStore> store;
  std::string corrupt;
  {
    // What this operator recorded before is in the answer: wait for the
    // writer when it has some (rare: a job starting as others end).
    std::unique_lock lock(mutex_);
    const uint64_t recorded = queued_total_;
    changed_.wait(lock, [&] { return written_total_ >= recorded; });
    if (last_ && options_.clock() - last_at_ < options_.fresh_for) {
      store = last_->store;
      corrupt = last_->corrupt;
    }
  }
  if (!store) {
    auto read = ReadStore();
    if (!read.ok()) {
      lookup.trouble = read.status().message();
      return lookup;
    }
    store = read->store;
    corrupt = read->corrupt;
    std::lock_guard lock(mutex_);
    Remember(std::move(*read));
  }
  if (!corrupt.empty()) {
    lookup.trouble = fmt::format(
        "its text is unreadable ({}); the next finished job starts it "
        "again",
        corrupt);
    return lookup;
  }
  lookup.nodes = history::LookupHistory(*store, key, nodes, now);
  return lookup;
}

Status ConfigMapHistory::Record(const history::HistoryKey& key,
                                const std::map<std::string, double>& speeds, double now) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.max_queued) {
      return Status::Unavailable(
          fmt::format("{} records wait to be written to {} already", queue_.size(), Describe()));
    }
    queue_.push_back({key, speeds, now});
    ++queued_total_;
  }
  changed_.notify_all();
  return Status::Ok();
}

Status ConfigMapHistory::Flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = queued_total_;
  changed_.wait(lock, [&] { return written_total_ >= target; });
  return std::exchange(last_error_, Status::Ok());
}

Status ConfigMapHistory::WriteBatch(const std::vector<Queued>& batch) {
  bool read_again = false;  // after a Conflict: what this instance holds is stale
  return kube::RetryOnConflict([&]() -> Status {
    // The ConfigMap as this instance last read or wrote it, whatever its
    // age: an update from it is refused (Conflict) if anyone wrote since.
    std::optional<Read> held;
    if (!read_again) {
      std::lock_guard lock(mutex_);
      if (last_ && last_->config_map) held = last_;
    }
    read_again = true;
    const bool read_from_api = !held;
    if (!held) {
      BALLAST_ASSIGN_OR_RETURN(held, ReadStore());
    }
    Read read = std::move(*held);
    // Samples dated in the future (a clock set wrong) would stay the newest
    // for good: dropped, said once in the log, and the store written without.
    const history::DroppedSamples dropped =
        history::DropFutureSamples(read.store, batch.empty() ? 0 : batch.back().now);
    bool changed = dropped.count > 0;
    if (changed) {
      spdlog::info("history samples dated in the future dropped configmap={} dropped=\"{}\"",
                   Describe(), history::DescribeDropped(dropped));
    }
    for (const Queued& job : batch) {
      changed |= history::RecordJob(read.store, job.key, job.speeds, job.now, options_.limits);
    }
    if (!changed && !read_from_api) return Status::Ok();  // the copy stays as old as it is
    if (changed) {
      // As written: the text keeps what fits its bounds, and so must the copy.
      BALLAST_ASSIGN_OR_RETURN(json written, WriteStore(read, read.store));
      read = FromObject(std::move(written));
    }
    std::lock_guard lock(mutex_);
    Remember(std::move(read));
    return Status::Ok();
  });
}

void ConfigMapHistory::WriterLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and all written
    std::vector<Queued> batch(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.end()));
    queue_.clear();
    lock.unlock();
    const Status written = WriteBatch(batch);
    if (!written.ok()) {
      // Those jobs have succeeded either way; their speeds are only lost to the next.
      spdlog::info("speeds not recorded jobs={} configmap={} error=\"{}\"", batch.size(),
                   Describe(), written.ToString());
    }
    lock.lock();
    if (!written.ok()) last_error_ = written;
    written_total_ += batch.size();
    changed_.notify_all();
  }
}

}  // namespace ballast::runtime
