#include "core/config/document.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/common/json_read.h"
#include "core/common/utf8.h"

namespace ballast::config {
namespace {

using nlohmann::json;

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

// The offset of the first character YAML does not allow in a stream (a C0
// control other than tab, line feed and carriage return; DEL; a C1 control
// other than NEL), or npos. yaml-cpp reads such text into garbage (a NUL
// ends its view of a scalar) instead of refusing it. Requires valid UTF-8.
size_t FindUnprintable(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) return i;
    if (byte == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F && next != 0x85) return i;
    }
  }
  return std::string_view::npos;
}

// "file:line:col" of byte `offset` of `text`.
std::string AtOffset(const std::string& file, std::string_view text, size_t offset) {
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t newline = before.rfind('\n');
  const size_t column = newline == std::string_view::npos ? offset + 1 : offset - newline;
  return fmt::format("{}:{}:{}", file, line, column);
}

Position PositionOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return {mark.line + 1, mark.column + 1};
}

// Whole numbers as kubectl's reader takes them: [-+]?[0-9]+, 0o[0-7]+,
// 0[0-7]+ (octal), 0x[0-9a-fA-F]+.
std::optional<json> ResolveInteger(std::string_view text) {
  int base = 10;
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
    base = digits[1] == 'x' ? 16 : 8;
    digits.remove_prefix(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;  // YAML 1.1's octal, as kubectl reads it: 017 is 15
    digits.remove_prefix(1);
  }
  if (digits.empty()) return std::nullopt;
  for (char c : digits) {
    const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                               : c >= '0' && c < static_cast<char>('0' + base);
    if (!ok) return std::nullopt;
  }
  uint64_t magnitude = 0;
  auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (error == std::errc::result_out_of_range) {
    double value = 0;
    for (char c : digits) value = value * base + std::stoi(std::string(1, c), nullptr, base);
    return json(negative ? -value : value);
  }
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  if (!negative) {
    if (magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return json(static_cast<int64_t>(magnitude));
    }
    return json(magnitude);
  }
  if (magnitude <= uint64_t{1} << 63) return json(static_cast<int64_t>(0 - magnitude));
  return json(-static_cast<double>(magnitude));
}

// Floats as the core schema writes them: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
// and [-+]?.inf, .nan in their three spellings.
std::optional<json> ResolveFloat(std::string_view text) {
  std::string_view body = text;
  const bool negative = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    return json(negative ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity());
  }
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return json(std::numeric_limits<double>::quiet_NaN());
  }
  size_t i = 0;
  size_t mantissa_digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i])))
    ++i, ++mantissa_digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i])))
      ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    size_t exponent_digits = 0;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i])))
      ++i, ++exponent_digits;
    if (exponent_digits == 0) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  double value = 0;
  const std::string owned(text[0] == '+' ? text.substr(1) : text);
  auto [end, error] = std::from_chars(owned.data(), owned.data() + owned.size(), value);
  if (error == std::errc::result_out_of_range) {
    // Past the double range: infinity or zero, with the sign written.
    value = std::strtod(owned.c_str(), nullptr);
  } else if (error != std::errc() || end != owned.data() + owned.size()) {
    return std::nullopt;
  }
  return json(value);
}

// Builds the tree of `node` at `path`, recording positions. The guard has
// bounded the depth and the aliases' expansion, so the recursion is bounded.
// A scalar key as kubectl's reader makes it: a plain key YAML 1.1 reads as a
// boolean (n, yes, On, ...) becomes "true" or "false"; anything else,
// quoted or not, stays as written.
std::string MapKey(const YAML::Node& key) {
  if (key.Tag() == "?") {
    if (const json resolved = ResolvePlainScalar(key.Scalar()); resolved.is_boolean()) {
      return resolved.get<bool>() ? "true" : "false";
    }
  }
  return key.Scalar();
}

Status Convert(const YAML::Node& node, const std::string& path, json& out, SourceMap& source);

// A map's entries, each key a string written once.
Status ConvertMap(const YAML::Node& node, const std::string& path, json& out, SourceMap& source) {
  out = json::object();
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      source.Add(path, PositionOf(entry.first));
      return source.Locate(Status::Invalid(fmt::format(
          "{}: expected a key that is a string, got {}", path.empty() ? "document" : path,
          entry.first.IsSequence() ? "a list"
          : entry.first.IsMap()    ? "a map"
                                   : "null")));
    }
    const std::string key = MapKey(entry.first);
    const std::string child_path = json_read::Field(path, key);
    if (out.contains(key)) {
      SourceMap at(source.file());
      at.Add(child_path, PositionOf(entry.first));
      return at.Locate(Status::Invalid(fmt::format("{}: written twice in one map", child_path)));
    }
    // A value that starts on a later line (a block map or list) is
    // placed where its key is written, which is what a reader of the
    // file looks for.
    if (entry.second.Mark().line != entry.first.Mark().line) {
      source.Add(child_path, PositionOf(entry.first));
    }
    BALLAST_RETURN_IF_ERROR(Convert(entry.second, child_path, out[key], source));
  }
  return Status::Ok();
}

Status Convert(const YAML::Node& node, const std::string& path, json& out, SourceMap& source) {
  source.Add(path, PositionOf(node));
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out = nullptr;
      return Status::Ok();
    case YAML::NodeType::Scalar:
      // yaml-cpp tags a quoted scalar "!" and a plain one "?"; an explicit
      // tag such as !!str is kept as written.
      if (node.Tag() == "?") {
        out = ResolvePlainScalar(node.Scalar());
      } else {
        out = node.Scalar();
      }
      return Status::Ok();
    case YAML::NodeType::Sequence:
      out = json::array();
      for (size_t i = 0; i < node.size(); ++i) {
        json element;
        BALLAST_RETURN_IF_ERROR(Convert(node[i], json_read::Element(path, i), element, source));
        out.push_back(std::move(element));
      }
      return Status::Ok();
    case YAML::NodeType::Map:
      return ConvertMap(node, path, out, source);
  }
  return Status::Ok();
}

}  // namespace

std::optional<Position> SourceMap::Find(std::string_view path) const {
  std::string probe(path);
  while (true) {
    auto it = positions_.find(probe);
    if (it != positions_.end()) return it->second;
    if (probe.empty()) return std::nullopt;
    const size_t cut = probe.find_last_of(".[");
    probe.resize(cut == std::string::npos ? 0 : cut);
  }
}

Status SourceMap::Locate(const Status& status) const {
  if (status.ok() || file_.empty()) return status;
  std::optional<Position> position;
  if (!status.path().empty()) {
    position = Find(status.path());
  } else {
    // An error that does not carry its path as data starts with it.
    const std::string& message = status.message();
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) position = Find(std::string_view(message).substr(0, colon));
  }
  if (!position) return status.WithPrefix(fmt::format("{}: ", file_));
  return status.WithPrefix(fmt::format("{}:{}:{}: ", file_, position->line, position->column));
}

json ResolvePlainScalar(std::string_view text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nullptr;
  }
  // YAML 1.1's booleans, which kubectl's reader (go-yaml v2) resolves.
  for (std::string_view word :
       {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"}) {
    if (text == word) return true;
  }
  for (std::string_view word :
       {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"}) {
    if (text == word) return false;
  }
  if (auto integer = ResolveInteger(text)) return *integer;
  if (auto real = ResolveFloat(text)) return *real;
  return std::string(text);
}

StatusOr<Document> ParseYaml(std::string_view text, std::string file_name,
                             const YamlLimits& limits) {
  Document document{json(), SourceMap(std::move(file_name))};
  const std::string& file = document.source.file();
  if (text.size() > limits.max_bytes) {
    return Status::Invalid(fmt::format("{}: {} bytes is over the limit of {} bytes", file,
                                       text.size(), limits.max_bytes));
  }
  // YAML is Unicode text; a tree of valid UTF-8 always dumps as JSON.
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return Status::Invalid(fmt::format("{}: byte {:#04x} is not UTF-8 (YAML is UTF-8)",
                                       AtOffset(file, text, bad),
                                       static_cast<unsigned char>(text[bad])));
  }
  if (const size_t bad = FindUnprintable(text); bad != std::string_view::npos) {
    return Status::Invalid(
        fmt::format("{}: byte {:#04x} is a control character, which YAML "
                    "does not allow",
                    AtOffset(file, text, bad), static_cast<unsigned char>(text[bad])));
  }
  const std::string owned(text);
  try {
    GuardDocument(owned, limits);
    const YAML::Node root = YAML::Load(owned);
    BALLAST_RETURN_IF_ERROR(Convert(root, "", document.tree, document.source));
  } catch (const Refused& refused) {
    return Status::Invalid(fmt::format("{}: {}", At(file, refused.mark), refused.message));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(fmt::format("{}: not valid YAML: {}", At(file, e.mark), e.msg));
  }
  return document;
}

}  // namespace ballast::config
