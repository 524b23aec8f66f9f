// The board's own account (docs/probe.md, "Facts and the files they come
// from" and "Node conditions"): the thermal zone and rpi_volt parsers, what
// the trees of tests/probe/trees give, the conditions and their transitions,
// and the gauges a probe serves for them.
#include <cpprest/http_client.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
