#include "core/config/yaml_node.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ballast::config {
namespace {

std::string Quote(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  return "a map";
}

// Thrown by DocumentGuard to stop the parse at the first offence.
struct Refused {
  YAML::Mark mark;
  std::string message;
};

// Reads the parser's events for one document, before it is loaded, and
// refuses it when maps and lists nest deeper than the limit or aliases would
// make a walk over the loaded tree expand past the budget. It never expands
// anything itself: each anchored node's size (nodes plus scalar bytes) and
// height are recorded once, and an alias adds them as numbers.
class DocumentGuard : public YAML::EventHandler {
 public:
  DocumentGuard(const YamlLimits& limits, size_t text_bytes)
      : max_depth_(limits.max_depth),
        max_nodes_(limits.max_nodes),
        alias_budget_(std::max(limits.min_alias_budget, text_bytes)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor, 1); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(mark, anchor, 1 + value.size());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Anchored {
    std::string name;
    uint64_t size = 0;  // nodes plus scalar bytes, aliases inside expanded
    int height = 0;     // maps and lists on the longest path down, 0 for a scalar
    bool closed = false;
  };
  struct Frame {
    YAML::anchor_t anchor;
    uint64_t size = 1;
    int height = 1;
  };

  Anchored& Record(YAML::anchor_t anchor) {
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    if (!anchor_name_.empty()) anchors_[anchor].name = std::move(anchor_name_);
    anchor_name_.clear();
    return anchors_[anchor];
  }
  // Adds a finished child to the collection that holds it.
  void Add(uint64_t size, int height) {
    if (open_.empty()) return;
    open_.back().size += size;
    open_.back().height = std::max(open_.back().height, height + 1);
  }
  // Counts a node as written; refuses one past the limit.
  void Count(const YAML::Mark& mark) {
    if (++written_ > max_nodes_) {
      throw Refused{mark, fmt::format("more than {} maps, lists and scalars", max_nodes_)};
    }
  }
  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, uint64_t size) {
    Count(mark);
    if (anchor != YAML::NullAnchor) {
      Anchored& anchored = Record(anchor);
      anchored.size = size;
      anchored.height = 0;
      anchored.closed = true;
    }
    Add(size, 0);
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Count(mark);
    if (static_cast<int>(open_.size()) >= max_depth_) {
      throw Refused{mark, fmt::format("nested deeper than {} maps and lists", max_depth_)};
    }
    if (anchor != YAML::NullAnchor) Record(anchor).closed = false;
    open_.push_back({anchor});
  }
  void Close() {
    const Frame done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) {
      Anchored& anchored = anchors_[done.anchor];
      anchored.size = done.size;
      anchored.height = done.height;
      anchored.closed = true;
    }
    Add(done.size, done.height);
  }

  int max_depth_;
  uint64_t max_nodes_;
  uint64_t alias_budget_;
  uint64_t written_ = 0;  // nodes as written so far
  uint64_t aliased_ = 0;  // what the aliases seen so far add
  std::string anchor_name_;
  std::vector<Anchored> anchors_;
  std::vector<Frame> open_;
};

void DocumentGuard::OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) {
  const Anchored target = anchor < anchors_.size() ? anchors_[anchor] : Anchored{};
  const std::string name = target.name.empty() ? fmt::format("#{}", anchor) : target.name;
  if (!target.closed) {
    throw Refused{mark, fmt::format("alias '{}' is inside the node it names (a cycle)", name)};
  }
  if (static_cast<int>(open_.size()) + target.height > max_depth_) {
    throw Refused{mark, fmt::format("alias '{}' nests the document deeper than {} maps and lists",
                                    name, max_depth_)};
  }
  aliased_ += target.size;
  if (aliased_ > alias_budget_) {
    throw Refused{mark, fmt::format("alias '{}' takes what aliases repeat past {} nodes and "
                                    "bytes (an alias bomb?); write the values out instead",
                                    name, alias_budget_)};
  }
  Add(target.size, target.height);
}

// Runs the guard over the first document of `text`; throws Refused or a
// YAML::Exception.
void GuardDocument(const std::string& text, const YamlLimits& limits) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentGuard guard(limits, text.size());
  parser.HandleNextDocument(guard);
}

std::string At(const std::string& file, const YAML::Mark& mark) {
  return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

}  // namespace

StatusOr<YamlNode> YamlNode::Parse(std::string_view text, std::string file_name,
                                   const YamlLimits& limits) {
  auto file = std::make_shared<const std::string>(std::move(file_name));
  if (text.size() > limits.max_bytes) {
    return Status::Invalid(fmt::format("{}: {} bytes is over the limit of {} bytes", *file,
                                       text.size(), limits.max_bytes));
  }
  const std::string owned(text);
  try {
    GuardDocument(owned, limits);
    YAML::Node root = YAML::Load(owned);
    return YamlNode(root, file, "");
  } catch (const Refused& refused) {
    return Status::Invalid(fmt::format("{}: {}", At(*file, refused.mark), refused.message));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(fmt::format("{}: not valid YAML: {}", At(*file, e.mark), e.msg));
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
