// YamlNode: strict, typed reading of YAML documents with errors that name the
// file, the line and what was expected.
//
// Being replaced: every other reader now reads a file as a tree
// (ParseYaml, document.h) with the one reader of its kind. The speeds file of
// `ballast weights --fit` (fuzzy/fit.cc) is the last user; this goes when it
// moves. Every yaml-cpp exception is caught here and turned into a Status;
// errors have the shape
//   "speeds.yaml:12:5: nodes[2].speed: expected a number > 0, got '-1'".
//
// Thread-safety: a YamlNode is an immutable view; reading one from several
// threads is safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/config/document.h"

namespace ballast::config {

class YamlNode {
 public:
  // Parses `text` as one YAML document (the first, when there are several).
  // `file_name` is used in messages only. Returns Invalid
  //   "file: N bytes is over the limit of M bytes" before parsing a longer text;
  //   "file:line:col: not valid YAML: ..." for a syntax error;
  //   "file:line:col: nested deeper than N maps and lists" (aliases expanded);
  //   "file:line:col: more than N maps, lists and scalars";
  //   "file:line:col: alias 'a' ..." for an alias inside the node it names,
  //     or one that takes the aliases' expansion past the budget above.
  static StatusOr<YamlNode> Parse(std::string_view text, std::string file_name,
                                  const YamlLimits& limits = {});

  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }
  bool IsScalar() const { return node_.IsScalar(); }
  bool IsNull() const { return !node_.IsDefined() || node_.IsNull(); }

  // The dotted path of this node from the root, e.g. "nodes[2].speed".
  const std::string& path() const { return path_; }
  // 1-based line of this node in the file (0 when unknown).
  int line() const;
  // An Invalid status "file:line:col: path: expected <expected>, got '<value>'".
  Status Error(std::string_view expected) const;
  // An Invalid status "file:line:col: path: <message>" with no "got" part.
  Status Fail(std::string_view message) const;

  // The scalar's text as written; Invalid when this is not a scalar.
  StatusOr<std::string> AsString() const;
  // A finite number; Invalid otherwise.
  StatusOr<double> AsDouble() const;
  // A whole number in [min, max]; Invalid otherwise.
  StatusOr<int64_t> AsInt(int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  // A number > 0.
  StatusOr<double> AsPositive() const;
  StatusOr<bool> AsBool() const;

  // Requires a map whose keys are all in `allowed`; an unknown key is an
  // error naming it and listing the keys that are allowed.
  Status ExpectMap(std::initializer_list<std::string_view> allowed) const;
  // Requires a non-empty sequence (or any sequence when allow_empty).
  Status ExpectSequence(bool allow_empty = false) const;

  // The child under `key` of a map, or nullopt when absent or null.
  std::optional<YamlNode> Get(std::string_view key) const;
  // The child under `key`; Invalid "missing required key" when absent.
  StatusOr<YamlNode> Require(std::string_view key) const;
  // Elements of a sequence, in order.
  std::vector<YamlNode> Elements() const;
  // Key/value pairs of a map, in document order.
  std::vector<std::pair<std::string, YamlNode>> Entries() const;

 private:
  YamlNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
      : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}
  std::string Where() const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

// Reads an optional key with a default; the child must satisfy the reader.
// Example: ReadOr(node, "latency", 0.0, &YamlNode::AsDouble).
template <typename T, typename Reader>
StatusOr<T> ReadOr(const YamlNode& map, std::string_view key, T fallback, Reader reader) {
  auto child = map.Get(key);
  if (!child) return fallback;
  return ((*child).*reader)();
}

}  // namespace ballast::config
