// Splits a byte stream that arrives in chunks (a watch response) into lines,
// holding at most one line of a bounded length: a peer that never sends a
// newline costs at most `max_line_bytes` of memory, then an error.
// Not thread-safe: one splitter per stream.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::kube {

class LineSplitter {
 public:
  // Called with each complete line, without its '\n' (and without a '\r'
  // before it). Returns false to stop: Feed then returns Ok at once.
  using LineCallback = std::function<bool(const std::string& line)>;

  explicit LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Appends `chunk`, calls `on_line` for every line it completes. Returns Ok,
  // or Unavailable naming `what` when a line grows past the limit (the stream
  // is then unusable: the caller drops it and watches again). `stopped` is set when on_line
  // returned false.
  Status Feed(std::string_view chunk, const LineCallback& on_line, std::string_view what,
              bool* stopped);

  // The bytes after the last newline (a last line the stream ended without
  // terminating).
  const std::string& pending() const { return pending_; }

 private:
  size_t max_line_bytes_;
  std::string pending_;
};

}  // namespace ballast::kube
