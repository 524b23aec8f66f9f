// ParseProfile and ParseNodes: a profile or node-facts file read as a tree
// (config/document.h) by the one reader of its kind (profile_json.h), with
// the file and line put in front of the reader's error.
#include <string>
#include <vector>

#include "core/common/json_read.h"
#include "core/config/document.h"
#include "core/fuzzy/profile.h"
#include "core/fuzzy/profile_json.h"

namespace ballast::fuzzy {
namespace {

using nlohmann::json;
namespace jr = json_read;

// "a.yaml" -> "a", "dir/b.c.yml" -> "b.c".
std::string BaseName(const std::string& file_name) {
  const size_t slash = file_name.find_last_of('/');
  std::string base = slash == std::string::npos ? file_name : file_name.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot != std::string::npos && dot > 0) base.resize(dot);
  return base;
}

// The profile of a file's tree: a WeightProfile, or a bare spec named `name`.
StatusOr<Profile> ReadProfile(const config::Document& document, std::string name) {
  const json& root = document.tree;
  if (!root.is_object()) {
    return jr::Expected("document",
                        "a WeightProfile (apiVersion, kind, metadata, spec) or a spec map", root);
  }
  if (!jr::Find(root, "apiVersion") && !jr::Find(root, "kind")) {
    return ProfileSpecFromJson(root, std::move(name), "", &document.source);
  }
  return ProfileFromJson(root, &document.source);
}

}  // namespace

StatusOr<Profile> ParseProfile(std::string_view yaml_text, std::string file_name) {
  std::string base_name = BaseName(file_name);
  BALLAST_ASSIGN_OR_RETURN(config::Document document,
                           config::ParseYaml(yaml_text, std::move(file_name)));
  auto profile = ReadProfile(document, std::move(base_name));
  if (!profile.ok()) return document.source.Locate(profile.status());
  return profile;
}

StatusOr<std::vector<NodeFacts>> ParseNodes(std::string_view yaml_text, std::string file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document,
                           config::ParseYaml(yaml_text, std::move(file_name)));
  auto nodes = NodeFactsFromJson(document.tree);
  if (!nodes.ok()) return document.source.Locate(nodes.status());
  return nodes;
}

}  // namespace ballast::fuzzy
