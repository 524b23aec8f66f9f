// The probe's parsers of the kernel's cgroup files (parse.h): whether the
// memory controller is there.
#include <fmt/format.h>

#include <charconv>
#include <string>
#include <vector>

#include "core/probe/parse.h"

namespace ballast::probe {
namespace {

constexpr size_t kMaxControllers = 64;

bool IsControllerName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The words of `text` separated by spaces and tabs.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(text.find_first_of(" \t", start), text.size());
    words.push_back(text.substr(start, end - start));
    at = end;
  }
  return words;
}

// The lines of `text`, without a last empty one.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

StatusOr<uint64_t> Field(std::string_view word, size_t line) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size() || word.size() > 10) {
    return Status::Invalid(fmt::format("line {}: '{}' is not a number", line, word.substr(0, 32)));
  }
  return value;
}

}  // namespace

StatusOr<ControllerState> ParseCgroupControllersMemory(std::string_view text) {
  const std::vector<std::string_view> lines = Lines(text);
  if (lines.size() > 1) return Status::Invalid("more than one line");
  const std::vector<std::string_view> names = Words(lines.empty() ? "" : lines[0]);
  if (names.size() > kMaxControllers) {
    return Status::Invalid(fmt::format("more than {} controllers", kMaxControllers));
  }
  bool memory = false;
  for (std::string_view name : names) {
    if (!IsControllerName(name)) {
      return Status::Invalid(fmt::format("'{}' is not a controller's name", name.substr(0, 32)));
    }
    memory = memory || name == "memory";
  }
  return memory ? ControllerState::kEnabled : ControllerState::kAbsent;
}

StatusOr<ControllerState> ParseProcCgroupsMemory(std::string_view text) {
  const std::vector<std::string_view> lines = Lines(text);
  if (lines.empty() || !lines[0].starts_with("#subsys_name")) {
    return Status::Invalid("no '#subsys_name hierarchy num_cgroups enabled' header");
  }
  if (lines.size() > kMaxControllers + 1) {
    return Status::Invalid(fmt::format("more than {} controllers", kMaxControllers));
  }
  ControllerState state = ControllerState::kAbsent;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string_view> fields = Words(lines[i]);
    if (fields.size() != 4 || !IsControllerName(fields[0])) {
      return Status::Invalid(fmt::format("line {}: not 'name hierarchy cgroups enabled'", i + 1));
    }
    auto hierarchy = Field(fields[1], i + 1);
    auto cgroups = Field(fields[2], i + 1);
    auto enabled = Field(fields[3], i + 1);
    for (const auto* field : {&hierarchy, &cgroups, &enabled}) {
      if (!field->ok()) return field->status();
    }
    if (*enabled > 1) return Status::Invalid(fmt::format("line {}: enabled is 0 or 1", i + 1));
    if (fields[0] != "memory") continue;
    state = *enabled == 0     ? ControllerState::kDisabled
            : *hierarchy == 0 ? ControllerState::kAbsent
                              : ControllerState::kEnabled;
  }
  return state;
}

std::string MemoryCgroupDisabledBy(std::string_view cmdline) {
  std::string word;
  for (std::string_view w : Words(cmdline.substr(0, cmdline.find('\n')))) {
    if (w == "cgroup_memory=0") {
      word = std::string(w);
    } else if (w.starts_with("cgroup_disable=")) {
      std::string_view list = w.substr(w.find('=') + 1);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        if (list.substr(0, comma) == "memory") word = std::string(w);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    }
  }
  return word;
}

}  // namespace ballast::probe
