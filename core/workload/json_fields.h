// Strict reading of JSON objects for the workload module (private to it):
// every accessor checks presence and type first, so nlohmann::json never
// throws, and every error names the field as "<where>.<key>".
//
// Thread-safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::workload {

// Ok when `node` is an object whose keys are all in `allowed`; Invalid otherwise.
inline Status ExpectObject(const nlohmann::json& node, std::string_view where,
                           std::initializer_list<std::string_view> allowed) {
  if (!node.is_object()) return Status::Invalid(fmt::format("{}: expected an object", where));
  for (const auto& [key, value] : node.items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (!known) return Status::Invalid(fmt::format("{}: unknown key '{}'", where, key));
  }
  return Status::Ok();
}

// The unsigned integer under `key`; Invalid when missing or not a whole number >= 0.
inline StatusOr<uint64_t> RequireUint(const nlohmann::json& node, std::string_view where,
                                      const std::string& key) {
  auto it = node.find(key);
  if (it == node.end()) return Status::Invalid(fmt::format("{}.{}: missing", where, key));
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() >= 0) {
    return static_cast<uint64_t>(it->get<int64_t>());
  }
  return Status::Invalid(fmt::format("{}.{}: expected a whole number >= 0", where, key));
}

// The string under `key`; Invalid when missing or not a string.
inline StatusOr<std::string> RequireString(const nlohmann::json& node, std::string_view where,
                                           const std::string& key) {
  auto it = node.find(key);
  if (it == node.end()) return Status::Invalid(fmt::format("{}.{}: missing", where, key));
  if (!it->is_string()) return Status::Invalid(fmt::format("{}.{}: expected a string", where, key));
  return it->get<std::string>();
}

// "0x" and 16 lower-case hex digits: how 64-bit checksums travel (JSON
// readers in other languages lose precision on integers above 2^53).
inline std::string Hex64(uint64_t value) { return fmt::format("{:#018x}", value); }

// The Hex64 string under `key`; Invalid when missing or malformed.
inline StatusOr<uint64_t> RequireHex64(const nlohmann::json& node, std::string_view where,
                                       const std::string& key) {
  BALLAST_ASSIGN_OR_RETURN(std::string text, RequireString(node, where, key));
  if (text.size() != 18 || text[0] != '0' || text[1] != 'x') {
    return Status::Invalid(
        fmt::format("{}.{}: expected \"0x\" and 16 hex digits, got '{}'", where, key, text));
  }
  uint64_t value = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    const char c = text[i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) {
      return Status::Invalid(
          fmt::format("{}.{}: expected lower-case hex digits, got '{}'", where, key, text));
    }
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

}  // namespace ballast::workload
