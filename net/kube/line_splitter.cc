#include "net/kube/line_splitter.h"

#include <fmt/format.h>

namespace ballast::kube {

Status LineSplitter::Feed(std::string_view chunk, const LineCallback& on_line,
                          std::string_view what, bool* stopped) {
  *stopped = false;
  while (!chunk.empty()) {
    const size_t newline = chunk.find('\n');
    const std::string_view part = chunk.substr(0, newline);
    if (pending_.size() + part.size() > max_line_bytes_) {
      pending_.clear();
      return Status::Unavailable(fmt::format(
          "{}: a line longer than {} bytes (the limit of one watch event)", what, max_line_bytes_));
    }
    pending_.append(part);
    if (newline == std::string_view::npos) return Status::Ok();
    chunk.remove_prefix(newline + 1);
    if (!pending_.empty() && pending_.back() == '\r') pending_.pop_back();
    std::string line;
    line.swap(pending_);
    if (!line.empty() && !on_line(line)) {
      *stopped = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace ballast::kube
