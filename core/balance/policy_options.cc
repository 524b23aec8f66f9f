#include "core/balance/policy_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/balance/policies.h"

namespace ballast::balance {
namespace {

struct Entry {
  std::string name;
  std::vector<std::string> options;
  StatusOr<std::unique_ptr<Policy>> (*make)(const PolicySpec&);
};

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> registry = {
      {"equal", {}, MakeEqualPolicy},
      {"weighted", {}, MakeWeightedPolicy},
      {"selfsched", {"chunk"}, MakeSelfSchedPolicy},
      {"guided", {"minChunk"}, MakeGuidedPolicy},
      {"factoring", {"minChunk"}, MakeFactoringPolicy},
      {"mms", {"chunk"}, MakeMmsPolicy},
      {"adaptive",
       {"compensation", "stealing", "rebalance", "slowStart", "prefetch", "backup", "hedge",
        "minReportSeconds"},
       MakeAdaptivePolicy},
  };
  return registry;
}

const Entry* Find(const std::string& name) {
  for (const Entry& entry : Registry()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& entry : Registry()) out.push_back(entry.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>* PolicyOptionNames(const std::string& name) {
  const Entry* entry = Find(name);
  return entry ? &entry->options : nullptr;
}

StatusOr<std::unique_ptr<Policy>> MakePolicy(const PolicySpec& spec) {
  const Entry* entry = Find(spec.name);
  if (!entry) {
    return Status::Invalid(fmt::format("unknown policy '{}' (expected one of: {})", spec.name,
                                       fmt::join(PolicyNames(), ", ")));
  }
  for (const auto& [key, value] : spec.options) {
    if (std::find(entry->options.begin(), entry->options.end(), key) == entry->options.end()) {
      return Status::Invalid(fmt::format(
          "policy {}: unknown option '{}' (expected {})", spec.name, key,
          entry->options.empty() ? std::string("none")
                                 : fmt::format("one of: {}", fmt::join(entry->options, ", "))));
    }
  }
  return entry->make(spec);
}

StatusOr<double> OptionNumber(const PolicySpec& spec, const std::string& key, double fallback,
                              double min, double max) {
  auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  const std::string& text = it->second;
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value < min || value > max) {
    return Status::Invalid(
        fmt::format("policy {}: option {}: expected a number in [{}, {}], got '{}'", spec.name, key,
                    min, max, text));
  }
  return value;
}

StatusOr<std::string> OptionChoice(const PolicySpec& spec, const std::string& key,
                                   const std::string& fallback,
                                   const std::vector<std::string>& choices) {
  auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  if (std::find(choices.begin(), choices.end(), it->second) == choices.end()) {
    return Status::Invalid(fmt::format("policy {}: option {}: expected one of {}, got '{}'",
                                       spec.name, key, fmt::join(choices, ", "), it->second));
  }
  return it->second;
}

}  // namespace ballast::balance
