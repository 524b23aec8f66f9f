// Text that leaves the program (JSON, node labels, Kubernetes objects, the
// terminal) is valid UTF-8, whatever bytes it was made from: /proc and /sys
// files, os-release, device-tree strings, YAML files, directory entries.
//
// The rule is one for the whole project: bytes that are not well-formed
// UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF)
// are replaced by U+FFFD, the replacement character (EF BF BD): one for each
// maximal ill-formed subsequence, as Unicode recommends and nlohmann's
// error_handler_t::replace does, so each stray byte of Latin-1 text gives
// one. A Latin-1 "ACME board \xe9" becomes "ACME board \uFFFD". Valid text is
// left as it is. Replacing rather than escaping keeps the text readable and
// the same in every output (JSON, labels, messages).
//
// DumpJson is the one way the project turns an nlohmann::json it built into
// text: it replaces invalid bytes the same way instead of throwing
// type_error.316, so a string that was not cleaned at its source still never
// aborts a program.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ballast {

// The replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xef\xbf\xbd";

// Returns true when `text` is well-formed UTF-8 (RFC 3629).
bool IsValidUtf8(std::string_view text);

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8, or std::string_view::npos when it is all valid.
size_t FindInvalidUtf8(std::string_view text);

// `text` with each maximal ill-formed subsequence replaced by U+FFFD. Returns `text` unchanged when
// it is valid already.
std::string ToValidUtf8(std::string_view text);

// `text` as a terminal, a Kubernetes Event or a condition may show it: what
// a user's command wrote (its error, the end of its output, a failed item's
// value) reaches them as it is, and a control character acts on a terminal —
// "\x1b[2J\x1b[H" clears the screen and moves to its top, "\r" goes back to
// the start of the line — so a command could wipe what was printed and
// forge a result line. Returns the text valid UTF-8 (ToValidUtf8) with each
// control character but line feed and tab written out: C0 (U+0000–U+001F)
// and DEL as "\x1b", C1 (U+0080–U+009F, which some terminals also obey) as
// "\u009b". Applying it twice gives what once gives. Every such sink uses
// it: `ballast run`'s table and messages, the operator's Events
// (EventRecorder) and conditions (SetCondition).
std::string EscapeControls(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end
// inside a multi-byte character of valid UTF-8 (an invalid byte counts as one
// character). Use it to cut text before ToValidUtf8, so that a cut never
// turns a valid character into replacement characters.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

// `value` as JSON text, pretty-printed with `indent` spaces (-1: compact), any
// invalid UTF-8 in its strings replaced by U+FFFD. Never throws.
template <typename Json>
std::string DumpJson(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ballast
