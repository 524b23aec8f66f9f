#include "operator/api/job_status.h"

#include <fmt/format.h>

namespace ballast::api {

using nlohmann::json;

json StatusPatch(const json& from, const json& to) {
  json patch = json::object();
  if (to.is_object()) {
    for (const auto& [key, value] : to.items()) {
      if (!from.is_object() || !from.contains(key) || from[key] != value) patch[key] = value;
    }
  }
  if (from.is_object()) {
    for (const auto& [key, value] : from.items()) {
      if (!to.is_object() || !to.contains(key)) patch[key] = nullptr;
    }
  }
  return patch;
}

std::string ProgressText(uint64_t completed, uint64_t items) {
  if (items == 0) return "0%";
  return fmt::format("{}%", completed >= items ? 100 : completed * 100 / items);
}

}  // namespace ballast::api
