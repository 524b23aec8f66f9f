// The board's own account (docs/probe.md, "Facts and the files they come
// from" and "Node conditions"): the thermal zone and rpi_volt parsers, what
// the trees of tests/probe/trees give, the memory cgroup's parsers on the
// fixtures of tests/probe/testdata/cgroups, the conditions and their transitions,
// and the gauges a probe serves for them.
#include <cpprest/http_client.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "core/probe/board_conditions.h"
#include "core/probe/parse.h"
#include "tests/support/metrics_text.h"
#include "worker/probe/probe_metrics.h"
#include "worker/probe/report.h"

namespace ballast::probe {
namespace {

namespace fs = std::filesystem;
using testing_support::Gauge;

std::string BoardTree(const std::string& name) {
  return std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/" + name;
}

worker::ProbeReport ProbeBoard(const std::string& root) {
  auto report = worker::Probe(root);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : worker::ProbeReport{};
}

TEST(ProbeParse, ThermalZoneMillidegreesAndFlags) {
  EXPECT_DOUBLE_EQ(*ParseMilliCelsius("71540\n"), 71.54);
  EXPECT_DOUBLE_EQ(*ParseMilliCelsius(" -5250 "), -5.25);
  EXPECT_DOUBLE_EQ(*ParseMilliCelsius("0"), 0);
  for (const char* bad : {"", "-", "+5", "71.5", "12345678", "250000", "-274000", "7e4", "abc"}) {
    EXPECT_FALSE(ParseMilliCelsius(bad).ok()) << bad;
  }
  EXPECT_TRUE(*ParseFlag("1\n"));
  EXPECT_FALSE(*ParseFlag(" 0"));
  for (const char* bad : {"", "2", "01", "yes", "1 1"}) EXPECT_FALSE(ParseFlag(bad).ok()) << bad;
}

TEST(ProbeBoardState, TreesGiveTemperatureAndTheVoltAlarm) {
  const Facts pi4 = ProbeBoard(BoardTree("pi4b-8gb")).facts;
  ASSERT_TRUE(pi4.soc_temp_c.has_value());
  EXPECT_DOUBLE_EQ(*pi4.soc_temp_c, 71.54);
  EXPECT_EQ(pi4.soc_temp_file, "sys/class/thermal/thermal_zone0/temp");
  EXPECT_EQ(pi4.under_voltage_alarm, std::optional<bool>(true));
  EXPECT_EQ(pi4.under_voltage_alarm_file, "sys/class/hwmon/hwmon0/in0_lcrit_alarm");
  EXPECT_EQ(ProbeBoard(BoardTree("pi4b-2gb")).facts.under_voltage_alarm,
            std::optional<bool>(false));
  // A PC: the package's zone, not ACPI's zone 0; no firmware, no alarm.
  const worker::ProbeReport pc = ProbeBoard(BoardTree("amd64"));
  EXPECT_DOUBLE_EQ(pc.facts.soc_temp_c.value_or(-1), 45.0);
  EXPECT_EQ(pc.facts.soc_temp_file, "sys/class/thermal/thermal_zone1/temp");
  EXPECT_FALSE(pc.facts.under_voltage_alarm.has_value());
  // The Pi Zero 2 W's tree has no thermal zone: unknown, and no warning.
  const worker::ProbeReport zero = ProbeBoard(BoardTree("pi-zero-2w"));
  EXPECT_FALSE(zero.facts.soc_temp_c.has_value());
  for (const Warning& w : zero.warnings) EXPECT_NE(w.fact, "soc-temperature") << w.message;
}

// A copy of `tree` in a directory of the test's own, for damaging.
fs::path CopyBoardTree(const std::string& tree, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ballast-board-state-" + name);
  fs::remove_all(dir);
  fs::copy(BoardTree(tree), dir, fs::copy_options::recursive);
  return dir;
}

void WriteBoardFile(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

TEST(ProbeBoardState, GarbledTemperatureWarnsAndTheRestStands) {
  const fs::path dir = CopyBoardTree("pi4b-8gb", "garbled");
  WriteBoardFile(dir / "sys/class/thermal/thermal_zone0/temp", "hot\n");
  WriteBoardFile(dir / "sys/class/hwmon/hwmon0/in0_lcrit_alarm", "maybe\n");
  const worker::ProbeReport report = ProbeBoard(dir.string());
  EXPECT_FALSE(report.facts.soc_temp_c.has_value());
  EXPECT_FALSE(report.facts.under_voltage_alarm.has_value());
  int seen = 0;
  for (const Warning& w : report.warnings) {
    if (w.fact == "soc-temperature") {
      EXPECT_EQ(w.message,
                "sys/class/thermal/thermal_zone0/temp: expected millidegrees Celsius, got 'hot'; "
                "soc-temperature: unknown, gauge not exported");
      ++seen;
    }
    if (w.fact == "under-voltage") ++seen;
  }
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(report.facts.throttled.has_value());  // get_throttled still read
  fs::remove_all(dir);
}

TEST(BoardConditions, WhatEachTreeSays) {
  // pi4b-8gb: get_throttled 0x50005, the rpi_volt alarm up.
  const auto pi4 = BoardConditions(ProbeBoard(BoardTree("pi4b-8gb")).facts);
  ASSERT_EQ(pi4.size(), 2u);
  EXPECT_EQ(pi4[0], (BoardCondition{"BallastBoardUnderVoltage", "True", "UnderVoltageNow",
                                    "the board's supply is under-voltage now (get_throttled "
                                    "0x50005; rpi_volt in0_lcrit_alarm 1)",
                                    ""}));
  EXPECT_EQ(pi4[1], (BoardCondition{"BallastBoardThrottled", "True", "ThrottledNow",
                                    "the firmware reports throttled now; throttled since boot "
                                    "(get_throttled 0x50005)",
                                    ""}));
  const auto healthy = BoardConditions(ProbeBoard(BoardTree("pi4b-2gb")).facts);
  ASSERT_EQ(healthy.size(), 2u);
  EXPECT_EQ(healthy[0].status, "False");
  EXPECT_EQ(healthy[0].reason, "SupplyOk");
  EXPECT_EQ(healthy[0].message, "no under-voltage since boot (get_throttled 0x0)");
  EXPECT_EQ(healthy[1].reason, "NotThrottled");
  // A PC exposes neither: no condition at all.
  EXPECT_TRUE(BoardConditions(ProbeBoard(BoardTree("amd64")).facts).empty());
}

std::string CgroupFixture(const std::string& name) {
  std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/testdata/cgroups/" + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ProbeParse, MemoryCgroupInTheKernelsFiles) {
  using enum ControllerState;
  EXPECT_EQ(ParseCgroupControllersMemory(CgroupFixture("cgroup.controllers-debian12")).value(),
            kEnabled);
  EXPECT_EQ(ParseCgroupControllersMemory(CgroupFixture("cgroup.controllers-pi-os")).value(),
            kAbsent);
  EXPECT_EQ(ParseCgroupControllersMemory("").value(), kAbsent);
  EXPECT_EQ(ParseCgroupControllersMemory("\n").value(), kAbsent);
  EXPECT_EQ(ParseCgroupControllersMemory("memoryx cpu\n").value(), kAbsent);
  EXPECT_FALSE(ParseCgroupControllersMemory("cpu\nmemory\n").ok());
  EXPECT_FALSE(ParseCgroupControllersMemory("cpu Memory").ok());
  std::string many;
  for (int i = 0; i < 65; ++i) many += "c" + std::to_string(i) + " ";
  EXPECT_EQ(ParseCgroupControllersMemory(many).status().message(), "more than 64 controllers");

  EXPECT_EQ(ParseProcCgroupsMemory(CgroupFixture("cgroups-v1-memory")).value(), kEnabled);
  EXPECT_EQ(ParseProcCgroupsMemory(CgroupFixture("cgroups-v1-pi-os")).value(), kDisabled);
  const std::string header = "#subsys_name\thierarchy\tnum_cgroups\tenabled\n";
  EXPECT_EQ(ParseProcCgroupsMemory(header + "cpu\t3\t58\t1\n").value(), kAbsent);
  EXPECT_EQ(ParseProcCgroupsMemory(header + "memory\t0\t1\t1\n").value(), kAbsent);
  EXPECT_EQ(ParseProcCgroupsMemory("cpu 3 58 1\n").status().message(),
            "no '#subsys_name hierarchy num_cgroups enabled' header");
  EXPECT_EQ(ParseProcCgroupsMemory(header + "memory\t10\t80\n").status().message(),
            "line 2: not 'name hierarchy cgroups enabled'");
  EXPECT_EQ(ParseProcCgroupsMemory(header + "memory\t10\tx\t1\n").status().message(),
            "line 2: 'x' is not a number");
  EXPECT_FALSE(ParseProcCgroupsMemory(header + "memory\t10\t80\t2\n").ok());

  EXPECT_EQ(MemoryCgroupDisabledBy(CgroupFixture("cmdline-disabled")), "cgroup_disable=memory");
  EXPECT_EQ(MemoryCgroupDisabledBy(CgroupFixture("cmdline-enabled")), "");
  EXPECT_EQ(MemoryCgroupDisabledBy("root=/dev/sda1 cgroup_memory=0"), "cgroup_memory=0");
  EXPECT_EQ(MemoryCgroupDisabledBy("cgroup_disable=cpu,memory quiet"), "cgroup_disable=cpu,memory");
  EXPECT_EQ(MemoryCgroupDisabledBy("cgroup_disable=memoryx cgroup_disable=cpu"), "");
}

// The memory cgroup condition from a board's files: v2's controllers first,
// else /proc/cgroups; the command line's word when it is off.
TEST(BoardConditions, MemoryCgroupFromTheKernelsFiles) {
  const fs::path dir = CopyBoardTree("pi4b-2gb", "memory-cgroup");
  const auto memory = [&]() {
    for (const BoardCondition& c : BoardConditions(ProbeBoard(dir.string()).facts)) {
      if (c.type == kNoMemoryCgroupCondition) return c;
    }
    return BoardCondition{};
  };
  // The captured tree has neither file: unknown, no condition, no warning.
  EXPECT_EQ(memory().type, "");
  WriteBoardFile(dir / "proc/cgroups", CgroupFixture("cgroups-v1-pi-os"));
  BoardCondition c = memory();
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "MemoryCgroupMissing");
  EXPECT_EQ(c.message,
            "the kernel offers no memory cgroup controller (proc/cgroups: off unless the command "
            "line enables it, or not built in); the kubelet and k3s do not start without it "
            "(\"failed to find memory cgroup\"): add cgroup_memory=1 cgroup_enable=memory to the "
            "kernel command line (cmdline.txt on Raspberry Pi OS) and reboot");
  WriteBoardFile(dir / "proc/cmdline", CgroupFixture("cmdline-disabled"));
  c = memory();
  EXPECT_EQ(c.reason, "MemoryCgroupDisabled");
  EXPECT_TRUE(
      c.message.starts_with("the memory cgroup controller is off: cgroup_disable=memory "
                            "on the kernel command line (proc/cgroups); "))
      << c.message;
  // cgroup v2's root file wins over /proc/cgroups.
  WriteBoardFile(dir / "sys/fs/cgroup/cgroup.controllers",
                 CgroupFixture("cgroup.controllers-debian12"));
  EXPECT_EQ(memory(), (BoardCondition{"BallastBoardNoMemoryCgroup", "False", "MemoryCgroupPresent",
                                      "the kernel offers the memory cgroup controller "
                                      "(sys/fs/cgroup/cgroup.controllers)",
                                      ""}));
  const worker::ProbeReport v2 = ProbeBoard(dir.string());
  EXPECT_EQ(v2.facts.memory_cgroup, std::optional<bool>(true));
  EXPECT_EQ(v2.facts.memory_cgroup_file, "sys/fs/cgroup/cgroup.controllers");
  // Garbled, it warns and /proc/cgroups decides.
  WriteBoardFile(dir / "sys/fs/cgroup/cgroup.controllers", "cpu\n\nMEMORY\n");
  const worker::ProbeReport garbled = ProbeBoard(dir.string());
  EXPECT_EQ(garbled.facts.memory_cgroup, std::optional<bool>(false));
  EXPECT_EQ(garbled.facts.memory_cgroup_disabled_by, "cgroup_disable=memory");
  bool warned = false;
  for (const Warning& w : garbled.warnings) {
    warned = warned || (w.fact == "memory-cgroup" && w.file == "sys/fs/cgroup/cgroup.controllers");
  }
  EXPECT_TRUE(warned);
  fs::remove_all(dir);
}

TEST(BoardConditions, EachBitAndTheAlarmAlone) {
  Facts facts;
  facts.throttled = Throttled{0x10000};
  auto c = BoardConditions(facts);
  EXPECT_EQ(c[0].reason, "UnderVoltageSinceBoot");
  EXPECT_EQ(c[1].reason, "NotThrottled");
  facts.throttled = Throttled{0xa0008};
  c = BoardConditions(facts);
  EXPECT_EQ(c[0].reason, "SupplyOk");
  EXPECT_EQ(c[1].message,
            "the firmware reports soft temperature limit now; frequency capped and soft "
            "temperature limit since boot (get_throttled 0xa0008)");
  facts.throttled = Throttled{0xe0000};
  EXPECT_EQ(BoardConditions(facts)[1].message,
            "the firmware reports frequency capped, throttled and soft temperature limit since "
            "boot, not now (get_throttled 0xe0000)");
  // The hwmon alarm alone: under-voltage only, and no throttling condition.
  Facts alarm_only;
  alarm_only.under_voltage_alarm = true;
  c = BoardConditions(alarm_only);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "UnderVoltageNow");
  EXPECT_EQ(c[0].message,
            "the board's supply is under-voltage now (rpi_volt in0_lcrit_alarm 1; the "
            "firmware's record since boot is not exposed)");
  alarm_only.soc_temp_c = 81.26;
  EXPECT_EQ(TemperatureNote(alarm_only), "SoC at 81.3 °C");
  EXPECT_EQ(TemperatureNote(Facts{}), "");
}

BoardCondition BoardCond(const char* type, const char* status, const char* reason,
                         const char* message = "m", const char* time = "") {
  return {type, status, reason, message, time};
}

TEST(BoardConditions, TransitionsMoveTheTimeAndPostEvents) {
  constexpr const char* kUv = "BallastBoardUnderVoltage";
  constexpr const char* t0 = "2026-01-01T00:00:00Z";
  constexpr const char* t1 = "2026-01-01T01:00:00Z";
  // New and False: written, no Event.
  auto d = DecideBoardConditions({}, {BoardCond(kUv, "False", "SupplyOk")}, t0, "SoC at 50.0 °C");
  ASSERT_EQ(d.write.size(), 1u);
  EXPECT_EQ(d.write[0].last_transition_time, t0);
  EXPECT_TRUE(d.events.empty());
  // The same again: nothing written, nothing told.
  d = DecideBoardConditions({BoardCond(kUv, "False", "SupplyOk", "m", t0)},
                            {BoardCond(kUv, "False", "SupplyOk")}, t1, "");
  EXPECT_TRUE(d.write.empty());
  EXPECT_TRUE(d.events.empty());
  // Becomes True: the time moves, a Warning with the note.
  d = DecideBoardConditions({BoardCond(kUv, "False", "SupplyOk", "m", t0)},
                            {BoardCond(kUv, "True", "UnderVoltageNow", "low")}, t1,
                            "SoC at 50.0 °C");
  ASSERT_EQ(d.write.size(), 1u);
  EXPECT_EQ(d.write[0].last_transition_time, t1);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "Warning");
  EXPECT_EQ(d.events[0].reason, "UnderVoltageNow");
  EXPECT_EQ(d.events[0].message, "low; SoC at 50.0 °C");
  // Now -> since boot: still True, the time kept, a Normal Event of the new
  // reason (the problem is no longer present).
  d = DecideBoardConditions({BoardCond(kUv, "True", "UnderVoltageNow", "low", t1)},
                            {BoardCond(kUv, "True", "UnderVoltageSinceBoot", "was low")},
                            "2026-01-01T02:00:00Z", "");
  ASSERT_EQ(d.write.size(), 1u);
  EXPECT_EQ(d.write[0].last_transition_time, t1);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "Normal");
  EXPECT_EQ(d.events[0].reason, "UnderVoltageSinceBoot");
  // Since boot -> now again: a Warning.
  d = DecideBoardConditions({BoardCond(kUv, "True", "UnderVoltageSinceBoot", "was low", t1)},
                            {BoardCond(kUv, "True", "UnderVoltageNow", "low")},
                            "2026-01-01T03:00:00Z", "");
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "Warning");
  EXPECT_EQ(d.events[0].reason, "UnderVoltageNow");
  // Only the message changes (more bits): written, no Event.
  d = DecideBoardConditions({BoardCond(kUv, "True", "UnderVoltageNow", "low", t1)},
                            {BoardCond(kUv, "True", "UnderVoltageNow", "lower")}, t0, "");
  EXPECT_EQ(d.write.size(), 1u);
  EXPECT_TRUE(d.events.empty());
  // Back to False (a reboot on a new supply): a Normal Event.
  d = DecideBoardConditions({BoardCond(kUv, "True", "UnderVoltageSinceBoot", "was low", t1)},
                            {BoardCond(kUv, "False", "SupplyOk", "fine")}, t0, "");
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "Normal");
  EXPECT_EQ(d.events[0].reason, "SupplyOk");
  EXPECT_EQ(d.write[0].last_transition_time, t0);
  // A probe restarted on a board still under-voltage: the Node says it all.
  d = DecideBoardConditions({BoardCond(kUv, "True", "UnderVoltageNow", "low", t1)},
                            {BoardCond(kUv, "True", "UnderVoltageNow", "low")}, t0, "");
  EXPECT_TRUE(d.write.empty());
  EXPECT_TRUE(d.events.empty());
}

// Issue 61, the probe's conditions under a board flapping between healthy
// and throttled (the sticky since-boot bits keep the condition True): each
// probe interval writes the Node once and posts one Event, never more;
// lastTransitionTime stays when the trouble began, which is what the
// operator quotes; and of each cycle only the return of the trouble is a
// Warning (it was two Warnings a cycle).
TEST(BoardConditions, ABoardFlappingBetweenThrottledAndNotWritesOnceAndWarnsOncePerCycle) {
  constexpr const char* kTh = "BallastBoardThrottled";
  const BoardCondition now = BoardCond(kTh, "True", "ThrottledNow", "throttled now");
  const BoardCondition was = BoardCond(kTh, "True", "ThrottledSinceBoot", "throttled since boot");
  std::vector<BoardCondition> on_node;
  int writes = 0, warnings = 0, normals = 0;
  for (int interval = 0; interval < 20; ++interval) {
    const std::string at = fmt::format("2026-01-01T00:{:02d}:00Z", interval);
    const auto d = DecideBoardConditions(on_node, {interval % 2 == 0 ? now : was}, at, "");
    ASSERT_LE(d.write.size(), 1u);
    ASSERT_LE(d.events.size(), 1u);
    if (!d.write.empty()) {
      ++writes;
      on_node = d.write;
    }
    for (const auto& event : d.events) (event.type == "Warning" ? warnings : normals)++;
  }
  EXPECT_EQ(writes, 20);
  EXPECT_EQ(warnings, 10);
  EXPECT_EQ(normals, 10);
  ASSERT_EQ(on_node.size(), 1u);
  EXPECT_EQ(on_node[0].last_transition_time, "2026-01-01T00:00:00Z");
}

TEST(BoardConditions, ReadFromANodeAndTheApplyDocument) {
  const nlohmann::json node = nlohmann::json::parse(R"({
    "metadata": {"name": "pi4b-1"},
    "status": {"conditions": [
      {"type": "Ready", "status": "True", "reason": "KubeletReady"},
      {"type": "BallastBoardUnderVoltage", "status": "True", "reason": "UnderVoltageNow",
       "message": "low", "lastTransitionTime": "2026-01-01T00:00:00Z"},
      {"type": 7}, "junk"]}})");
  const auto read = ReadBoardConditions(node);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0], BoardCond("BallastBoardUnderVoltage", "True", "UnderVoltageNow", "low",
                               "2026-01-01T00:00:00Z"));
  EXPECT_TRUE(ReadBoardConditions(nlohmann::json("x")).empty());
  const auto doc = BoardConditionsApplyObject("pi4b-1", read, "2026-01-02T00:00:00Z");
  EXPECT_EQ(doc["metadata"]["name"], "pi4b-1");
  ASSERT_EQ(doc["status"]["conditions"].size(), 1u);
  EXPECT_EQ(doc["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(doc["status"]["conditions"][0]["lastHeartbeatTime"], "2026-01-02T00:00:00Z");
  EXPECT_EQ(ReadBoardConditions(doc), read);
}

std::string ScrapeBoard(int port) {
  web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port));
  return client.request(web::http::methods::GET, "/metrics").get().extract_string(true).get();
}

TEST(ProbeBoardState, GaugesOfThrottlingAndTemperature) {
  auto metrics = worker::ProbeMetrics::Create("127.0.0.1:0", "pi4b-8gb");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  (*metrics)->Update(ProbeBoard(BoardTree("pi4b-8gb")));
  std::string text = ScrapeBoard((*metrics)->port());
  EXPECT_DOUBLE_EQ(Gauge(text, "ballast_node_soc_temperature_celsius"), 71.54) << text;
  EXPECT_EQ(Gauge(text, "ballast_node_under_voltage"), 1);
  EXPECT_EQ(Gauge(text, "ballast_node_throttled"), 1);
  EXPECT_EQ(Gauge(text, "ballast_node_soft_temp_limit"), 0);
  EXPECT_EQ(Gauge(text, "ballast_node_freq_capped_since_boot"), 0);
  EXPECT_EQ(Gauge(text, "ballast_node_soft_temp_limit_since_boot"), 0);
  // The PC: a temperature, none of the firmware's gauges.
  (*metrics)->Update(ProbeBoard(BoardTree("amd64")));
  text = ScrapeBoard((*metrics)->port());
  EXPECT_DOUBLE_EQ(Gauge(text, "ballast_node_soc_temperature_celsius"), 45) << text;
  for (const char* gone : {"ballast_node_under_voltage", "ballast_node_throttled",
                           "ballast_node_soft_temp_limit", "ballast_node_freq_capped_since_boot"}) {
    EXPECT_EQ(Gauge(text, gone), -1) << gone;
  }
  // The rpi_volt alarm alone says under-voltage now.
  worker::ProbeReport alarm_only;
  alarm_only.facts.under_voltage_alarm = true;
  (*metrics)->Update(alarm_only);
  text = ScrapeBoard((*metrics)->port());
  EXPECT_EQ(Gauge(text, "ballast_node_under_voltage"), 1) << text;
  EXPECT_EQ(Gauge(text, "ballast_node_soc_temperature_celsius"), -1);
}

}  // namespace
}  // namespace ballast::probe
