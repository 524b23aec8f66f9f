// The probe on the captured trees of tests/probe/trees (docs/probe.md): the
// exact labels each board gives, the seed-000 boards' weights 5 / 5 / 1
// through the fuzzy model, and trees damaged the ways real ones are
// (missing, unreadable, truncated, garbled or too long files, an unknown
// board, a link that points out of the root).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "core/fuzzy/model.h"
#include "core/fuzzy/profile.h"
#include "core/probe/board_conditions.h"
#include "tests/support/shell_command.h"
#include "worker/probe/node_labeller.h"
#include "worker/probe/report.h"
#include "worker/probe/tree_reader.h"

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;
using Labels = std::map<std::string, std::string>;

std::string Tree(const std::string& name) {
  return std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/" + name;
}

ProbeReport MustProbe(const std::string& root) {
  auto report = Probe(root);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : ProbeReport{};
}

// The warnings' messages, for failure output and searching.
std::string Messages(const ProbeReport& report) {
  std::string out;
  for (const probe::Warning& warning : report.warnings) out += warning.message + "\n";
  return out;
}

bool HasWarning(const ProbeReport& report, const std::string& fact, const std::string& file) {
  for (const probe::Warning& warning : report.warnings) {
    if (warning.fact == fact && warning.file == file) return true;
  }
  return false;
}

struct TreeCase {
  const char* tree;
  Labels labels;
  size_t warnings;
};

TEST(ProbeTrees, EachBoardGivesExactlyItsLabels) {
  const TreeCase cases[] = {
      {"pi3b-32bit",
       {{"ballast.io/board", "pi-3b"},
        {"ballast.io/cpu-cores", "4"},
        {"ballast.io/cpu-mhz", "1200"},
        {"ballast.io/cpu-model", "cortex-a53"},
        {"ballast.io/kernel-bits", "32"},
        {"ballast.io/os-bits", "32"},
        {"ballast.io/os-release", "2021-01-11"},
        {"ballast.io/page-size-kb", "4"},
        {"ballast.io/power-ok", "true"},
        {"ballast.io/power-w", "5.1"},
        {"ballast.io/ram-mb", "1024"},
        {"ballast.io/sd-gb", "4"}},
       0},
      {"pi4b-2gb",
       {{"ballast.io/board", "pi-4b"},
        {"ballast.io/cpu-cores", "4"},
        {"ballast.io/cpu-mhz", "1500"},
        {"ballast.io/cpu-model", "cortex-a72"},
        {"ballast.io/kernel-bits", "64"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/os-release", "2020-08-24"},
        {"ballast.io/page-size-kb", "4"},
        {"ballast.io/power-ok", "true"},
        {"ballast.io/power-w", "6.4"},
        {"ballast.io/ram-mb", "2048"},
        {"ballast.io/sd-gb", "8"}},
       0},
      {"pi4b-8gb",
       {{"ballast.io/board", "pi-4b"},
        {"ballast.io/cpu-cores", "4"},
        {"ballast.io/cpu-mhz", "1800"},
        {"ballast.io/cpu-model", "cortex-a72"},
        {"ballast.io/kernel-bits", "64"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/os-release", "2022-09-22"},
        {"ballast.io/page-size-kb", "4"},
        {"ballast.io/power-ok", "false"},
        {"ballast.io/power-w", "6.4"},
        {"ballast.io/ram-mb", "8192"},
        {"ballast.io/sd-gb", "32"}},
       0},
      {"pi5-16k",
       {{"ballast.io/board", "pi-5"},
        {"ballast.io/cpu-cores", "4"},
        {"ballast.io/cpu-mhz", "2400"},
        {"ballast.io/cpu-model", "cortex-a76"},
        {"ballast.io/kernel-bits", "64"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/os-release", "2024-07-04"},
        {"ballast.io/page-size-kb", "16"},
        {"ballast.io/power-ok", "true"},
        {"ballast.io/power-w", "8.8"},
        {"ballast.io/ram-mb", "8192"},
        {"ballast.io/sd-gb", "64"}},
       0},
      // No power figure for a Zero 2 W: the label is left out, one warning.
      {"pi-zero-2w",
       {{"ballast.io/board", "pi-zero-2-w"},
        {"ballast.io/cpu-cores", "4"},
        {"ballast.io/cpu-mhz", "1000"},
        {"ballast.io/cpu-model", "cortex-a53"},
        {"ballast.io/kernel-bits", "64"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/os-release", "2023-12-05"},
        {"ballast.io/page-size-kb", "4"},
        {"ballast.io/power-ok", "true"},
        {"ballast.io/ram-mb", "512"},
        {"ballast.io/sd-gb", "16"}},
       1},
      // No device tree and no firmware: no board, power-w or power-ok.
      {"amd64",
       {{"ballast.io/cpu-cores", "8"},
        {"ballast.io/cpu-mhz", "3800"},
        {"ballast.io/cpu-model", "intel-core-i5-8259u-cpu-2.30ghz"},
        {"ballast.io/kernel-bits", "64"},
        {"ballast.io/os-bits", "64"},
        {"ballast.io/os-release", "ubuntu-22.04"},
        {"ballast.io/page-size-kb", "4"},
        {"ballast.io/ram-mb", "16384"},
        {"ballast.io/sd-gb", "512"}},
       1},
  };
  for (const TreeCase& c : cases) {
    SCOPED_TRACE(c.tree);
    const ProbeReport report = MustProbe(Tree(c.tree));
    EXPECT_EQ(report.labels, c.labels);
    EXPECT_EQ(report.warnings.size(), c.warnings) << Messages(report);
    for (const auto& [key, value] : report.labels) {
      EXPECT_TRUE(probe::IsValidLabelValue(value)) << key << "=" << value;
      EXPECT_TRUE(probe::ProbeLabelKeys().count(key)) << key;
    }
  }
}

TEST(ProbeTrees, FactsOfAPi5AndAThrottledPi4) {
  const ProbeReport pi5 = MustProbe(Tree("pi5-16k"));
  ASSERT_TRUE(pi5.facts.board.has_value());
  EXPECT_EQ(pi5.facts.board->soc, "BCM2712");
  EXPECT_EQ(pi5.facts.board->maker, "Sony UK");
  EXPECT_EQ(pi5.facts.board_model, "Raspberry Pi 5 Model B Rev 1.0");
  EXPECT_EQ(pi5.facts.page_size, 16384u);
  EXPECT_EQ(pi5.facts.supply_max_current_ma, 5000u);
  EXPECT_EQ(pi5.facts.sd_maker, "SanDisk");
  EXPECT_EQ(pi5.facts.sd_date, "2024-01");
  EXPECT_EQ(pi5.facts.throttled_file,
            "sys/devices/platform/soc@107c000000/soc@107c000000:firmware/get_throttled");

  const ProbeReport pi4 = MustProbe(Tree("pi4b-8gb"));
  ASSERT_TRUE(pi4.facts.throttled.has_value());
  EXPECT_TRUE(pi4.facts.throttled->under_voltage_now());
  EXPECT_TRUE(pi4.facts.throttled->throttled_now());
  EXPECT_TRUE(pi4.facts.throttled->under_voltage_since_boot());
  EXPECT_FALSE(pi4.facts.throttled->freq_capped_now());
  EXPECT_EQ(pi4.facts.sd_maker, "Samsung");

  const ProbeReport pi3 = MustProbe(Tree("pi3b-32bit"));
  EXPECT_EQ(pi3.facts.kernel_machine, "armv7l");
  EXPECT_EQ(pi3.facts.userland_machine, "arm");
}

// The seed-000 cluster of Zubov & Kupin, Table 1, from the probe's labels:
// two Pi 4B 2 GB (the master also carries k3s's control-plane label) and a
// Pi 3B on a 32-bit OS give Table 2's scores and weights 5 / 5 / 1.
TEST(ProbeTrees, Seed000TreesGiveTheWeightsOfTable2) {
  const ProbeReport pi4 = MustProbe(Tree("pi4b-2gb"));
  const ProbeReport pi3 = MustProbe(Tree("pi3b-32bit"));
  fuzzy::NodeFacts master{"pi4b-master", pi4.labels};
  master.labels["node-role.kubernetes.io/control-plane"] = "true";
  const std::vector<fuzzy::NodeFacts> nodes = {
      master, {"pi4b-worker", pi4.labels}, {"pi3b-worker", pi3.labels}};
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok());
  auto result = fuzzy::ComputeWeights(*profile, nodes);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->warnings.empty());
  ASSERT_EQ(result->nodes.size(), 3u);
  EXPECT_NEAR(result->nodes[0].score, 0.975, 0.002);
  EXPECT_NEAR(result->nodes[1].score, 0.985, 0.002);
  EXPECT_NEAR(result->nodes[2].score, 0.229, 0.002);
  EXPECT_EQ(result->nodes[0].weight, 5);
  EXPECT_EQ(result->nodes[1].weight, 5);
  EXPECT_EQ(result->nodes[2].weight, 1);
}

// docs/getting-started.md's install example: a Pi 5, a Pi 4B 2 GB and a Pi 3B on a
// 32-bit OS, labelled by the probe alone, weigh 8 / 5 / 1.
TEST(ProbeTrees, ReadmeClusterWeighs851) {
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok());
  auto result = fuzzy::ComputeWeights(*profile, {{"pi5-a", MustProbe(Tree("pi5-16k")).labels},
                                                 {"pi4b-a", MustProbe(Tree("pi4b-2gb")).labels},
                                                 {"pi3b-a", MustProbe(Tree("pi3b-32bit")).labels}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->nodes[0].weight, 8);
  EXPECT_EQ(result->nodes[1].weight, 5);
  EXPECT_EQ(result->nodes[2].weight, 1);
  // The Pi 5's OS release is not in the profile: the one warning.
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("unknown value '2024-07-04'"), std::string::npos);
}

// A copy of a tree in a temporary directory, to damage.
class DamagedTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("probe-tree-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::copy(Tree("pi4b-2gb"), root_, fs::copy_options::recursive);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_ / "proc/meminfo", fs::perms::owner_all, ignored);
    fs::remove_all(root_);
  }
  void Write(const std::string& relative, const std::string& content) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary | std::ios::trunc) << content;
  }
  fs::path root_;
};

TEST_F(DamagedTree, MissingMeminfoStillGivesTheOtherLabels) {
  fs::remove(root_ / "proc/meminfo");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
  // The revision code still gives the board's RAM; everything else stands.
  EXPECT_EQ(report.labels.at("ballast.io/ram-mb"), "2048");
  EXPECT_EQ(report.labels.at("ballast.io/cpu-model"), "cortex-a72");
  EXPECT_EQ(report.labels.size(), 12u);
}

TEST_F(DamagedTree, TruncatedRevisionCodeFallsBackToMemTotalAndWarns) {
  Write("proc/device-tree/system/linux,revision", std::string("\xb0\x31", 2));
  Write("proc/cpuinfo",
        "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n"
        "Revision\t: b031\n");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "board", "proc/device-tree/system/linux,revision"))
      << Messages(report);
  EXPECT_TRUE(HasWarning(report, "board", "proc/cpuinfo")) << Messages(report);
  EXPECT_FALSE(report.facts.board.has_value());
  // 1893732 kB of MemTotal round up to 2048 MB; no board, so no power figure.
  EXPECT_EQ(report.labels.at("ballast.io/ram-mb"), "2048");
  EXPECT_EQ(report.labels.count("ballast.io/power-w"), 0u);
  EXPECT_TRUE(HasWarning(report, "ballast.io/power-w", "")) << Messages(report);
  EXPECT_EQ(report.labels.at("ballast.io/cpu-model"), "cortex-a72");
}

TEST_F(DamagedTree, UnknownBoardKeepsItsModelAsTheBoardLabel) {
  Write("proc/device-tree/model", std::string("Pine64 RockPro64 v2.1\0", 22));
  fs::remove(root_ / "proc/device-tree/system/linux,revision");
  Write("proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n");
  fs::remove_all(root_ / "sys/devices/platform");
  const ProbeReport report = MustProbe(root_);
  EXPECT_EQ(report.labels.at("ballast.io/board"), "pine64-rockpro64-v2.1");
  EXPECT_EQ(report.labels.at("ballast.io/cpu-model"), "cortex-a72");
  EXPECT_FALSE(report.facts.raspberry_pi);
  // Not a Pi: no warning for the missing revision or firmware.
  EXPECT_FALSE(HasWarning(report, "board", "proc/device-tree/system/linux,revision"));
  EXPECT_EQ(report.labels.count("ballast.io/power-ok"), 0u);
}

TEST_F(DamagedTree, TooLongValueIsCutToALabelValueWithAWarning) {
  Write("etc/rpi-issue", "not a Raspberry Pi OS image\n");
  Write("etc/os-release", "ID=" + std::string(200, 'x') + "\nVERSION_ID=1\n");
  const ProbeReport report = MustProbe(root_);
  const std::string value = report.labels.at("ballast.io/os-release");
  EXPECT_EQ(value, std::string(63, 'x'));
  EXPECT_TRUE(HasWarning(report, "ballast.io/os-release", "")) << Messages(report);
  EXPECT_TRUE(HasWarning(report, "os-release", "etc/rpi-issue")) << Messages(report);
}

TEST_F(DamagedTree, OversizedFileIsRefusedNotRead) {
  Write("proc/meminfo", std::string(20000, ' ') + "MemTotal: 1 kB\n");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
  EXPECT_EQ(report.facts.mem_total_kb, 0u);
}

TEST_F(DamagedTree, GarbledFilesWarnEachAndLeaveTheirLabelsOut) {
  Write("proc/cpuinfo", "\x01\x02garbage");
  Write("sbin/init", "#!/bin/sh\n");
  Write("proc/sys/kernel/arch", "pdp11\n");
  Write("sys/block/mmcblk0/size", "-5\n");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "cpu-model", "proc/cpuinfo")) << Messages(report);
  EXPECT_TRUE(HasWarning(report, "os-bits", "sbin/init")) << Messages(report);
  EXPECT_TRUE(HasWarning(report, "kernel-bits", "proc/sys/kernel/arch")) << Messages(report);
  EXPECT_TRUE(HasWarning(report, "sd-gb", "sys/block/mmcblk0/size")) << Messages(report);
  for (const char* key : {"ballast.io/cpu-model", "ballast.io/os-bits", "ballast.io/sd-gb"}) {
    EXPECT_EQ(report.labels.count(key), 0u) << key;
    EXPECT_TRUE(HasWarning(report, key, "")) << key << "\n" << Messages(report);
  }
  EXPECT_EQ(report.labels.at("ballast.io/ram-mb"), "2048");
  EXPECT_EQ(report.labels.at("ballast.io/os-release"), "2020-08-24");
}

// Without the host's / in the pod (probe.osFiles mounts /etc and /usr), or
// with an init that is a script, any binary of the userland tells its size.
TEST_F(DamagedTree, UserlandFromUsrBinEnvWhenInitIsNoElf) {
  Write("sbin/init", "#!/bin/sh\nexec /lib/systemd/systemd\n");
  std::string elf32(
      "\x7f"
      "ELF\x01\x01\x01",
      7);
  elf32.resize(18, '\0');
  elf32 += std::string("\x28\x00", 2);  // EM_ARM
  elf32.resize(64, '\0');
  Write("usr/bin/env", elf32);
  const ProbeReport report = MustProbe(root_);
  EXPECT_EQ(report.labels.at("ballast.io/os-bits"), "32");
  EXPECT_EQ(report.labels.at("ballast.io/kernel-bits"), "64");
  EXPECT_EQ(report.facts.userland_machine, "arm");
  EXPECT_TRUE(HasWarning(report, "os-bits", "sbin/init")) << Messages(report);
  fs::remove(root_ / "sbin/init");
  const ProbeReport no_init = MustProbe(root_);
  EXPECT_EQ(no_init.labels.at("ballast.io/os-bits"), "32");
  EXPECT_FALSE(HasWarning(no_init, "os-bits", "sbin/init")) << Messages(no_init);
}

TEST_F(DamagedTree, UnreadableFileWarnsNamingIt) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 000";
  fs::permissions(root_ / "proc/meminfo", fs::perms::none);
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
}

TEST_F(DamagedTree, DirectoryWhereTheFileShouldBeIsUnreadable) {
  fs::remove(root_ / "proc/meminfo");
  fs::create_directory(root_ / "proc/meminfo");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
  EXPECT_NE(Messages(report).find("not a regular file"), std::string::npos);
}

TEST_F(DamagedTree, FifoIsNotOpenedForReading) {
  fs::remove(root_ / "proc/meminfo");
  ASSERT_EQ(mkfifo((root_ / "proc/meminfo").c_str(), 0600), 0);
  const ProbeReport report = MustProbe(root_);  // would block if it read the FIFO
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
}

// Regression: the probe opened a FIFO (O_NONBLOCK, so it did not hang)
// before refusing it as not a regular file, which wakes a writer waiting on
// the FIFO: a side effect in the tree it only reads. Its type is looked at
// first, and it is never opened.
TEST_F(DamagedTree, FifoIsNeverOpenedSoItsWriterKeepsWaiting) {
  const fs::path fifo = root_ / "proc/meminfo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::atomic<bool> writer_woke{false};
  std::thread writer([&] {
    const int fd = open(fifo.c_str(), O_WRONLY);  // waits for a reader to open it
    writer_woke = true;
    if (fd >= 0) close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writer waits in open
  const ProbeReport report = MustProbe(root_);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(writer_woke) << "the probe opened the FIFO";
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
  EXPECT_NE(Messages(report).find("not a regular file"), std::string::npos) << Messages(report);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // lets the writer go
  writer.join();
  if (reader >= 0) close(reader);
}

TEST_F(DamagedTree, AbsoluteLinkStaysInsideTheRoot) {
  // /etc/os-release -> /usr/lib/os-release must mean <root>/usr/lib/os-release.
  fs::remove(root_ / "etc/os-release");
  Write("usr/lib/os-release", "ID=inside\nVERSION_ID=7\n");
  fs::create_symlink("/usr/lib/os-release", root_ / "etc/os-release");
  fs::remove(root_ / "etc/rpi-issue");
  // And a link climbing out with .. stops at the root.
  fs::rename(root_ / "proc/meminfo", root_ / "proc/meminfo-real");
  fs::create_symlink("../../../../../../../proc/meminfo-real", root_ / "proc/meminfo");
  const ProbeReport report = MustProbe(root_);
  EXPECT_EQ(report.labels.at("ballast.io/os-release"), "inside-7");
  EXPECT_EQ(report.facts.mem_total_kb, 1893732u);  // <root>/proc/meminfo-real
}

TEST_F(DamagedTree, PiWithoutOrWithGarbledFirmwareNodeWarns) {
  const std::string file = "sys/devices/platform/soc/soc:firmware/get_throttled";
  Write(file, "throttled!\n");
  ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "throttled", file)) << Messages(report);
  EXPECT_EQ(report.labels.count("ballast.io/power-ok"), 0u);
  fs::remove_all(root_ / "sys/devices/platform");
  report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "throttled", "sys/devices/platform/*/*firmware*/get_throttled"))
      << Messages(report);
  EXPECT_EQ(report.labels.size(), 11u);  // all but power-ok
  // The rpi_volt sensor alone still tells the supply, not the throttling.
  Write("sys/class/hwmon/hwmon0/name", "rpi_volt\n");
  Write("sys/class/hwmon/hwmon0/in0_lcrit_alarm", "1\n");
  report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "throttled", "sys/devices/platform/*/*firmware*/get_throttled"));
  const auto conditions = probe::BoardConditions(report.facts);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "BallastBoardUnderVoltage");
  EXPECT_EQ(conditions[0].reason, "UnderVoltageNow");
}

// Regression: a glob bounded to 256 matches of any name missed a Pi 5's
// firmware node behind its many platform devices.
TEST_F(DamagedTree, FirmwareFoundAmongManyPlatformDevices) {
  for (int i = 0; i < 300; ++i) {
    fs::create_directories(root_ / "sys/devices/platform/soc" / ("a" + std::to_string(1000 + i)));
  }
  Write("sys/devices/platform/soc/soc:firmware/get_throttled", "50000\n");
  const ProbeReport report = MustProbe(root_);
  ASSERT_TRUE(report.facts.throttled.has_value()) << Messages(report);
  EXPECT_EQ(report.labels.at("ballast.io/power-ok"), "false");
}

TEST_F(DamagedTree, LinkLoopIsAWarningNotAHang) {
  fs::remove(root_ / "proc/meminfo");
  fs::create_symlink("meminfo", root_ / "proc/meminfo");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
}

// The report as `probe -o json` prints it: dumped the strict way (which
// throws type_error.316 on a byte that is not UTF-8) and parsed back.
nlohmann::json StrictJson(const ProbeReport& report) {
  std::string text;
  EXPECT_NO_THROW(text = ReportToJson(report).dump(2)) << Messages(report);
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

const std::string kFffd = "\xef\xbf\xbd";  // U+FFFD, what a byte that is not UTF-8 becomes

struct Latin1Case {
  const char* name;
  const char* file;
  std::string content;
  const char* fact;      // the JSON pointer of the fact in the report
  std::string expected;  // the fact
  const char* label;     // the label made of it, "" when none
  std::string label_value;
};

// Regression: `ballast-worker probe -o json` aborted (SIGABRT, uncaught
// type_error.316) on one Latin-1 byte in cpuinfo's model name or CPU part,
// the device tree's model or os-release's PRETTY_NAME. Each byte that is not
// UTF-8 becomes U+FFFD in the facts; the labels keep [a-z0-9._-] only.
TEST_F(DamagedTree, Latin1BytesInCpuinfoDeviceTreeAndOsReleaseGiveValidJson) {
  const Latin1Case cases[] = {
      {"model name", "proc/cpuinfo", "processor\t: 0\nmodel name\t: ACME CPU \xe9 3000\n",
       "/facts/cpu/model", "ACME CPU " + kFffd + " 3000", "ballast.io/cpu-model", "acme-cpu-3000"},
      {"CPU part", "proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd\xe9\n",
       "/facts/cpu/model", "arm-0x41-0xd" + kFffd, "ballast.io/cpu-model", "arm-0x41-0xd"},
      {"device-tree model", "proc/device-tree/model", std::string("ACME board \xe9\0", 13),
       "/facts/board/model", "ACME board " + kFffd, "", ""},
      {"PRETTY_NAME", "etc/os-release",
       "ID=debian\nVERSION_ID=10\nPRETTY_NAME=\"D\xe9"
       "bian 10\"\n",
       "/facts/os/pretty_name", "D" + kFffd + "bian 10", "", ""},
  };
  const std::string pristine = root_.string() + "-pristine";
  fs::remove_all(pristine);
  fs::copy(root_, pristine, fs::copy_options::recursive);
  for (const Latin1Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(root_);
    fs::copy(pristine, root_, fs::copy_options::recursive);
    Write(c.file, c.content);
    const ProbeReport report = MustProbe(root_);
    const nlohmann::json json = StrictJson(report);
    ASSERT_TRUE(json.is_object());
    EXPECT_EQ(json.at(nlohmann::json::json_pointer(c.fact)), c.expected);
    if (*c.label != '\0') {
      EXPECT_EQ(report.labels.at(c.label), c.label_value);
    }
    for (const auto& [key, value] : report.labels) {
      EXPECT_TRUE(probe::IsValidLabelValue(value)) << key << "=" << value;
    }
  }
  fs::remove_all(pristine);
}

// Regression: a Latin-1 model name in a warning (a model name of no letter
// or digit, a path of the tree) stays valid UTF-8 in the JSON too.
TEST_F(DamagedTree, Latin1BytesInWarningsGiveValidJson) {
  Write("proc/cpuinfo", "processor\t: 0\nmodel name\t: \xe9\xe9\n");
  Write("proc/meminfo", "MemTotal: \xe9 kB\n");
  const ProbeReport report = MustProbe(root_);
  EXPECT_TRUE(HasWarning(report, "ram", "proc/meminfo")) << Messages(report);
  EXPECT_TRUE(HasWarning(report, "ballast.io/cpu-model", "")) << Messages(report);
  const nlohmann::json json = StrictJson(report);
  EXPECT_EQ(json["facts"]["cpu"]["model"], kFffd + kFffd);
}

// The same through the program: `ballast-worker probe -o json` exits 0 and
// prints JSON that parses.
TEST_F(DamagedTree, ProbeCommandPrintsValidJsonOfLatin1Files) {
  Write("proc/device-tree/model", std::string("ACME board \xe9\0", 13));
  Write("proc/cpuinfo", "processor\t: 0\nmodel name\t: ACME CPU \xe9\n");
  Write("etc/os-release",
        "ID=debian\nPRETTY_NAME=\"D\xe9"
        "bian\"\n");
  const std::string command =
      std::string(BALLAST_WORKER_BINARY) + " probe -o json --root " + root_.string() + " 2>&1";
  const auto [code, out] = ballast::testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["facts"]["board"]["model"], "ACME board " + kFffd);
  EXPECT_EQ(json["facts"]["cpu"]["model"], "ACME CPU " + kFffd);
  EXPECT_EQ(json["facts"]["os"]["pretty_name"], "D" + kFffd + "bian");
}

TEST(ProbeTrees, RootThatIsNotADirectoryIsRefused) {
  auto report = Probe(Tree("pi4b-2gb") + "/proc/meminfo");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalid);
}

TEST(ProbeTrees, JsonCarriesFactsLabelsAndWarnings) {
  const ProbeReport report = MustProbe(Tree("pi-zero-2w"));
  const auto json = ReportToJson(report);
  EXPECT_EQ(json["facts"]["board"]["type"], "Zero 2 W");
  EXPECT_EQ(json["facts"]["board"]["ram_mb"], 512);
  EXPECT_EQ(json["facts"]["userland"]["bits"], 64);
  EXPECT_EQ(json["labels"]["ballast.io/board"], "pi-zero-2-w");
  ASSERT_EQ(json["warnings"].size(), 1u);
  EXPECT_EQ(json["warnings"][0]["fact"], "ballast.io/power-w");
  EXPECT_EQ(ProfileWarnings(report).size(), 1u);
}

TEST(ProbeTrees, AMachineThatIsNoBoardSaysWhyByHand) {
  EXPECT_TRUE(ReportToJson(MustProbe(Tree("pi4b-2gb")))["boardNote"].is_null());
  const auto json = ReportToJson(MustProbe(Tree("amd64")));
  EXPECT_FALSE(json["labels"].contains("ballast.io/board"));
  ASSERT_TRUE(json["boardNote"].is_string());
  EXPECT_EQ(json["boardNote"].get<std::string>().rfind("not a Raspberry Pi board", 0), 0u);
  const auto [code, out] = ballast::testing::RunShellCommand(
      std::string(BALLAST_WORKER_BINARY) + " probe --root " + Tree("amd64") + " 2>&1 >/dev/null");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("note: not a Raspberry Pi board"), std::string::npos) << out;
}

TEST(ProbeApply, ConflictMessagesNameTheLabels) {
  EXPECT_EQ(ConflictingLabels("Apply failed with 1 conflict: conflict with \"kubelet\" using v1: "
                              ".metadata.labels.ballast.io/cpu-model"),
            std::vector<std::string>{"ballast.io/cpu-model"});
  EXPECT_EQ(ConflictingLabels("Apply failed with 2 conflicts: conflicts with \"kubectl-label\" "
                              "using v1:\n- .metadata.labels.ballast.io/os-bits\n- "
                              ".metadata.labels.ballast.io/sd-gb."),
            (std::vector<std::string>{"ballast.io/os-bits", "ballast.io/sd-gb"}));
  EXPECT_TRUE(ConflictingLabels("conflict with \"x\": .spec.taints").empty());
}

TEST(ProbeApply, ApplyObjectCarriesOnlyTheLabelsAndTheirList) {
  const auto object =
      NodeApplyObject("pi-1", {{"ballast.io/os-bits", "64"}, {"ballast.io/sd-gb", "8"}});
  EXPECT_EQ(object["kind"], "Node");
  EXPECT_EQ(object["metadata"]["name"], "pi-1");
  EXPECT_EQ(object["metadata"]["labels"].size(), 2u);
  EXPECT_EQ(object["metadata"]["annotations"][std::string(probe::kProbeLabelsAnnotation)],
            "ballast.io/os-bits,ballast.io/sd-gb");
  EXPECT_EQ(object.size(), 3u);  // apiVersion, kind, metadata: no spec, no status
}

}  // namespace
}  // namespace ballast::worker

namespace ballast::worker {
namespace {

// `ballast weights --nodes` on `kubectl get nodes -o yaml` says which values
// came from the probe's labels.
TEST(ProbeWeights, WeightsMarksTheProbesLabels) {
  const std::string command = std::string(BALLAST_BINARY) + " weights -o json --nodes " +
                              BALLAST_SOURCE_DIR + "/tests/probe/testdata/nodes-probed.yaml" +
                              " 2>/dev/null";
  const auto [code, out] = ballast::testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  ASSERT_EQ(json["nodes"].size(), 3u);
  EXPECT_EQ(json["nodes"][0]["from_probe"], nlohmann::json({"cpu", "os-bits", "ram"}));
  EXPECT_EQ(json["nodes"][1]["from_probe"], nlohmann::json({"cpu", "os-bits"}));
  EXPECT_EQ(json["nodes"][2]["from_probe"], nlohmann::json::array());
}

}  // namespace
}  // namespace ballast::worker
