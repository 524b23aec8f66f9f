// The report a worker sends (core/protocol/messages.h): the run it has under
// way goes out only when there is one, and comes back as it was.
#include <gtest/gtest.h>

#include "core/protocol/messages.h"

namespace ballast::protocol {
namespace {

TEST(ReportMessageTest, ARunUnderWayGoesOutAndComesBackAsItWas) {
  ReportMessage report;
  report.worker = "pi3b-0";
  report.seq = 9;
  report.position = 8;
  report.running_end = 10;
  const nlohmann::json json = ToJson(report);
  EXPECT_EQ(json.at("runningEnd"), 10);
  auto parsed = ParseReport(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->position, 8u);
  EXPECT_EQ(parsed->running_end, 10u);
}

TEST(ReportMessageTest, WithoutARunItIsTheReportOfBefore) {
  ReportMessage report;
  report.worker = "pi4b-0";
  report.position = 3;
  EXPECT_FALSE(ToJson(report).contains("runningEnd"));
  // What workers without runs in their reports send.
  auto parsed = ParseReport(nlohmann::json{{"worker", "pi4b-0"}, {"position", 3u}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->running_end, 0u);
}

TEST(ReportMessageTest, AMalformedRunEndNamesItsField) {
  for (const nlohmann::json& bad :
       {nlohmann::json(-1), nlohmann::json(2.5), nlohmann::json("10"), nlohmann::json(nullptr)}) {
    auto parsed =
        ParseReport(nlohmann::json{{"worker", "a"}, {"position", 3u}, {"runningEnd", bad}});
    ASSERT_FALSE(parsed.ok()) << bad.dump();
    EXPECT_NE(parsed.status().message().find("runningEnd"), std::string::npos)
        << parsed.status().message();
  }
}

}  // namespace
}  // namespace ballast::protocol
