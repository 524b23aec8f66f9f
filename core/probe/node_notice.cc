#include "core/probe/node_notice.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/common/utf8.h"
#include "core/probe/labels.h"

namespace ballast::probe {
namespace {

constexpr size_t kMaxMessage = 1024;

std::string Key(std::string_view name) { return std::string(kLabelPrefix) + std::string(name); }

// Cut to kMaxMessage bytes between characters, valid UTF-8.
std::string Bounded(std::string text) {
  if (text.size() > kMaxMessage) text = std::string(Utf8Prefix(text, kMaxMessage - 3)) + "...";
  return ToValidUtf8(text);
}

bool Owns(const std::map<std::string, std::vector<std::string>>& owners, const std::string& key,
          std::string_view manager) {
  const auto it = owners.find(key);
  if (it == owners.end()) return false;
  return std::find(it->second.begin(), it->second.end(), manager) != it->second.end();
}

}  // namespace

std::string BoardNote(const Facts& facts) {
  if (facts.board || !facts.board_model.empty()) return "";
  std::string cpu = facts.cpu_model.empty() ? "unknown" : facts.cpu_model;
  if (!facts.kernel_machine.empty()) cpu += ", " + facts.kernel_machine;
  const std::string note = "not a Raspberry Pi board: no device tree model; CPU " + cpu;
  return ToValidUtf8(Utf8Prefix(note, 256));
}

std::vector<std::string> LabelsOfWarning(const Warning& warning) {
  if (warning.fact.starts_with(kLabelPrefix)) return {warning.fact};
  static const std::map<std::string, std::vector<std::string>> kLabels = {
      {"cpu-model", {Key("cpu-model")}},
      {"os-bits", {Key("os-bits")}},
      {"kernel-bits", {Key("kernel-bits"), Key("os-bits")}},
      {"ram", {Key("ram-mb")}},
      {"sd-gb", {Key("sd-gb")}},
      {"os-release", {Key("os-release")}},
      {"board", {Key("board"), Key("power-w")}},
  };
  const auto it = kLabels.find(warning.fact);
  return it == kLabels.end() ? std::vector<std::string>{} : it->second;
}

NodeNotice DecideNodeNotice(const std::vector<Warning>& warnings,
                            const std::map<std::string, std::string>& probe_labels,
                            const std::map<std::string, std::string>& node_labels,
                            const std::map<std::string, std::vector<std::string>>& owners,
                            std::string_view field_manager, const Facts& facts) {
  NodeNotice notice;
  for (const Warning& warning : warnings) {
    const std::vector<std::string> labels = LabelsOfWarning(warning);
    // Only a warning about a label that is not on the Node matters to the
    // profile; the probe's own label set from a fallback does not either.
    const bool missing = std::any_of(labels.begin(), labels.end(), [&](const std::string& key) {
      return node_labels.count(key) == 0;
    });
    if (missing) notice.missing.push_back(warning);
  }
  for (const std::string& key : ProbeLabelKeys()) {
    const auto on_node = node_labels.find(key);
    if (on_node == node_labels.end() || Owns(owners, key, field_manager)) continue;
    HeldLabel held{key, on_node->second, "", ""};
    if (const auto it = owners.find(key); it != owners.end() && !it->second.empty()) {
      for (const std::string& manager : it->second) {
        held.manager += (held.manager.empty() ? "" : ", ") + manager;
      }
    }
    if (const auto it = probe_labels.find(key); it != probe_labels.end()) {
      held.probe_value = it->second;
    }
    notice.held.push_back(std::move(held));
  }
  notice.board_note = BoardNote(facts);
  return notice;
}

std::string MissingMessage(const NodeNotice& notice) {
  std::string text;
  for (const Warning& warning : notice.missing) {
    text += (text.empty() ? "" : "\n") + warning.message;
  }
  return Bounded(std::move(text));
}

std::string HeldMessage(const NodeNotice& notice) {
  if (notice.held.empty()) return "";
  std::string text = fmt::format(
      "{} label{} of the probe's set another field manager holds; the profile reads "
      "{} value{}, and the probe leaves {} (remove one to let the probe set it):",
      notice.held.size(), notice.held.size() == 1 ? "" : "s",
      notice.held.size() == 1 ? "its" : "their", notice.held.size() == 1 ? "" : "s",
      notice.held.size() == 1 ? "it" : "them");
  for (const HeldLabel& held : notice.held) {
    text += fmt::format("\n{}={} (set by {}", held.key, held.value,
                        held.manager.empty() ? "another manager" : held.manager);
    if (held.probe_value.empty()) {
      text += "; the probe has no value)";
    } else if (held.probe_value == held.value) {
      text += ")";
    } else {
      text += fmt::format("; the probe reads {})", held.probe_value);
    }
  }
  return Bounded(std::move(text));
}

std::string BoardMessage(const NodeNotice& notice) {
  if (notice.board_note.empty()) return "";
  return Bounded(notice.board_note + "; the probe sets no ballast.io/board label (annotation " +
                 std::string(kBoardNoteAnnotation) + ")");
}

}  // namespace ballast::probe
