// What the node probe tells about its Node after labelling it (docs/probe.md,
// "Labelling the Node"): a pure decision over what the probe read and what the Node
// carries once the probe's apply is done.
//
//   a label the profile reads is on no     -> Warning ProbeFactUnknown: the
//     manager's hands (neither the probe      warnings about it (why the fact is
//     nor anyone else set it)                 unknown, the default the profile uses)
//   a label of the probe's set is held by  -> Normal LabelsSetByOthers, one Event
//     another field manager (the kubelet's    for all of them: key=value, who holds
//     --node-labels, kubectl label)           it, and the probe's own reading
//   the machine is not a board (no device  -> Normal NotARaspberryPi, and the
//     tree model)                             annotation ballast.io/board-note, so
//                                             an empty BOARD column has a reason
//
// A warning about a label the Node carries (set by anyone) is never in the
// Warning Event: the profile reads the Node's value, not its default. Warnings
// about facts whose labels the probe still set (a fallback source) stay in the
// probe's log and its JSON only.
//
// Thread-safety: plain values and pure functions; safe from any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe/facts.h"

namespace ballast::probe {

// The annotation that says why the probe wrote no ballast.io/board label.
inline constexpr std::string_view kBoardNoteAnnotation = "ballast.io/board-note";

// A label of the probe's set (ProbeLabelKeys) that another field manager holds.
struct HeldLabel {
  std::string key;
  std::string value;        // on the Node
  std::string manager;      // the field manager that owns it ("" when unknown)
  std::string probe_value;  // what the probe read ("" when it has no value)
};

struct NodeNotice {
  std::vector<Warning> missing;  // for the Warning Event ProbeFactUnknown
  std::vector<HeldLabel> held;   // for the Normal Event LabelsSetByOthers, by key
  std::string board_note;        // for the Normal Event NotARaspberryPi; "" for a board
};

// Why the probe writes no ballast.io/board for `facts`: "not a Raspberry Pi
// board: no device tree model; CPU <model>, <machine>" when the machine has
// neither a decoded revision nor a device tree model, else "" (the label is
// written). Valid UTF-8, at most 256 bytes.
std::string BoardNote(const Facts& facts);

// The labels a warning of the probe's report is about: a label warning names
// its label (fact "ballast.io/..."); a fact warning the labels derived from
// that fact ("ram" -> ballast.io/ram-mb, "board" -> ballast.io/board and
// ballast.io/power-w, ...). Empty for facts no label reads.
std::vector<std::string> LabelsOfWarning(const Warning& warning);

// The notice for a Node after an apply. `warnings` are the profile's
// (ProfileWarnings of the report); `probe_labels` what the probe read;
// `node_labels` the Node's labels after the apply and `owners` the field
// managers of each (LabelOwners); `field_manager` the probe's own; `facts`
// for the board note.
NodeNotice DecideNodeNotice(const std::vector<Warning>& warnings,
                            const std::map<std::string, std::string>& probe_labels,
                            const std::map<std::string, std::string>& node_labels,
                            const std::map<std::string, std::vector<std::string>>& owners,
                            std::string_view field_manager, const Facts& facts);

// The messages of the three Events; "" when there is nothing to say. Each is
// valid UTF-8 and at most 1024 bytes (cut between characters, "...").
std::string MissingMessage(const NodeNotice& notice);
std::string HeldMessage(const NodeNotice& notice);
std::string BoardMessage(const NodeNotice& notice);

}  // namespace ballast::probe
