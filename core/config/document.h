// Document: a file a user wrote, read into the same JSON tree the Kubernetes
// API server hands the operator, with a map from each value's path to where
// it was written. Every kind of spec (job, workload, policy, profile,
// cluster, scenario) then has one reader, over nlohmann::json with
// common/json_read.h, whether it came from a file or from the API server;
// SourceMap::Locate puts the file and line in front of the reader's error:
//
//   the reader says   "workload.primes.limit: expected an integer >= 2, got 1"
//   the user sees     "job.yaml:4:12: workload.primes.limit: expected an integer >= 2, got 1"
//
// YAML scalars become JSON values as kubectl's reader (sigs.k8s.io/yaml,
// go-yaml v2: YAML 1.1) resolves them, so a file means here what it means
// to `kubectl apply`: a plain `8` is a number (`017` octal 15, `0x1f` 31),
// `true`, `yes`, `on`, `y` and their negatives (in lower, Capital or UPPER
// case) are booleans, `~`, `null` or nothing is null, anything quoted a
// string. A map's key is a string: one that YAML 1.1 reads as a boolean,
// unquoted, is "true" or "false", as kubectl sends it (`n: sum` is
// {"false": "sum"}); other keys are as written (kubectl would also make an
// unquoted `017:` "15": not followed here).
//
// This file's .cc is the one adapter between Ballast and yaml-cpp: every
// yaml-cpp exception is caught there and becomes a Status.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/common/status.h"

namespace ballast::config {

// Bounds on a document from outside, checked before and while parsing so that
// neither yaml-cpp nor a reader walking the result can be made to run out of
// stack, memory or time. yaml-cpp keeps an alias as a second reference to the
// anchored node, so `*a` costs nothing to load, but the tree made from it
// expands it: nine levels of ten aliases ("billion laughs") would be a
// billion values, and an alias inside the node it names (`&a [*a]`) a cycle.
struct YamlLimits {
  // 16 MiB: `kubectl get nodes -o yaml` of ~2,000 nodes. yaml-cpp spends
  // ~460 bytes on each map, list and scalar, so the written nodes are bounded
  // too: a million of them are ~0.5 GB, and 16 MiB of "[a,a,...]" would be 8
  // million (~4 GB) without that bound.
  size_t max_bytes = size_t{16} << 20;
  size_t max_nodes = 1'000'000;  // maps, lists and scalars as written
  int max_depth = 64;            // maps and lists nested in each other, aliases expanded
  // Aliases may add at most as many nodes plus scalar bytes as the text has
  // bytes, or as this floor when the text is smaller.
  size_t min_alias_budget = size_t{1} << 20;
};

// Where a value was written: 1-based line and column.
struct Position {
  int line = 0;
  int column = 0;
};

// The file a tree came from and the position of every value in it, by path
// ("nodes[2].speed", "spec.workload.primes.limit"; json_read::Field and
// Element build the same strings). Empty for a tree from the API server.
class SourceMap {
 public:
  SourceMap() = default;
  explicit SourceMap(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  void Add(std::string path, Position position) { positions_.emplace(std::move(path), position); }
  // The position of `path`, or of its nearest ancestor that was written;
  // nullopt when none was.
  std::optional<Position> Find(std::string_view path) const;
  // `status` located: "file:line:col: " of its field's path (or of its
  // nearest written ancestor) is put in front (Status::WithPrefix, the path
  // and detail kept); "file: " when the path was not written. The path is
  // the status's path() (Status::InvalidAt, as common/json_read.h makes
  // them), or else the start of its message up to ": " ("spec.items:
  // expected ...", as readers wrote them before). Ok, and any status when
  // there is no file, are returned as they are.
  Status Locate(const Status& status) const;

 private:
  std::string file_;
  std::unordered_map<std::string, Position> positions_;
};

struct Document {
  nlohmann::json tree;
  SourceMap source;
};

// The first YAML document of `text` as a tree, `file_name` naming it in
// messages. Returns Invalid
//   "file: N bytes is over the limit of M bytes" before parsing a longer text;
//   "file:line:col: not valid YAML: ..." for a syntax error;
//   "file:line:col: nested deeper than N maps and lists" (aliases expanded);
//   "file:line:col: more than N maps, lists and scalars";
//   "file:line:col: alias 'a' ..." for an alias inside the node it names,
//     or one that takes the aliases' expansion past the budget above;
//   "file:line:col: path: ..." for a key that is not a scalar, or a key
//     written twice in one map.
// An empty text is a null tree.
StatusOr<Document> ParseYaml(std::string_view text, std::string file_name,
                             const YamlLimits& limits = {});

// A plain (unquoted) YAML scalar as kubectl resolves it: null, a boolean
// (YAML 1.1's words), an integer (decimal, 0x hex, 0o or leading-0 octal;
// one past int64 is kept unsigned, beyond that a float), a float (with .inf
// and .nan), or else the text as a string. Used for values typed on a command line too
// (`--policy adaptive:hedge=false`).
nlohmann::json ResolvePlainScalar(std::string_view text);

}  // namespace ballast::config
