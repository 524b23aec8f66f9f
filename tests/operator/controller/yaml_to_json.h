// YamlToJson: a YAML text as the JSON the API server would store for it
// (kubectl's conversion: integers, floats and booleans typed, the rest
// strings), so tests can feed the shipped YAML files to the JSON readers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace ballast::testing {

inline nlohmann::json ScalarToJson(const std::string& text, bool quoted) {
  if (quoted) return text;
  if (text == "true") return true;
  if (text == "false") return false;
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  int64_t integer = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (error == std::errc() && end == text.data() + text.size()) return integer;
  double real = 0;
  auto [real_end, real_error] = std::from_chars(text.data(), text.data() + text.size(), real);
  if (real_error == std::errc() && real_end == text.data() + text.size()) return real;
  return text;
}

inline nlohmann::json YamlNodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) {
        out[entry.first.as<std::string>()] = YamlNodeToJson(entry.second);
      }
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& element : node) out.push_back(YamlNodeToJson(element));
      return out;
    }
    case YAML::NodeType::Scalar:
      return ScalarToJson(node.Scalar(), node.Tag() == "!");
    default:
      return nullptr;
  }
}

inline nlohmann::json YamlToJson(const std::string& text) {
  return YamlNodeToJson(YAML::Load(text));
}

}  // namespace ballast::testing
