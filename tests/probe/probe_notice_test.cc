// What the probe tells about its Node (core/probe/node_notice.h): the
// Warning only for labels the Node lacks, one Normal note for labels other
// managers hold, and the reason an amd64 machine has no board label. The
// Nodes are the real-node test bed's: seed 000's labels given to the kubelet
// (--node-labels), the probe reading the amd64 machine under them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/probe/node_marks.h"
#include "core/probe/node_notice.h"
#include "worker/probe/node_labeller.h"
#include "worker/probe/report.h"

namespace ballast::probe {
namespace {

using nlohmann::json;

worker::ProbeReport MustProbe(const std::string& tree) {
  auto report = worker::Probe(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/" + tree);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : worker::ProbeReport{};
}

// A Node's metadata as the API server returns it after the probe's apply:
// the kubelet owns `kubelet`, the probe `probe`, both own `shared`.
json NodeAfterApply(const std::map<std::string, std::string>& kubelet,
                    const std::map<std::string, std::string>& probe,
                    const std::map<std::string, std::string>& shared = {}) {
  json labels = json::object();
  json kubelet_fields = json::object(), probe_fields = json::object();
  for (const auto& [key, value] : kubelet) {
    labels[key] = value;
    kubelet_fields["f:" + key] = json::object();
  }
  for (const auto& [key, value] : probe) {
    labels[key] = value;
    probe_fields["f:" + key] = json::object();
  }
  for (const auto& [key, value] : shared) {
    labels[key] = value;
    kubelet_fields["f:" + key] = json::object();
    probe_fields["f:" + key] = json::object();
  }
  return {{"metadata",
           {{"name", "pi4b-0"},
            {"labels", labels},
            {"managedFields",
             {{{"manager", "kubelet"},
               {"operation", "Update"},
               {"fieldsV1", {{"f:metadata", {{"f:labels", kubelet_fields}}}}}},
              {{"manager", "ballast-probe"},
               {"operation", "Apply"},
               {"fieldsV1", {{"f:metadata", {{"f:labels", probe_fields}}}}}}}}}}};
}

std::map<std::string, std::string> Labels(const json& node) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : node["metadata"]["labels"].items()) out[key] = value;
  return out;
}

NodeNotice Decide(const worker::ProbeReport& report, const json& node) {
  return DecideNodeNotice(worker::ProfileWarnings(report), report.labels, Labels(node),
                          LabelOwners(node), "ballast-probe", report.facts);
}

const std::map<std::string, std::string> kSeed000Pi4b = {{"ballast.io/board", "pi-4b"},
                                                         {"ballast.io/cpu-model", "cortex-a72"},
                                                         {"ballast.io/os-bits", "64"},
                                                         {"ballast.io/ram-mb", "2048"},
                                                         {"ballast.io/sd-gb", "8"},
                                                         {"ballast.io/power-w", "6.4"},
                                                         {"ballast.io/os-release", "2020-08-24"}};

// Regression (issue 32): "power-w ... label not set, the profile uses its
// default 6.4" on a Node whose kubelet set power-w=6.4.
TEST(ProbeNotice, NoWarningForALabelAnotherManagerSet) {
  const worker::ProbeReport pc = MustProbe("amd64");
  ASSERT_EQ(pc.labels.count("ballast.io/power-w"), 0u);
  ASSERT_FALSE(worker::ProfileWarnings(pc).empty());
  // The probe's labels the kubelet does not hold are the probe's.
  std::map<std::string, std::string> probes;
  for (const auto& [key, value] : pc.labels) {
    if (!kSeed000Pi4b.count(key)) probes[key] = value;
  }
  const NodeNotice notice = Decide(pc, NodeAfterApply(kSeed000Pi4b, probes));
  EXPECT_TRUE(notice.missing.empty()) << MissingMessage(notice);
  EXPECT_EQ(MissingMessage(notice), "");
}

TEST(ProbeNotice, LabelsOthersHoldAreOneNormalNote) {
  const worker::ProbeReport pc = MustProbe("amd64");
  std::map<std::string, std::string> probes;
  for (const auto& [key, value] : pc.labels) {
    if (!kSeed000Pi4b.count(key)) probes[key] = value;
  }
  const NodeNotice notice = Decide(pc, NodeAfterApply(kSeed000Pi4b, probes));
  ASSERT_EQ(notice.held.size(), kSeed000Pi4b.size());
  for (const HeldLabel& held : notice.held) {
    EXPECT_EQ(held.manager, "kubelet") << held.key;
    EXPECT_EQ(held.value, kSeed000Pi4b.at(held.key)) << held.key;
  }
  const std::string message = HeldMessage(notice);
  EXPECT_NE(message.find("7 labels of the probe's set another field manager holds"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ballast.io/power-w=6.4 (set by kubelet; the probe has no value)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ballast.io/cpu-model=cortex-a72 (set by kubelet; the probe reads "
                         "intel-core-i5-8259u-cpu-2.30ghz)"),
            std::string::npos)
      << message;
  // Every label once, and nothing cut.
  EXPECT_EQ(message.find("ballast.io/power-w", message.find("ballast.io/power-w") + 1),
            std::string::npos);
  EXPECT_EQ(message.find("more in"), std::string::npos);
  EXPECT_LE(message.size(), 1024u);
}

TEST(ProbeNotice, LabelsSharedWithAnotherManagerAreTheProbes) {
  const worker::ProbeReport pi4 = MustProbe("pi4b-2gb");
  // The kubelet set the same values the probe reads: both own them.
  const NodeNotice notice = Decide(pi4, NodeAfterApply({}, {}, pi4.labels));
  EXPECT_TRUE(notice.held.empty()) << HeldMessage(notice);
  EXPECT_EQ(HeldMessage(notice), "");
  EXPECT_EQ(BoardMessage(notice), "");
}

TEST(ProbeNotice, AMissingLabelTheProfileReadsIsAWarningWithItsDefault) {
  const worker::ProbeReport zero = MustProbe("pi-zero-2w");
  const NodeNotice notice = Decide(zero, NodeAfterApply({}, zero.labels));
  ASSERT_EQ(notice.missing.size(), 1u);
  EXPECT_EQ(notice.missing[0].fact, "ballast.io/power-w");
  EXPECT_NE(MissingMessage(notice).find("default 6.4"), std::string::npos);
  EXPECT_TRUE(notice.held.empty());
  // Set by hand since: no warning, one note.
  const NodeNotice labelled =
      Decide(zero, NodeAfterApply({{"ballast.io/power-w", "3"}}, zero.labels));
  EXPECT_TRUE(labelled.missing.empty());
  ASSERT_EQ(labelled.held.size(), 1u);
  EXPECT_EQ(HeldMessage(labelled),
            "1 label of the probe's set another field manager holds; the profile reads its "
            "value, and the probe leaves it (remove one to let the probe set it):\n"
            "ballast.io/power-w=3 (set by kubelet; the probe has no value)");
}

TEST(ProbeNotice, AFactWarningCountsOnlyWhileItsLabelIsMissing) {
  const Warning ram{"ram", "proc/meminfo", "proc/meminfo: missing; ram: unknown"};
  const Warning board{"board", "proc/device-tree/system/linux,revision", "...; board: unknown"};
  EXPECT_EQ(LabelsOfWarning(ram), std::vector<std::string>{"ballast.io/ram-mb"});
  EXPECT_EQ(LabelsOfWarning(board),
            (std::vector<std::string>{"ballast.io/board", "ballast.io/power-w"}));
  EXPECT_TRUE(LabelsOfWarning({"sd-card", "", ""}).empty());
  const Facts facts;
  const NodeNotice without =
      DecideNodeNotice({ram}, {}, {{"ballast.io/power-w", "6.4"}}, {}, "ballast-probe", facts);
  EXPECT_EQ(without.missing.size(), 1u);
  const NodeNotice with =
      DecideNodeNotice({ram}, {}, {{"ballast.io/ram-mb", "1024"}}, {}, "ballast-probe", facts);
  EXPECT_TRUE(with.missing.empty());
  // An owner the managedFields do not name.
  ASSERT_EQ(with.held.size(), 1u);
  EXPECT_NE(HeldMessage(with).find("ballast.io/ram-mb=1024 (set by another manager;"),
            std::string::npos);
}

// Regression (issue 32): an empty BOARD column on a machine that is not a
// board, with no reason.
TEST(ProbeNotice, AMachineThatIsNotABoardSaysWhy) {
  const worker::ProbeReport pc = MustProbe("amd64");
  ASSERT_EQ(pc.labels.count("ballast.io/board"), 0u);
  EXPECT_EQ(BoardNote(pc.facts),
            "not a Raspberry Pi board: no device tree model; CPU Intel(R) Core(TM) i5-8259U CPU @ "
            "2.30GHz, x86_64");
  const NodeNotice notice = Decide(pc, NodeAfterApply({}, pc.labels));
  EXPECT_EQ(BoardMessage(notice),
            BoardNote(pc.facts) +
                "; the probe sets no ballast.io/board label (annotation ballast.io/board-note)");
  // Boards, and device trees of other boards (their model is the label): none.
  for (const char* tree : {"pi3b-32bit", "pi4b-2gb", "pi5-16k", "pi-zero-2w"}) {
    EXPECT_EQ(BoardNote(MustProbe(tree).facts), "") << tree;
  }
  Facts other;
  other.board_model = "Pine64 RockPro64";
  EXPECT_EQ(BoardNote(other), "");
  // The note rides the probe's apply as an annotation, only when there is one.
  const json object = worker::NodeApplyObject("pc", pc.labels, BoardNote(pc.facts));
  EXPECT_EQ(object["metadata"]["annotations"]["ballast.io/board-note"], BoardNote(pc.facts));
  EXPECT_FALSE(worker::NodeApplyObject("pi", {}, "")["metadata"]["annotations"].contains(
      "ballast.io/board-note"));
}

TEST(ProbeNotice, LabelOwnersReadsManagedFields) {
  const json node = NodeAfterApply({{"a", "1"}}, {{"b", "2"}}, {{"c", "3"}});
  const auto owners = LabelOwners(node);
  EXPECT_EQ(owners.at("a"), std::vector<std::string>{"kubelet"});
  EXPECT_EQ(owners.at("b"), std::vector<std::string>{"ballast-probe"});
  EXPECT_EQ(owners.at("c"), (std::vector<std::string>{"kubelet", "ballast-probe"}));
  EXPECT_TRUE(LabelOwners(json::array()).empty());
  EXPECT_TRUE(LabelOwners({{"metadata", {{"managedFields", "x"}}}}).empty());
}

TEST(ProbeNotice, MessagesAreBounded) {
  NodeNotice notice;
  for (int i = 0; i < 40; ++i) {
    notice.missing.push_back({"ballast.io/x", "", std::string(100, 'a' + i % 26)});
  }
  const std::string message = MissingMessage(notice);
  EXPECT_LE(message.size(), 1024u);
  EXPECT_TRUE(message.ends_with("..."));
}

}  // namespace
}  // namespace ballast::probe
