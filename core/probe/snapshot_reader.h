// SnapshotReader: the files of a probe's Snapshot as the facts read them —
// a file's text, or a warning naming the fact and why there is none; the
// files whose path matches a pattern — with the warnings kept in the order
// they were met (facts.h: DeriveFacts never fails, it warns).
//
// Thread-safety: not thread-safe; one per DeriveFacts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe/facts.h"

namespace ballast::probe {

// Text read from the tree as a fact keeps it: at most 256 bytes, cut
// between characters, every byte that is not UTF-8 (a Latin-1 model name)
// replaced by U+FFFD (common/utf8.h), so that the JSON, the labels and the
// Events made of it are valid whatever the files hold.
std::string Shown(std::string_view text);

class SnapshotReader {
 public:
  // Reads `snapshot`, which must outlive it.
  explicit SnapshotReader(const Snapshot& snapshot) : snapshot_(snapshot) {}

  // Whether Text warns of a missing file.
  enum class Missing { kSilent, kWarn };

  const Snapshot& snapshot() const { return snapshot_; }
  // Whether the snapshot holds `path` (read, or found missing).
  bool Has(const std::string& path) const { return snapshot_.files.count(path) != 0; }

  // Adds a warning that `fact` falls back to `fallback` because of what is
  // wrong with `file`. The file's path (a directory entry of the tree) and
  // what was wrong (an error that names a path) are made valid UTF-8.
  void Warn(std::string fact, const std::string& file, std::string_view what,
            std::string_view fallback);

  // The content of `path` when it was read whole (or, with `partial`, its
  // first bytes when too long); otherwise a warning for `fact` (none for a
  // missing file when kSilent) and nullopt.
  std::optional<std::string_view> Text(const std::string& path, const char* fact,
                                       std::string_view fallback, Missing missing,
                                       bool partial = false);

  // Keys of the snapshot matching "prefix*suffix" with no '/' in the '*',
  // whose file was read.
  std::vector<std::string> Matching(std::string_view prefix, std::string_view suffix) const;

  // The warnings so far, in order; the reader keeps none after.
  std::vector<Warning> TakeWarnings() { return std::move(warnings_); }

 private:
  const Snapshot& snapshot_;
  std::vector<Warning> warnings_;
};

}  // namespace ballast::probe
