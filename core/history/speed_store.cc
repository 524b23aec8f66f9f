#include "core/history/speed_store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <tuple>
#include <utility>

#include "core/common/bounded_json.h"
#include "core/common/json_read.h"
#include "core/common/names.h"
#include "core/common/utf8.h"

namespace ballast::history {

using nlohmann::json;
namespace jr = json_read;

namespace {

constexpr int kFormatVersion = 1;

bool Usable(double speed) { return std::isfinite(speed) && speed > 0; }

// `value` to four significant digits (strtod: never throws).
double Significant(double value) {
  return std::strtod(fmt::format("{:.4g}", value).c_str(), nullptr);
}

json ToJson(const SpeedStore& store) {
  json nodes = json::object();
  for (const auto& [node, kinds] : store.nodes) {
    json by_kind = json::object();
    for (const auto& [kind, samples] : kinds) {
      json list = json::array();
      for (const auto& sample : samples) {
        // Four significant digits and whole seconds: what a prior needs.
        list.push_back({Significant(sample.speed), std::round(sample.at)});
      }
      if (!list.empty()) by_kind[kind] = std::move(list);
    }
    if (!by_kind.empty()) nodes[node] = std::move(by_kind);
  }
  return {{"version", kFormatVersion}, {"nodes", std::move(nodes)}};
}

// The entries (node, kind) by their newest sample, the stalest first (of
// equal ones, in the store's order).
std::vector<std::pair<std::string, std::string>> StalestFirst(const SpeedStore& store) {
  std::vector<std::tuple<double, std::string, std::string>> entries;
  for (const auto& [node, kinds] : store.nodes) {
    for (const auto& [kind, samples] : kinds) {
      entries.emplace_back(samples.empty() ? -1 : samples.back().at, node, kind);
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<std::pair<std::string, std::string>> order;
  order.reserve(entries.size());
  for (auto& [newest, node, kind] : entries) order.emplace_back(std::move(node), std::move(kind));
  return order;
}

StatusOr<SpeedSample> SampleFromJson(const json& value, const std::string& path) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
    return jr::Expected(path, "[speed, time]", value);
  }
  const SpeedSample sample{value[0].get<double>(), value[1].get<double>()};
  if (!Usable(sample.speed) || sample.speed > kMaxRelativeSpeed || !(sample.at >= 0) ||
      sample.at > kMaxSampleTime) {
    return jr::Expected(path, "[speed, time] with speed in (0, 1e9] and time in [0, 1e11]", value);
  }
  return sample;
}

Status ReadKinds(const json& kinds, const std::string& path, const StoreLimits& limits,
                 std::map<std::string, std::vector<SpeedSample>>& out) {
  if (!kinds.is_object()) return jr::Expected(path, "an object of workload kinds", kinds);
  for (const auto& [kind, list] : kinds.items()) {
    const std::string kind_path = jr::Field(path, kind);
    if (!list.is_array()) return jr::Expected(kind_path, "a list of samples", list);
    std::vector<SpeedSample> samples;
    for (size_t i = 0; i < list.size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(SpeedSample sample,
                               SampleFromJson(list[i], jr::Element(kind_path, i)));
      samples.push_back(sample);
    }
    std::sort(samples.begin(), samples.end(),
              [](const auto& a, const auto& b) { return a.at < b.at; });
    if (samples.size() > limits.samples_per_node) {
      samples.erase(samples.begin(),
                    samples.end() - static_cast<ptrdiff_t>(limits.samples_per_node));
    }
    if (!samples.empty()) out[kind] = std::move(samples);
  }
  return Status::Ok();
}

}  // namespace

namespace {

// `samples` without those dated past now + slack, those within it dated now,
// oldest first. Returns how many were taken out and the latest date of those.
std::pair<size_t, double> DropFuture(std::vector<SpeedSample>& samples, double now, double slack) {
  size_t dropped = 0;
  double latest = 0;
  std::erase_if(samples, [&](const SpeedSample& sample) {
    if (!(sample.at > now + slack)) return false;
    ++dropped;
    latest = std::max(latest, sample.at);
    return true;
  });
  for (SpeedSample& sample : samples) sample.at = std::min(sample.at, now);
  std::stable_sort(samples.begin(), samples.end(),
                   [](const SpeedSample& a, const SpeedSample& b) { return a.at < b.at; });
  return {dropped, latest};
}

}  // namespace

DroppedSamples DropFutureSamples(SpeedStore& store, double now, double slack) {
  DroppedSamples dropped;
  for (auto node = store.nodes.begin(); node != store.nodes.end();) {
    for (auto kind = node->second.begin(); kind != node->second.end();) {
      const auto [count, latest] = DropFuture(kind->second, now, slack);
      if (count > 0) {
        dropped.count += count;
        dropped.by_entry[{node->first, kind->first}] = count;
        dropped.latest = std::max(dropped.latest, latest);
      }
      kind = kind->second.empty() ? node->second.erase(kind) : std::next(kind);
    }
    node = node->second.empty() ? store.nodes.erase(node) : std::next(node);
  }
  return dropped;
}

std::string DescribeDropped(const DroppedSamples& dropped, double slack) {
  if (dropped.count == 0) return "";
  constexpr size_t kNamed = 10;
  std::vector<std::string> named;
  for (const auto& [entry, count] : dropped.by_entry) {
    if (named.size() == kNamed) break;
    named.push_back(fmt::format("{} {} {}", entry.first, entry.second, count));
  }
  std::string more;
  if (dropped.by_entry.size() > kNamed) {
    more = fmt::format(", and {} more", dropped.by_entry.size() - kNamed);
  }
  return fmt::format(
      "dropped {} sample{} dated more than {:g} s after now (the latest {:.0f}; recorded by a "
      "clock set wrong?): {}{}",
      dropped.count, dropped.count == 1 ? "" : "s", slack, dropped.latest, fmt::join(named, ", "),
      more);
}

bool RecordJob(SpeedStore& store, const HistoryKey& key,
               const std::map<std::string, double>& measured, double now,
               const StoreLimits& limits) {
  double sum = 0;
  size_t count = 0;
  for (const auto& [node, speed] : measured) {
    if (Usable(speed)) sum += speed, ++count;
  }
  if (count < 2 || !Usable(sum)) return false;
  const double mean = sum / static_cast<double>(count);
  for (const auto& [node, speed] : measured) {
    if (!Usable(speed) || !CheckName(node, NameKind::kDnsSubdomain).ok()) continue;
    auto& samples = store.nodes[node][key.text()];
    const double at = std::clamp(now, 0.0, kMaxSampleTime);
    DropFuture(samples, at, kFutureSlackSeconds);
    samples.push_back({std::min(speed / mean, kMaxRelativeSpeed), at});
    if (samples.size() > limits.samples_per_node) {
      samples.erase(samples.begin(),
                    samples.end() - static_cast<ptrdiff_t>(limits.samples_per_node));
    }
  }
  return true;
}

std::vector<fuzzy::NodeHistory> LookupHistory(const SpeedStore& store, const HistoryKey& key,
                                              const std::vector<std::string>& nodes, double now) {
  std::vector<fuzzy::NodeHistory> known;
  for (const auto& node : nodes) {
    auto by_node = store.nodes.find(node);
    if (by_node == store.nodes.end()) continue;
    auto by_kind = by_node->second.find(key.text());
    if (by_kind == by_node->second.end() || by_kind->second.empty()) continue;
    double sum = 0, newest = 0;
    size_t count = 0;
    for (const auto& sample : by_kind->second) {
      if (sample.at > now + kFutureSlackSeconds) continue;  // DropFutureSamples
      sum += sample.speed;
      newest = std::max(newest, sample.at);
      ++count;
    }
    if (count == 0) continue;
    known.push_back({node, sum / static_cast<double>(count), static_cast<double>(count),
                     std::max(0.0, now - newest)});
  }
  return known;
}

std::string StoreToText(const SpeedStore& store, const StoreLimits& limits) {
  return StoreToText(store, limits, nullptr);
}

std::string StoreToText(const SpeedStore& store, const StoreLimits& limits, LeftOut* left_out) {
  if (left_out != nullptr) *left_out = LeftOut{};
  std::string text = DumpJson(ToJson(store));
  if (text.size() <= limits.max_bytes) return text;
  // The stalest entries leave first, one dump per round: each round about as
  // many as the excess holds at the entries' mean size, so that what fits
  // stays (entries of 16 samples are some 300 bytes, of one 20).
  const auto order = StalestFirst(store);
  SpeedStore kept = store;
  size_t next = 0;
  while (text.size() > limits.max_bytes && next < order.size()) {
    const size_t mean_bytes = std::max<size_t>(1, text.size() / (order.size() - next));
    const size_t drops = std::max<size_t>(1, (text.size() - limits.max_bytes) / mean_bytes);
    for (size_t i = 0; i < drops && next < order.size(); ++i, ++next) {
      const auto& [node, kind] = order[next];
      if (left_out != nullptr) {
        const std::vector<SpeedSample>& samples = kept.nodes[node][kind];
        ++left_out->entries;
        left_out->samples += samples.size();
        if (!samples.empty()) left_out->newest = std::max(left_out->newest, samples.back().at);
      }
      kept.nodes[node].erase(kind);
      if (kept.nodes[node].empty()) kept.nodes.erase(node);
    }
    text = DumpJson(ToJson(kept));
  }
  return text;
}

std::string DescribeLeftOut(const LeftOut& left_out, const StoreLimits& limits) {
  if (left_out.entries == 0) return "";
  return fmt::format(
      "kept within {} bytes: left out the {} stalest node-and-workload {} ({} {}, the newest of "
      "them dated {:.0f})",
      limits.max_bytes, left_out.entries, left_out.entries == 1 ? "entry" : "entries",
      left_out.samples, left_out.samples == 1 ? "sample" : "samples", left_out.newest);
}

StatusOr<SpeedStore> StoreFromText(std::string_view text, const StoreLimits& limits) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return SpeedStore{};
  BALLAST_ASSIGN_OR_RETURN(json root, ParseBoundedJson(text, "history", {4 * limits.max_bytes, 8}));
  return StoreFromJson(root, "history", limits);
}

StatusOr<SpeedStore> StoreFromJson(const json& root, std::string_view path,
                                   const StoreLimits& limits) {
  SpeedStore store;
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(root, path, {"version", "nodes"}));
  const json* version = jr::Find(root, "version");
  if (!version || *version != kFormatVersion) {
    return jr::Expected(jr::Field(path, "version"), fmt::format("{}", kFormatVersion),
                        version ? *version : json());
  }
  const json* nodes = jr::Find(root, "nodes");
  if (!nodes) return store;
  const std::string nodes_path = jr::Field(path, "nodes");
  if (!nodes->is_object()) return jr::Expected(nodes_path, "an object of nodes", *nodes);
  for (const auto& [node, kinds] : nodes->items()) {
    // As Kubernetes names nodes, as the earlier form's reader and a cluster
    // file check them: a name the store holds becomes a label value, a file
    // name and a log field, and no node of a run can have another.
    if (Status checked = CheckName(node, NameKind::kDnsSubdomain); !checked.ok()) {
      return Status::InvalidAt(nodes_path, checked.message());
    }
    std::map<std::string, std::vector<SpeedSample>> by_kind;
    BALLAST_RETURN_IF_ERROR(ReadKinds(kinds, jr::Field(nodes_path, node), limits, by_kind));
    if (!by_kind.empty()) store.nodes[node] = std::move(by_kind);
  }
  return store;
}

}  // namespace ballast::history
