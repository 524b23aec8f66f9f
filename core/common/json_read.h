// Strict, typed reading of JSON objects that someone else wrote (an object
// from the Kubernetes API server, a file): every accessor checks presence,
// type and range first, so nlohmann::json never throws, and every error names
// the field's path and shows what was there:
//
//   spec.workload.primes.limit: expected an integer >= 2, got "abc"
//
// Paths are written as the user sees them: "spec.tolerations[2].key".
// The text itself must have been parsed with ParseBoundedJson (or come from a
// source that bounds it, such as an informer's cache).
//
// Thread-safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/utf8.h"

namespace ballast::json_read {

// `text` for a message: as it is when at most `max` bytes, else its first
// bytes (never a UTF-8 sequence cut in two), "..." and the whole length, so
// a message quoting what someone else wrote stays short whatever they wrote.
inline std::string Cut(std::string_view text, size_t max = 60) {
  if (text.size() <= max) return std::string(text);
  size_t keep = max > 20 ? max - 20 : max;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return fmt::format("{}... ({} bytes)", text.substr(0, keep), text.size());
}

// "<path>.<key>", or "<key>" when path is empty; a key longer than 60 bytes
// is cut (Cut), so a path, and a message that starts with it, stays short.
inline std::string Field(std::string_view path, std::string_view key) {
  const std::string shown = Cut(key);
  return path.empty() ? shown : fmt::format("{}.{}", path, shown);
}

// "<path>[<index>]".
inline std::string Element(std::string_view path, size_t index) {
  return fmt::format("{}[{}]", path, index);
}

// The value as JSON text, shortened to about 60 characters (cut between
// characters, so it stays valid UTF-8), for messages.
inline std::string Shown(const nlohmann::json& value) {
  // JSON has no NaN or infinity (dump writes null); a YAML file can hold them.
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    return std::isnan(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
  }
  std::string text = DumpJson(value);
  if (text.size() > 60) text = std::string(Utf8Prefix(text, 57)) + "...";
  return text;
}

// Invalid "<path>: expected <expected>, got <value>", the path as data
// (Status::InvalidAt; "document" for the whole document, which has none).
inline Status Expected(std::string_view path, std::string_view expected,
                       const nlohmann::json& got) {
  const std::string detail = fmt::format("expected {}, got {}", expected, Shown(got));
  if (path.empty()) return Status::Invalid("document: " + detail);
  return Status::InvalidAt(std::string(path), detail);
}

// Ok when `node` is an object whose keys are all in `allowed`; Invalid
// "<path>.<key>: unknown field \"<key>\" (allowed: ...)" for the first
// unknown key otherwise, or "<path>: expected an object" when not an object.
inline Status ExpectObject(const nlohmann::json& node, std::string_view path,
                           std::initializer_list<std::string_view> allowed) {
  if (!node.is_object()) return Expected(path, "an object", node);
  for (const auto& [key, value] : node.items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (!known) {
      return Status::InvalidAt(Field(path, key), fmt::format("unknown field \"{}\" (allowed: {})",
                                                             Cut(key), fmt::join(allowed, ", ")));
    }
  }
  return Status::Ok();
}

// The member `key` of object `node`, or nullptr when absent, null (as the
// API server prunes a null, and as YAML writes an empty value) or `node` is
// not an object.
inline const nlohmann::json* Find(const nlohmann::json& node, std::string_view key) {
  if (!node.is_object()) return nullptr;
  auto it = node.find(key);
  return it == node.end() || it->is_null() ? nullptr : &*it;
}

// The member `key` of `node`; Invalid "<path>.<key>: missing" when absent.
inline StatusOr<const nlohmann::json*> Require(const nlohmann::json& node, std::string_view path,
                                               std::string_view key) {
  const nlohmann::json* found = Find(node, key);
  if (!found) return Status::InvalidAt(Field(path, key), "missing");
  return found;
}

// A whole number in [min, max] (a JSON integer, or a float with no fraction
// such as 3.0); Invalid naming the path and range otherwise.
inline StatusOr<int64_t> Int(const nlohmann::json& value, std::string_view path, int64_t min,
                             int64_t max = std::numeric_limits<int64_t>::max()) {
  const std::string expected = max == std::numeric_limits<int64_t>::max()
                                   ? fmt::format("an integer >= {}", min)
                                   : fmt::format("an integer in [{}, {}]", min, max);
  int64_t number = 0;
  if (value.is_number_unsigned()) {
    const uint64_t big = value.get<uint64_t>();
    if (big > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Expected(path, expected, value);
    }
    number = static_cast<int64_t>(big);
  } else if (value.is_number_integer()) {
    number = value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double real = value.get<double>();
    if (!std::isfinite(real) || real != std::floor(real) || std::fabs(real) > 9e18) {
      return Expected(path, expected, value);
    }
    number = static_cast<int64_t>(real);
  } else {
    return Expected(path, expected, value);
  }
  if (number < min || number > max) return Expected(path, expected, value);
  return number;
}

// A whole number >= 0 that fits 64 unsigned bits (a JSON integer, or a float
// with no fraction below 9e18); Invalid naming the path otherwise.
inline StatusOr<uint64_t> Uint(const nlohmann::json& value, std::string_view path) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  if (value.is_number_float()) {
    const double real = value.get<double>();
    if (std::isfinite(real) && real >= 0 && real == std::floor(real) && real <= 9e18) {
      return static_cast<uint64_t>(real);
    }
  }
  return Expected(path, "a whole number >= 0", value);
}

// "0x" and 16 lower-case hex digits: how 64-bit checksums travel (JSON
// readers in other languages lose precision on integers above 2^53).
inline StatusOr<uint64_t> Hex64(const nlohmann::json& value, std::string_view path) {
  constexpr std::string_view kExpected = "\"0x\" and 16 lower-case hex digits";
  if (!value.is_string()) return Expected(path, kExpected, value);
  const std::string& text = value.get_ref<const std::string&>();
  if (text.size() != 18 || text[0] != '0' || text[1] != 'x') {
    return Expected(path, kExpected, value);
  }
  uint64_t number = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return Expected(path, kExpected, value);
    number = number << 4 | static_cast<uint64_t>(digit);
  }
  return number;
}

// A finite number > 0 (and <= max); Invalid naming the path otherwise.
inline StatusOr<double> Positive(const nlohmann::json& value, std::string_view path,
                                 double max = std::numeric_limits<double>::max()) {
  const std::string expected = max == std::numeric_limits<double>::max()
                                   ? std::string("a number > 0")
                                   : fmt::format("a number > 0 and <= {:g}", max);
  if (!value.is_number()) return Expected(path, expected, value);
  const double number = value.get<double>();
  if (!std::isfinite(number) || number <= 0 || number > max) return Expected(path, expected, value);
  return number;
}

// A finite number in [min, max]; Invalid "<path>: expected <what> in [min,
// max], got ..." otherwise (the bounds written as %g writes them).
inline StatusOr<double> InRange(const nlohmann::json& value, std::string_view path, double min,
                                double max, std::string_view what) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < min ||
      value.get<double>() > max) {
    return Expected(path, fmt::format("{} in [{:g}, {:g}]", what, min, max), value);
  }
  return value.get<double>();
}

// A string; Invalid naming the path otherwise.
inline StatusOr<std::string> String(const nlohmann::json& value, std::string_view path) {
  if (!value.is_string()) return Expected(path, "a string", value);
  return value.get<std::string>();
}

// true or false; Invalid naming the path otherwise.
inline StatusOr<bool> Bool(const nlohmann::json& value, std::string_view path) {
  if (!value.is_boolean()) return Expected(path, "true or false", value);
  return value.get<bool>();
}

// A Kubernetes label's value: a string, or a number or boolean as a YAML
// file writes it (`ballast.io/ram-gb: 4` reads as "4"); Invalid
// "<path>: expected a label value (a string), got ..." otherwise.
inline StatusOr<std::string> LabelValue(const nlohmann::json& value, std::string_view path) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean() || value.is_number_integer() || value.is_number_unsigned()) {
    return value.dump();
  }
  if (value.is_number_float() && std::isfinite(value.get<double>())) {
    return fmt::format("{}", value.get<double>());
  }
  return Expected(path, "a label value (a string)", value);
}

// Lenient reading, for fields shown or compared, never trusted: of an object
// a person may have edited (a pod, a node, a status), what is absent or of
// another type reads as nothing, and lookups chain:
// TextAt(At(pod, "status"), "phase").

// The member `key` of `node`, or null when absent, null, or `node` is not an
// object.
inline const nlohmann::json& At(const nlohmann::json& node, std::string_view key) {
  static const nlohmann::json kAbsent;
  const nlohmann::json* found = Find(node, key);
  return found ? *found : kAbsent;
}

// The member `key` as a string; "" when it is not one.
inline std::string TextAt(const nlohmann::json& node, std::string_view key) {
  const nlohmann::json& value = At(node, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// The member `key` as a bool; false when it is not one.
inline bool FlagAt(const nlohmann::json& node, std::string_view key) {
  const nlohmann::json& value = At(node, key);
  return value.is_boolean() && value.get<bool>();
}

// The member `key` as a whole number in [min, max]; nullopt otherwise.
inline std::optional<int64_t> IntegerAt(const nlohmann::json& node, std::string_view key,
                                        int64_t min = std::numeric_limits<int64_t>::min(),
                                        int64_t max = std::numeric_limits<int64_t>::max()) {
  const nlohmann::json& value = At(node, key);
  if (value.is_null()) return std::nullopt;
  auto number = Int(value, key, min, max);
  return number.ok() ? std::optional<int64_t>(*number) : std::nullopt;
}

// The member `key` when it is an object; nullptr otherwise.
inline const nlohmann::json* ObjectAt(const nlohmann::json& node, std::string_view key) {
  const nlohmann::json* value = Find(node, key);
  return value && value->is_object() ? value : nullptr;
}

// The objects in the list `key`: none when it is absent or not a list;
// elements that are not objects are left out.
inline std::vector<const nlohmann::json*> ObjectsAt(const nlohmann::json& node,
                                                    std::string_view key) {
  std::vector<const nlohmann::json*> objects;
  const nlohmann::json& list = At(node, key);
  if (!list.is_array()) return objects;
  for (const nlohmann::json& element : list) {
    if (element.is_object()) objects.push_back(&element);
  }
  return objects;
}

// The strings in the list `key`: none when it is absent or not a list;
// elements that are not strings are left out.
inline std::vector<std::string> StringsAt(const nlohmann::json& node, std::string_view key) {
  std::vector<std::string> strings;
  const nlohmann::json& list = At(node, key);
  if (!list.is_array()) return strings;
  for (const nlohmann::json& element : list) {
    if (element.is_string()) strings.push_back(element.get<std::string>());
  }
  return strings;
}

// The entries of the map `key` whose values are strings.
inline std::map<std::string, std::string> StringMapAt(const nlohmann::json& node,
                                                      std::string_view key) {
  std::map<std::string, std::string> out;
  const nlohmann::json& map = At(node, key);
  if (!map.is_object()) return out;
  for (const auto& [name, value] : map.items()) {
    if (value.is_string()) out.emplace(name, value.get<std::string>());
  }
  return out;
}

// The member `key` of `node` read by `read` (Uint, Hex64, String, Bool: a
// reader of a value and its path) as "<path>.<key>"; Invalid
// "<path>.<key>: missing" when absent.
template <typename Read>
auto Member(const nlohmann::json& node, std::string_view path, std::string_view key, Read read)
    -> decltype(read(node, path)) {
  const nlohmann::json* found = Find(node, key);
  if (!found) return Status::InvalidAt(Field(path, key), "missing");
  return read(*found, Field(path, key));
}

}  // namespace ballast::json_read
