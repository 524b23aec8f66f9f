#include "core/common/utf8.h"

namespace ballast {
namespace {

// The length of the well-formed UTF-8 character at the start of `text`, or,
// when it is ill-formed, minus the length of its maximal ill-formed
// subsequence (at least 1). `text` is not empty.
int CharLength(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  int length = 0;
  unsigned char low = 0x80;  // the range of the second byte (RFC 3629, section 4)
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // no overlong forms
    if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // no overlong forms
    if (lead == 0xf4) high = 0x8f;  // nothing above U+10FFFF
  } else {
    return -1;  // a continuation byte, 0xc0, 0xc1 or 0xf5 to 0xff
  }
  for (int i = 1; i < length; ++i) {
    if (static_cast<size_t>(i) >= text.size()) return -i;
    const unsigned char c = byte(static_cast<size_t>(i));
    const bool ok = i == 1 ? c >= low && c <= high : c >= 0x80 && c <= 0xbf;
    if (!ok) return -i;
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view text) { return FindInvalidUtf8(text) == std::string_view::npos; }

size_t FindInvalidUtf8(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    const int length = CharLength(text.substr(at));
    if (length < 0) return at;
    at += static_cast<size_t>(length);
  }
  return std::string_view::npos;
}

std::string ToValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const int length = CharLength(text);
    if (length > 0) {
      out.append(text.substr(0, static_cast<size_t>(length)));
      text.remove_prefix(static_cast<size_t>(length));
    } else {
      out.append(kReplacementCharacter);
      text.remove_prefix(static_cast<size_t>(-length));
    }
  }
  return out;
}

std::string EscapeControls(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string valid = ToValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto byte = static_cast<unsigned char>(valid[i]);
    const auto next = i + 1 < valid.size() ? static_cast<unsigned char>(valid[i + 1]) : 0;
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {  // U+0080 to U+009F
      out += {'\\', 'u', '0', '0', kHex[next >> 4], kHex[next & 0xf]};
      ++i;
    } else {
      out += valid[i];
    }
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = 0;
  while (end < text.size()) {
    const int length = CharLength(text.substr(end));
    const size_t step = static_cast<size_t>(length > 0 ? length : -length);
    if (end + step > max_bytes) break;
    end += step;
  }
  return text.substr(0, end);
}

}  // namespace ballast
