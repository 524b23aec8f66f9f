// The files of a probe's snapshot as the facts read them (snapshot_reader.h).
#include "core/probe/snapshot_reader.h"

#include <fmt/format.h>

#include <utility>

#include "core/common/utf8.h"

namespace ballast::probe {

std::string Shown(std::string_view text) {
  // The longest text a fact keeps, in bytes.
  constexpr size_t kMaxFactBytes = 256;
  return ToValidUtf8(Utf8Prefix(text, kMaxFactBytes));
}

void SnapshotReader::Warn(std::string fact, const std::string& file, std::string_view what,
                          std::string_view fallback) {
  const std::string shown_file = ToValidUtf8(file);
  std::string message = ToValidUtf8(file.empty() ? what : fmt::format("{}: {}", file, what));
  message += fmt::format("; {}: {}", fact, fallback);
  warnings_.push_back({std::move(fact), shown_file, std::move(message)});
}

std::optional<std::string_view> SnapshotReader::Text(const std::string& path, const char* fact,
                                                     std::string_view fallback, Missing missing,
                                                     bool partial) {
  const auto it = snapshot_.files.find(path);
  if (it == snapshot_.files.end() || it->second.state == FileRead::State::kMissing) {
    if (missing == Missing::kWarn) Warn(fact, path, "missing", fallback);
    return std::nullopt;
  }
  const FileRead& read = it->second;
  if (read.state == FileRead::State::kUnreadable) {
    Warn(fact, path, fmt::format("unreadable ({})", read.error), fallback);
    return std::nullopt;
  }
  if (read.state == FileRead::State::kTooLong && !partial) {
    Warn(fact, path, fmt::format("longer than the {} bytes read", read.content.size()), fallback);
    return std::nullopt;
  }
  return std::string_view(read.content);
}

std::vector<std::string> SnapshotReader::Matching(std::string_view prefix,
                                                  std::string_view suffix) const {
  std::vector<std::string> keys;
  for (auto it = snapshot_.files.lower_bound(std::string(prefix));
       it != snapshot_.files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const std::string_view key = it->first;
    if (key.size() < prefix.size() + suffix.size() || !key.ends_with(suffix)) continue;
    const std::string_view middle =
        key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
    if (middle.empty() || middle.find('/') != std::string_view::npos) continue;
    if (it->second.state != FileRead::State::kMissing) keys.push_back(it->first);
  }
  return keys;
}

}  // namespace ballast::probe
