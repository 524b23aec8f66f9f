#include "config/yaml_node.h"

#include <fmt/format.h>

#include <cmath>

namespace ballast::config {
namespace {

std::string Quote(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  return "a map";
}

}  // namespace

StatusOr<YamlNode> YamlNode::Parse(std::string_view text, std::string file_name) {
  auto file = std::make_shared<const std::string>(std::move(file_name));
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return YamlNode(root, file, "");
  } catch (const YAML::Exception& e) {
    return Status::Invalid(fmt::format("{}:{}:{}: not valid YAML: {}", *file, e.mark.line + 1,
                                       e.mark.column + 1, e.msg));
  }
}

int YamlNode::line() const {
  if (!node_.IsDefined()) return 0;
  return node_.Mark().line + 1;
}

std::string YamlNode::Where() const {
  std::string where = *file_;
  if (node_.IsDefined() && node_.Mark().line >= 0) {
    where += fmt::format(":{}:{}", node_.Mark().line + 1, node_.Mark().column + 1);
  }
  return where + ": " + (path_.empty() ? std::string("document") : path_);
}

Status YamlNode::Error(std::string_view expected) const {
  return Status::Invalid(fmt::format("{}: expected {}, got {}", Where(), expected, Quote(node_)));
}

Status YamlNode::Fail(std::string_view message) const {
  return Status::Invalid(fmt::format("{}: {}", Where(), message));
}

StatusOr<std::string> YamlNode::AsString() const {
  if (!node_.IsScalar()) return Error("a string");
  return node_.Scalar();
}

StatusOr<double> YamlNode::AsDouble() const {
  if (!node_.IsScalar()) return Error("a number");
  try {
    double value = node_.as<double>();
    if (!std::isfinite(value)) return Error("a finite number");
    return value;
  } catch (const YAML::Exception&) {
    return Error("a number");
  }
}

StatusOr<int64_t> YamlNode::AsInt(int64_t min, int64_t max) const {
  auto range = [&] {
    return min == INT64_MIN   ? fmt::format("a whole number <= {}", max)
           : max == INT64_MAX ? fmt::format("a whole number >= {}", min)
                              : fmt::format("a whole number in [{}, {}]", min, max);
  };
  if (!node_.IsScalar()) return Error(range());
  int64_t value = 0;
  try {
    value = node_.as<int64_t>();
  } catch (const YAML::Exception&) {
    // Accept 1e8 and 300000.0 when they are whole.
    try {
      double d = node_.as<double>();
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e18) return Error(range());
      value = static_cast<int64_t>(d);
    } catch (const YAML::Exception&) {
      return Error(range());
    }
  }
  if (value < min || value > max) return Error(range());
  return value;
}

StatusOr<double> YamlNode::AsPositive() const {
  auto value = AsDouble();
  if (!value.ok() || *value <= 0) return Error("a number > 0");
  return value;
}

StatusOr<bool> YamlNode::AsBool() const {
  if (!node_.IsScalar()) return Error("true or false");
  try {
    return node_.as<bool>();
  } catch (const YAML::Exception&) {
    return Error("true or false");
  }
}

Status YamlNode::ExpectMap(std::initializer_list<std::string_view> allowed) const {
  if (!node_.IsMap()) return Error("a map");
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    bool known = false;
    for (auto name : allowed) known = known || name == key;
    if (!known) {
      YamlNode key_node(entry.first, file_, path_.empty() ? key : path_ + "." + key);
      return key_node.Fail(
          fmt::format("unknown key '{}' (expected one of: {})", key, fmt::join(allowed, ", ")));
    }
  }
  return Status::Ok();
}

Status YamlNode::ExpectSequence(bool allow_empty) const {
  if (!node_.IsSequence()) return Error("a list");
  if (!allow_empty && node_.size() == 0)
    return Fail("expected a non-empty list, got an empty list");
  return Status::Ok();
}

std::optional<YamlNode> YamlNode::Get(std::string_view key) const {
  if (!node_.IsMap()) return std::nullopt;
  const YAML::Node child = node_[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) return std::nullopt;
  return YamlNode(child, file_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

StatusOr<YamlNode> YamlNode::Require(std::string_view key) const {
  auto child = Get(key);
  if (!child) return Fail(fmt::format("missing required key '{}'", key));
  return *child;
}

std::vector<YamlNode> YamlNode::Elements() const {
  std::vector<YamlNode> out;
  if (!node_.IsSequence()) return out;
  for (size_t i = 0; i < node_.size(); ++i) {
    out.push_back(YamlNode(node_[i], file_, fmt::format("{}[{}]", path_, i)));
  }
  return out;
}

std::vector<std::pair<std::string, YamlNode>> YamlNode::Entries() const {
  std::vector<std::pair<std::string, YamlNode>> out;
  if (!node_.IsMap()) return out;
  for (const auto& entry : node_) {
    std::string key = entry.first.Scalar();
    out.emplace_back(key, YamlNode(entry.second, file_, path_.empty() ? key : path_ + "." + key));
  }
  return out;
}

}  // namespace ballast::config
