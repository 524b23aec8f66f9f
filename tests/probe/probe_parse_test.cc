// The probe's parsers and labelling (core/probe): revision codes as Raspberry
// Pi documents them, cpuinfo of ARM and x86, os-release quoting, ELF headers,
// get_throttled bits, label values; each with the bad input real files have.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "core/fuzzy/profile.h"
#include "core/probe/facts.h"
#include "core/probe/labels.h"
#include "core/probe/node_marks.h"
#include "core/probe/parse.h"

namespace ballast::probe {
namespace {

struct RevisionCase {
  uint32_t code;
  const char* model;
  const char* soc;
  uint64_t ram_mb;
  const char* maker;
};

TEST(ProbeParse, DecodesPublishedRevisionCodes) {
  const RevisionCase cases[] = {
      {0xa02082, "3B", "BCM2837", 1024, "Sony UK"},
      {0xa22082, "3B", "BCM2837", 1024, "Embest"},
      {0xa020d3, "3B+", "BCM2837", 1024, "Sony UK"},
      {0xb03111, "4B", "BCM2711", 2048, "Sony UK"},
      {0xc03112, "4B", "BCM2711", 4096, "Sony UK"},
      {0xd03114, "4B", "BCM2711", 8192, "Sony UK"},
      {0x902120, "Zero 2 W", "BCM2837", 512, "Sony UK"},
      {0xc04170, "5", "BCM2712", 4096, "Sony UK"},
      {0xd04170, "5", "BCM2712", 8192, "Sony UK"},
      {0x9000c1, "Zero W", "BCM2835", 512, "Sony UK"},
      {0x000e, "B", "BCM2835", 512, "Sony UK"},
      {0x1000002, "B", "BCM2835", 256, "Egoman"},  // old style, warranty bit set
  };
  for (const RevisionCase& c : cases) {
    SCOPED_TRACE(c.code);
    auto board = DecodeRevision(c.code);
    ASSERT_TRUE(board.ok()) << board.status().ToString();
    EXPECT_EQ(board->model, c.model);
    EXPECT_EQ(board->soc, c.soc);
    EXPECT_EQ(board->ram_mb, c.ram_mb);
    EXPECT_EQ(board->maker, c.maker);
  }
  EXPECT_EQ(DecodeRevision(0xd03114)->revision, 4u);
}

TEST(ProbeParse, RefusesRevisionCodesNobodyPublished) {
  for (uint32_t code : {0x0u, 0x0016u, 0xbeefu, 0x800ff0u /*type 0xff*/, 0x807000u /*soc 7*/,
                        0xf03111u /*memory 7*/, 0xa93111u /*maker 9*/, 0x800070u /*type 7*/}) {
    EXPECT_FALSE(DecodeRevision(code).ok()) << std::hex << code;
  }
}

TEST(ProbeParse, RevisionTextAndCells) {
  EXPECT_EQ(*ParseRevisionText(" c03111\n"), 0xc03111u);
  EXPECT_EQ(*ParseRevisionText("0x00a02082"), 0xa02082u);
  EXPECT_EQ(*ParseRevisionText("000e"), 0x000eu);
  for (const char* bad : {"", "c03", "0x", "c0311g", "123456789", "-1234"}) {
    EXPECT_FALSE(ParseRevisionText(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseBigEndianCell(std::string("\x00\xc0\x31\x11", 4)), 0xc03111u);
  EXPECT_FALSE(ParseBigEndianCell(std::string("\xc0\x31", 2)).ok());
  EXPECT_FALSE(ParseBigEndianCell(std::string(5, 'x')).ok());
  EXPECT_EQ(*ParseDeviceTreeString(std::string("Raspberry Pi 4 Model B Rev 1.1\0", 31)),
            "Raspberry Pi 4 Model B Rev 1.1");
  EXPECT_FALSE(ParseDeviceTreeString(std::string("\0", 1)).ok());
  EXPECT_FALSE(ParseDeviceTreeString("bad\x01model").ok());
}

TEST(ProbeParse, CpuInfoOfArmAndX86) {
  auto arm = ParseCpuInfo(
      "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\n"
      "processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\n"
      "Hardware\t: BCM2835\nRevision\t: b03111\n");
  ASSERT_TRUE(arm.ok());
  EXPECT_EQ(arm->model, "cortex-a72");
  EXPECT_EQ(arm->processors, 2u);
  EXPECT_EQ(arm->revision, "b03111");
  auto other = ParseCpuInfo("processor : 0\nCPU implementer : 0x51\nCPU part : 0x801\n");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->model, "arm-0x51-0x801");
  auto x86 = ParseCpuInfo("processor\t: 0\nmodel name\t: AMD Ryzen 7 5800U\ncpu MHz\t\t: 1900.5\n");
  ASSERT_TRUE(x86.ok());
  EXPECT_EQ(x86->model, "AMD Ryzen 7 5800U");
  EXPECT_DOUBLE_EQ(x86->mhz, 1900.5);
  EXPECT_FALSE(ParseCpuInfo("").ok());
  EXPECT_FALSE(ParseCpuInfo("processor : 0\nflags : fpu\n").ok());
}

TEST(ProbeParse, NumbersListsAndMeminfo) {
  EXPECT_EQ(*ParseMemTotalKb("MemFree: 1 kB\nMemTotal:  948304 kB\n"), 948304u);
  EXPECT_FALSE(ParseMemTotalKb("MemTotal: 948304\n").ok());
  EXPECT_FALSE(ParseMemTotalKb("MemTotal: 0 kB\n").ok());
  EXPECT_FALSE(ParseMemTotalKb("MemTotal: 99999999999999999999999 kB\n").ok());
  // Regression (issue 61): 2^54 + 1 kB parsed, and the memory gauge, in
  // bytes, wrapped to 1024. Past 1 PiB a MemTotal is garbled.
  EXPECT_EQ(*ParseMemTotalKb("MemTotal: 1099511627776 kB\n"), kMaxMemTotalKb);
  EXPECT_EQ(ParseMemTotalKb("MemTotal: 18014398509481985 kB\n").status().message(),
            "MemTotal: expected a number of kB in [1, 1099511627776] (1 PiB), got "
            "'18014398509481985 kB'");
  EXPECT_EQ(*ParseCpuListCount("0-3\n"), 4u);
  EXPECT_EQ(*ParseCpuListCount("0,2-5"), 5u);
  for (const char* bad : {"", "3-0", "0-", "a", "0-70000", "0,,1"}) {
    EXPECT_FALSE(ParseCpuListCount(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseUnsigned(" 1500000\n"), 1500000u);
  EXPECT_FALSE(ParseUnsigned("-5").ok());
  EXPECT_FALSE(ParseUnsigned("1.5").ok());
}

TEST(ProbeParse, OsReleaseQuotingAndBadLines) {
  auto values = ParseOsRelease(
      "# comment\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"
      "VERSION_ID='12'\nNAME=\"say \\\"hi\\\"\"\n\n");
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(values->at("PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(values->at("ID"), "debian");
  EXPECT_EQ(values->at("VERSION_ID"), "12");
  EXPECT_EQ(values->at("NAME"), "say \"hi\"");
  auto bad = ParseOsRelease("ID=debian\nlowercase=1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(ParseOsRelease("ID=\"unterminated\n").ok());
  EXPECT_FALSE(ParseOsRelease("ID=two words\n").ok());
  EXPECT_EQ(*ParseRpiIssueDate("Raspberry Pi reference 2021-01-11\nGenerated ...\n"), "2021-01-11");
  EXPECT_FALSE(ParseRpiIssueDate("Raspberry Pi reference 2021-13-11").ok());
  EXPECT_FALSE(ParseRpiIssueDate("Raspberry Pi reference 2021-01").ok());
  EXPECT_FALSE(ParseRpiIssueDate("Ubuntu 22.04").ok());
}

TEST(ProbeParse, ElfHeadersKernelMachinesAndPages) {
  std::string elf64(
      "\x7f"
      "ELF\x02\x01\x01",
      7);
  elf64.resize(18, '\0');
  elf64 += std::string("\xb7\x00", 2);  // EM_AARCH64, little-endian
  auto header = ParseElfHeader(elf64);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->bits, 64);
  EXPECT_EQ(header->machine, "arm64");
  EXPECT_FALSE(ParseElfHeader(elf64.substr(0, 19)).ok());  // truncated
  EXPECT_FALSE(ParseElfHeader("#!/bin/sh\nexec /lib/systemd/systemd\n").ok());
  std::string bad_class = elf64;
  bad_class[4] = 3;
  EXPECT_FALSE(ParseElfHeader(bad_class).ok());
  EXPECT_EQ(*KernelBits("aarch64\n"), 64);
  EXPECT_EQ(*KernelBits("armv7l"), 32);
  EXPECT_FALSE(KernelBits("pdp11").ok());
  EXPECT_EQ(*ParseSmapsPageSize("Size: 4 kB\nKernelPageSize:       16 kB\n"), 16384u);
  EXPECT_FALSE(ParseSmapsPageSize("KernelPageSize: 12 kB\n").ok());
  EXPECT_FALSE(ParseSmapsPageSize("Size: 4 kB\n").ok());
}

TEST(ProbeParse, ThrottledBitsAndSdCards) {
  auto bits = ParseThrottled("0x50005\n");
  ASSERT_TRUE(bits.ok());
  EXPECT_TRUE(bits->under_voltage_now());
  EXPECT_TRUE(bits->throttled_now());
  EXPECT_TRUE(bits->under_voltage_since_boot());
  EXPECT_TRUE(bits->throttled_since_boot());
  EXPECT_FALSE(bits->freq_capped_since_boot());
  EXPECT_EQ(ParseThrottled("0")->bits, 0u);
  for (const char* bad : {"", "0x", "zz", "123456789"}) EXPECT_FALSE(ParseThrottled(bad).ok());
  EXPECT_EQ(*ParseSdDate("08/2020\n"), "2020-08");
  EXPECT_FALSE(ParseSdDate("13/2020").ok());
  EXPECT_FALSE(ParseSdDate("8/2020").ok());
  EXPECT_EQ(*ParseHexId("0x000003"), 3u);
  EXPECT_EQ(SdManufacturerName(3), "SanDisk");
  EXPECT_EQ(SdManufacturerName(0x99), "");
}

TEST(ProbeLabelValue, MadeValidAndCut) {
  bool cut = true;
  EXPECT_EQ(ToLabelValue("Intel(R) Core(TM) i5-8259U CPU @ 2.30GHz", &cut),
            "intel-core-i5-8259u-cpu-2.30ghz");
  EXPECT_FALSE(cut);
  EXPECT_EQ(ToLabelValue("  --Pine64 RockPro64--  ", &cut), "pine64-rockpro64");
  EXPECT_EQ(ToLabelValue("!!!", &cut), "");
  const std::string value = ToLabelValue(std::string(62, 'a') + "-b", &cut);
  EXPECT_TRUE(cut);
  EXPECT_EQ(value, std::string(62, 'a'));  // cut at 63, then the trailing '-' dropped
  EXPECT_TRUE(IsValidLabelValue(value));
  EXPECT_FALSE(IsValidLabelValue("-a"));
  EXPECT_FALSE(IsValidLabelValue(std::string(64, 'a')));
  EXPECT_FALSE(IsValidLabelValue("a b"));
}

TEST(ProbeLabels, UnknownFactsLeaveProfileLabelsOutNamingTheDefault) {
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok());
  const LabelResult result = ProbeLabels(Facts{}, *profile);
  EXPECT_TRUE(result.labels.empty());
  // One warning per profile label the probe writes: cpu-model, os-bits,
  // ram-mb, sd-gb, power-w, os-release; each names the profile's default.
  ASSERT_EQ(result.warnings.size(), 6u);
  EXPECT_EQ(result.warnings[0].message,
            "label ballast.io/cpu-model: CPU model unknown; label not set, the profile "
            "raspberry-pi uses its default 5 (norm)");
}

TEST(ProbeFacts, EmptySnapshotWarnsForEveryCommonFileAndNeverFails) {
  const ProbeResult result = DeriveFacts(Snapshot{});
  std::set<std::string> files;
  for (const Warning& warning : result.warnings) files.insert(warning.file);
  for (const char* file : {"proc/cpuinfo", "proc/meminfo", "proc/sys/kernel/arch", "usr/bin/env",
                           "proc/self/smaps", "usr/lib/os-release"}) {
    EXPECT_EQ(files.count(file), 1u) << file;
  }
  EXPECT_EQ(result.facts.cpu_cores, 0u);
}

TEST(ProbeFacts, LiveValuesFillInWhatTheTreeLacks) {
  Snapshot snapshot;
  snapshot.live_machine = "aarch64";
  snapshot.live_page_size = 16384;
  const ProbeResult result = DeriveFacts(snapshot);
  EXPECT_EQ(result.facts.kernel_bits, 64);
  EXPECT_EQ(result.facts.page_size, 16384u);
}

}  // namespace
}  // namespace ballast::probe

namespace ballast::probe {
namespace {

TEST(ProbeMarks, AnnotationAndManagedFieldsNameTheProbesLabels) {
  std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/testdata/nodes-probed.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  auto marks = ProbeLabelsOfNodes(text, "nodes-probed.yaml");
  ASSERT_TRUE(marks.ok()) << marks.status().ToString();
  // ballast.io/gone is listed but not on the node: not a mark.
  const std::map<std::string, std::set<std::string>> expected = {
      {"pi4b-a", {"ballast.io/cpu-model", "ballast.io/os-bits", "ballast.io/ram-mb"}},
      {"pi3b-b", {"ballast.io/cpu-model", "ballast.io/os-bits"}}};
  EXPECT_EQ(*marks, expected);
  // A `nodes:` file has no marks; text that is not YAML is an error.
  EXPECT_TRUE(ProbeLabelsOfNodes("nodes: [{name: a, labels: {}}]", "n.yaml")->empty());
  auto not_yaml = ProbeLabelsOfNodes("kind: List\nitems: [", "n.yaml");
  ASSERT_FALSE(not_yaml.ok());
  EXPECT_EQ(not_yaml.status().message().rfind("n.yaml:2:", 0), 0u) << not_yaml.status().message();
  // Odd shapes are skipped, not trusted.
  EXPECT_TRUE(ProbeLabelsOfNodes("kind: List\nitems: [1, {metadata: 2}, {metadata: {name: x, "
                                 "annotations: {ballast.io/probe-labels: [a]}}}]",
                                 "n.yaml")
                  ->empty());
}

}  // namespace
}  // namespace ballast::probe
