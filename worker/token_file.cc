#include "worker/token_file.h"

#include <fmt/format.h>

#include "fileio/bounded_file.h"

namespace ballast::worker {

namespace {

bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

StatusOr<std::string> ParseTokenFile(std::string_view text) {
  while (!text.empty() && Space(text.front())) text.remove_prefix(1);
  while (!text.empty() && Space(text.back())) text.remove_suffix(1);
  if (text.empty()) return Status::Invalid("it is empty");
  for (char c : text) {
    if (Space(c)) return Status::Invalid("it holds more than one word");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::Invalid("it holds a control character");
    }
  }
  return std::string(text);
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  auto text = fileio::ReadBoundedFile(path, kMaxTokenFileBytes);
  if (text.status().code() == StatusCode::kNotFound) {
    return Status::Unavailable("the token file " + text.status().message());
  }
  if (!text.ok()) return text.status().WithPrefix("the token file ");
  auto token = ParseTokenFile(*text);
  if (!token.ok()) {
    return Status::Invalid(
        fmt::format("the token file {} holds no token: {}", path, token.status().message()));
  }
  return token;
}

}  // namespace ballast::worker
