#include "core/common/names.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>

namespace ballast {
namespace {

constexpr size_t kQuoteLimit = 80;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string Expected(NameKind kind) {
  if (kind == NameKind::kDnsLabel) {
    return fmt::format(
        "a DNS-1123 label (1 to {} characters: a-z, 0-9 and '-', starting and ending with a "
        "letter or digit)",
        kMaxDnsLabelLength);
  }
  return fmt::format(
      "a DNS-1123 subdomain (1 to {} characters: a-z, 0-9, '-' and '.', each part between dots "
      "starting and ending with a letter or digit)",
      kMaxDnsSubdomainLength);
}

// One character of a name, quoted for a message.
std::string QuoteChar(char c) { return QuoteForMessage(std::string_view(&c, 1)); }

// What is wrong with the characters of `name` (its length already checked),
// or nullopt when nothing is. Positions are 1-based.
std::optional<std::string> FindFault(std::string_view name, NameKind kind) {
  const bool dots = kind == NameKind::kDnsSubdomain;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (IsLowerAlnum(c)) continue;
    if (c != '-' && !(dots && c == '.')) {
      return fmt::format("{} (character {}) is not allowed", QuoteChar(c), i + 1);
    }
    // '-' or '.': never first or last, and never beside a '.'.
    const bool edge = i == 0 || i + 1 == name.size();
    const bool beside_dot =
        (i > 0 && name[i - 1] == '.') || (i + 1 < name.size() && name[i + 1] == '.');
    if (edge || (dots && beside_dot)) {
      return fmt::format("{} (character {}) must sit between letters or digits", QuoteChar(c),
                         i + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::string QuoteForMessage(std::string_view text) {
  std::string out = "'";
  const size_t shown = std::min(text.size(), kQuoteLimit);
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (shown < text.size()) out += fmt::format("... ({} characters)", text.size());
  return out;
}

std::string BoundedFileName(std::string_view name, std::string_view suffix, size_t max_bytes) {
  if (name.size() + suffix.size() <= max_bytes) return fmt::format("{}{}", name, suffix);
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  const std::string tail = fmt::format("-{:016x}{}", hash, suffix);
  const size_t kept = max_bytes > tail.size() ? max_bytes - tail.size() : 0;
  return fmt::format("{}{}", name.substr(0, kept), tail);
}

Status CheckName(std::string_view name, NameKind kind) {
  const size_t max = kind == NameKind::kDnsLabel ? kMaxDnsLabelLength : kMaxDnsSubdomainLength;
  std::optional<std::string> fault;
  if (name.empty()) {
    fault = "it is empty";
  } else if (name.size() > max) {
    fault = fmt::format("it has {} characters, more than {}", name.size(), max);
  } else {
    fault = FindFault(name, kind);
  }
  if (!fault) return Status::Ok();
  return Status::Invalid(
      fmt::format("expected {}, got {}: {}", Expected(kind), QuoteForMessage(name), *fault));
}

}  // namespace ballast
