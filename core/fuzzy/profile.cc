#include "core/fuzzy/profile.h"

#include <fmt/format.h>

#include <algorithm>

namespace ballast::fuzzy {
namespace {

// A profile compiled into the library from crds/profiles/<name>.yaml.
struct EmbeddedProfile {
  std::string_view name;  // the file's base name, which is also its metadata.name
  std::string_view file;  // the path in the source tree, for messages
  std::string_view text;
};

// Generated at build time by core/fuzzy/embed_profiles.cmake.
constexpr EmbeddedProfile kEmbeddedProfiles[] = {
#include "core/fuzzy/builtin_profiles.inc"
};

}  // namespace

std::string Level::ToString() const {
  if (term.empty()) return fmt::format("{}", value);
  return fmt::format("{} ({})", value, term);
}

std::map<std::string, double> PaperScale() {
  return {
      {"significantly-above-norm", 1}, {"above-norm", 3}, {"norm", 5}, {"below-norm", 3},
      {"significantly-below-norm", 1},
  };
}

std::string_view RoundingName(Rounding rounding) {
  switch (rounding) {
    case Rounding::kCeil:
      return "ceil";
    case Rounding::kRound:
      return "round";
    case Rounding::kNone:
      return "none";
  }
  return "?";
}

std::string_view CriterionTypeName(CriterionType type) {
  return type == CriterionType::kNumeric ? "numeric" : "linguistic";
}

std::string_view BetterName(Better better) {
  return better == Better::kHigher ? "higher" : "lower";
}

std::vector<std::string> BuiltinProfileNames() {
  std::vector<std::string> names;
  for (const EmbeddedProfile& profile : kEmbeddedProfiles) names.emplace_back(profile.name);
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<Profile> BuiltinProfile(std::string_view name) {
  for (const EmbeddedProfile& profile : kEmbeddedProfiles) {
    if (profile.name == name) return ParseProfile(profile.text, std::string(profile.file));
  }
  return Status::NotFound(fmt::format("no built-in profile '{}' (built-in profiles: {})", name,
                                      fmt::join(BuiltinProfileNames(), ", ")));
}

}  // namespace ballast::fuzzy
