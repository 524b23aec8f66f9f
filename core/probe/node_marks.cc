// ProbeLabelsOfNodes: the Nodes of a YAML text read as a tree
// (config/document.h); shapes other than a Node's are skipped, not trusted.
#include "core/probe/node_marks.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "core/common/json_read.h"
#include "core/config/document.h"

namespace ballast::probe {
namespace {

using nlohmann::json;
namespace jr = json_read;

// The labels of `metadata`'s managedFields entries of the probe's manager.
void ManagedLabels(const json& metadata, std::set<std::string>& out) {
  const json* fields = jr::Find(metadata, "managedFields");
  if (!fields || !fields->is_array()) return;
  for (const json& entry : *fields) {
    if (!entry.is_object() || jr::TextAt(entry, "manager") != kProbeFieldManager) continue;
    const json* v1 = jr::ObjectAt(entry, "fieldsV1");
    const json* meta = v1 ? jr::ObjectAt(*v1, "f:metadata") : nullptr;
    const json* labels = meta ? jr::ObjectAt(*meta, "f:labels") : nullptr;
    if (!labels) continue;
    for (const auto& [key, value] : labels->items()) {
      if (key.starts_with("f:")) out.insert(key.substr(2));
    }
  }
}

// The labels annotated as the probe's, when the Node carries them.
std::set<std::string> NodeMarks(const json& metadata) {
  std::set<std::string> marks;
  if (const json* annotations = jr::ObjectAt(metadata, "annotations")) {
    const std::string listed = jr::TextAt(*annotations, kProbeLabelsAnnotation);
    size_t start = 0;
    while (start < listed.size()) {
      const size_t comma = listed.find(',', start);
      const std::string key = listed.substr(start, comma - start);
      if (!key.empty()) marks.insert(key);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  ManagedLabels(metadata, marks);
  const json* labels = jr::ObjectAt(metadata, "labels");
  std::set<std::string> present;
  for (const std::string& key : marks) {
    if (labels && jr::Find(*labels, key)) present.insert(key);
  }
  return present;
}

}  // namespace

std::map<std::string, std::vector<std::string>> LabelOwners(const json& node) {
  std::map<std::string, std::vector<std::string>> owners;
  const json* metadata = node.is_object() ? jr::ObjectAt(node, "metadata") : nullptr;
  const json* fields = metadata ? jr::Find(*metadata, "managedFields") : nullptr;
  if (!fields || !fields->is_array()) return owners;
  for (const json& entry : *fields) {
    if (!entry.is_object()) continue;
    const std::string manager = jr::TextAt(entry, "manager");
    const json* v1 = jr::ObjectAt(entry, "fieldsV1");
    const json* meta = v1 ? jr::ObjectAt(*v1, "f:metadata") : nullptr;
    const json* labels = meta ? jr::ObjectAt(*meta, "f:labels") : nullptr;
    if (!labels) continue;
    for (const auto& [key, value] : labels->items()) {
      if (key.starts_with("f:")) owners[key.substr(2)].push_back(manager);
    }
  }
  return owners;
}

StatusOr<std::map<std::string, std::set<std::string>>> ProbeLabelsOfNodes(
    std::string_view yaml_text, std::string file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document,
                           config::ParseYaml(yaml_text, std::move(file_name)));
  const json& root = document.tree;
  std::map<std::string, std::set<std::string>> out;
  if (!root.is_object()) return out;
  const std::string kind = jr::TextAt(root, "kind");
  std::vector<const json*> items;
  if (kind == "Node") {
    items.push_back(&root);
  } else if (kind == "NodeList" || kind == "List") {
    const json* list = jr::Find(root, "items");
    if (list && list->is_array()) {
      for (const json& item : *list) items.push_back(&item);
    }
  }
  for (const json* item : items) {
    const json* metadata = jr::ObjectAt(*item, "metadata");
    if (!metadata) continue;
    const std::string name = jr::TextAt(*metadata, "name");
    std::set<std::string> marks = NodeMarks(*metadata);
    if (!name.empty() && !marks.empty()) out[name] = std::move(marks);
  }
  return out;
}

}  // namespace ballast::probe
