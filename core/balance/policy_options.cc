#include "core/balance/policy_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/balance/policies.h"
#include "core/common/json_read.h"

namespace ballast::balance {
namespace {

using nlohmann::json;
namespace jr = json_read;

// The largest chunk a policy takes: more items than any job has.
constexpr int64_t kMaxChunk = 1'000'000'000'000'000;

// The option `key` of `node` when written (and not null), or nullptr.
const json* Option(const json& node, std::string_view key) { return jr::Find(node, key); }

StatusOr<uint64_t> Chunk(const json& node, std::string_view path, std::string_view key,
                         uint64_t fallback) {
  const json* value = Option(node, key);
  if (!value) return fallback;
  BALLAST_ASSIGN_OR_RETURN(int64_t chunk, jr::Int(*value, jr::Field(path, key), 1, kMaxChunk));
  return static_cast<uint64_t>(chunk);
}

// true or false; "on" and "off" as the simulator's scenarios write them.
StatusOr<bool> OnOff(const json& node, std::string_view path, std::string_view key, bool fallback) {
  const json* value = Option(node, key);
  if (!value) return fallback;
  if (value->is_boolean()) return value->get<bool>();
  if (*value == "on") return true;
  if (*value == "off") return false;
  return jr::Expected(jr::Field(path, key), "true or false (or on, off)", *value);
}

StatusOr<AdaptiveOptions> ReadAdaptive(const json& node, std::string_view path) {
  AdaptiveOptions options;
  if (const json* compensation = Option(node, "compensation")) {
    if (*compensation == "method3") {
      options.compensation = true;
    } else if (*compensation == "none") {
      options.compensation = false;
    } else {
      return jr::Expected(jr::Field(path, "compensation"), "\"method3\" or \"none\"",
                          *compensation);
    }
  }
  BALLAST_ASSIGN_OR_RETURN(options.stealing, OnOff(node, path, "stealing", true));
  BALLAST_ASSIGN_OR_RETURN(options.rebalance, OnOff(node, path, "rebalance", true));
  BALLAST_ASSIGN_OR_RETURN(options.slow_start, OnOff(node, path, "slowStart", true));
  BALLAST_ASSIGN_OR_RETURN(options.prefetch, OnOff(node, path, "prefetch", true));
  BALLAST_ASSIGN_OR_RETURN(options.backup, OnOff(node, path, "backup", true));
  BALLAST_ASSIGN_OR_RETURN(options.hedge, OnOff(node, path, "hedge", true));
  BALLAST_ASSIGN_OR_RETURN(options.learn_costs, OnOff(node, path, "learnCosts", true));
  if (const json* seconds = Option(node, "minReportSeconds")) {
    const std::string field = jr::Field(path, "minReportSeconds");
    BALLAST_ASSIGN_OR_RETURN(options.min_report_seconds, jr::Positive(*seconds, field, 3600));
    if (options.min_report_seconds < 1e-6) {
      return jr::Expected(field, "a number in [1e-06, 3600]", *seconds);
    }
  }
  return options;
}

// Each policy's options from `node`, whose keys have been checked against
// the policy's (Written::kKeys).
StatusOr<EqualOptions> ReadEqual(const json&, std::string_view) { return EqualOptions{}; }

StatusOr<WeightedOptions> ReadWeighted(const json&, std::string_view) { return WeightedOptions{}; }

StatusOr<SelfSchedOptions> ReadSelfSched(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(uint64_t chunk, Chunk(node, path, "chunk", 0));
  return SelfSchedOptions{chunk};
}

StatusOr<GuidedOptions> ReadGuided(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(uint64_t min_chunk, Chunk(node, path, "minChunk", 1));
  return GuidedOptions{min_chunk};
}

StatusOr<FactoringOptions> ReadFactoring(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(uint64_t min_chunk, Chunk(node, path, "minChunk", 1));
  return FactoringOptions{min_chunk};
}

StatusOr<MmsOptions> ReadMms(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(uint64_t chunk, Chunk(node, path, "chunk", 0));
  return MmsOptions{chunk};
}

// How a policy's options are written: the keys its object may give besides
// name and label, and their reader. One specialisation per options type; a
// type of PolicyOptions without one does not compile.
template <typename Options>
struct Written;

template <>
struct Written<EqualOptions> {
  static constexpr std::array<std::string_view, 0> kKeys = {};
  static constexpr auto kRead = ReadEqual;
};
template <>
struct Written<WeightedOptions> {
  static constexpr std::array<std::string_view, 0> kKeys = {};
  static constexpr auto kRead = ReadWeighted;
};
template <>
struct Written<SelfSchedOptions> {
  static constexpr std::array<std::string_view, 1> kKeys = {"chunk"};
  static constexpr auto kRead = ReadSelfSched;
};
template <>
struct Written<GuidedOptions> {
  static constexpr std::array<std::string_view, 1> kKeys = {"minChunk"};
  static constexpr auto kRead = ReadGuided;
};
template <>
struct Written<FactoringOptions> {
  static constexpr std::array<std::string_view, 1> kKeys = {"minChunk"};
  static constexpr auto kRead = ReadFactoring;
};
template <>
struct Written<MmsOptions> {
  static constexpr std::array<std::string_view, 1> kKeys = {"chunk"};
  static constexpr auto kRead = ReadMms;
};
template <>
struct Written<AdaptiveOptions> {
  static constexpr std::array<std::string_view, 9> kKeys = {
      "compensation", "stealing", "rebalance",  "slowStart",       "prefetch",
      "backup",       "hedge",    "learnCosts", "minReportSeconds"};
  static constexpr auto kRead = ReadAdaptive;
};

// A reader of one policy's options, as the variant.
using OptionsReader = StatusOr<PolicyOptions> (*)(const json& node, std::string_view path);

template <auto read>
StatusOr<PolicyOptions> AsPolicyOptions(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(auto options, read(node, path));
  return PolicyOptions(std::move(options));
}

struct Entry {
  std::string name;
  std::vector<std::string> options;  // as written
  OptionsReader read;
};

template <typename Options>
Entry EntryOf() {
  using Form = Written<Options>;
  return {std::string(Options::kName),
          {Form::kKeys.begin(), Form::kKeys.end()},
          AsPolicyOptions<Form::kRead>};
}

// Every policy, in PolicyOptions' order: each entry made from its type, so
// the table cannot drift from the variant.
using Registry = std::array<Entry, std::variant_size_v<PolicyOptions>>;

template <size_t... I>
Registry MakeRegistry(std::index_sequence<I...>) {
  return {EntryOf<std::variant_alternative_t<I, PolicyOptions>>()...};
}

const Registry& Policies() {
  static const Registry registry =
      MakeRegistry(std::make_index_sequence<std::variant_size_v<PolicyOptions>>());
  return registry;
}

// True when no two alternatives of the variant share a name.
template <typename... Options>
constexpr bool NamesAreDistinct(const std::variant<Options...>*) {
  const std::array<std::string_view, sizeof...(Options)> names = {Options::kName...};
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = i + 1; j < names.size(); ++j) {
      if (names[i] == names[j]) return false;
    }
  }
  return true;
}
static_assert(NamesAreDistinct(static_cast<const PolicyOptions*>(nullptr)),
              "each policy's options type has a name of its own");

// The policy named `name`, or nullptr.
const Entry* Named(std::string_view name) {
  for (const Entry& entry : Policies()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace

std::string PolicySpec::name() const {
  return std::visit(
      [](const auto& options) { return std::string(std::decay_t<decltype(options)>::kName); },
      options);
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& entry : Policies()) out.push_back(entry.name);
    return out;
  }();
  return names;
}

StatusOr<PolicySpec> PolicyFromJson(const json& node, std::string_view path) {
  const json* name = &node;
  const std::string name_path = node.is_object() ? jr::Field(path, "name") : std::string(path);
  if (node.is_object()) {
    BALLAST_ASSIGN_OR_RETURN(name, jr::Require(node, path, "name"));
  } else if (!node.is_string()) {
    return jr::Expected(path, "a policy name or an object with name and options", node);
  }
  const Entry* entry = name->is_string() ? Named(name->get<std::string>()) : nullptr;
  if (!entry) {
    return jr::Expected(name_path, fmt::format("a policy: {}", fmt::join(PolicyNames(), ", ")),
                        *name);
  }
  PolicySpec spec;
  if (!node.is_object()) {
    BALLAST_ASSIGN_OR_RETURN(spec.options, entry->read(json::object(), path));
    return spec;
  }
  for (const auto& [key, value] : node.items()) {
    if (key == "name") continue;
    if (key == "label") {
      BALLAST_ASSIGN_OR_RETURN(spec.label, jr::String(value, jr::Field(path, "label")));
      continue;
    }
    if (std::find(entry->options.begin(), entry->options.end(), key) == entry->options.end()) {
      return Status::InvalidAt(
          jr::Field(path, key),
          fmt::format("policy {} has no option \"{}\" (its options: {})", entry->name, jr::Cut(key),
                      entry->options.empty() ? std::string("none")
                                             : fmt::format("{}", fmt::join(entry->options, ", "))));
    }
  }
  BALLAST_ASSIGN_OR_RETURN(spec.options, entry->read(node, path));
  return spec;
}

std::unique_ptr<Policy> MakePolicy(const PolicySpec& spec) {
  return std::visit([](const auto& options) { return MakePolicyOf(options); }, spec.options);
}

}  // namespace ballast::balance
