#include "core/probe/node_marks.h"

#include <vector>

#include "core/config/yaml_node.h"

namespace ballast::probe {
namespace {

using config::YamlNode;

std::string Scalar(const std::optional<YamlNode>& node) {
  if (!node || !node->IsScalar()) return "";
  auto text = node->AsString();
  return text.ok() ? *text : "";
}

// The labels of `metadata`'s managedFields entries of the probe's manager.
void ManagedLabels(const YamlNode& metadata, std::set<std::string>& out) {
  auto fields = metadata.Get("managedFields");
  if (!fields || !fields->IsSequence()) return;
  for (const YamlNode& entry : fields->Elements()) {
    if (!entry.IsMap() || Scalar(entry.Get("manager")) != kProbeFieldManager) continue;
    auto v1 = entry.Get("fieldsV1");
    auto meta = v1 && v1->IsMap() ? v1->Get("f:metadata") : std::nullopt;
    auto labels = meta && meta->IsMap() ? meta->Get("f:labels") : std::nullopt;
    if (!labels || !labels->IsMap()) continue;
    for (const auto& [key, value] : labels->Entries()) {
      if (key.starts_with("f:")) out.insert(key.substr(2));
    }
  }
}

// The labels annotated as the probe's, when the Node carries them.
std::set<std::string> NodeMarks(const YamlNode& metadata) {
  std::set<std::string> marks;
  auto annotations = metadata.Get("annotations");
  if (annotations && annotations->IsMap()) {
    const std::string listed = Scalar(annotations->Get(kProbeLabelsAnnotation));
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
  auto labels = metadata.Get("labels");
  std::set<std::string> present;
  for (const std::string& key : marks) {
    if (labels && labels->IsMap() && labels->Get(key)) present.insert(key);
  }
  return present;
}

}  // namespace

StatusOr<std::map<std::string, std::set<std::string>>> ProbeLabelsOfNodes(
    std::string_view yaml_text, std::string file_name) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml_text, std::move(file_name)));
  std::map<std::string, std::set<std::string>> out;
  if (!root.IsMap()) return out;
  const std::string kind = Scalar(root.Get("kind"));
  std::vector<YamlNode> items;
  if (kind == "Node") {
    items.push_back(root);
  } else if (kind == "NodeList" || kind == "List") {
    auto list = root.Get("items");
    if (list && list->IsSequence()) items = list->Elements();
  }
  for (const YamlNode& item : items) {
    auto metadata = item.IsMap() ? item.Get("metadata") : std::nullopt;
    if (!metadata || !metadata->IsMap()) continue;
    const std::string name = Scalar(metadata->Get("name"));
    std::set<std::string> marks = NodeMarks(*metadata);
    if (!name.empty() && !marks.empty()) out[name] = std::move(marks);
  }
  return out;
}

}  // namespace ballast::probe
