#include "core/history/prometheus_history.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/history_keys.h"

namespace ballast::history {
namespace {

std::string Series(const std::string& node, const std::string& stat, const std::string& value) {
  return R"({"metric":{"node":")" + node + R"(","stat":")" + stat +
         R"("},"value":[1763900000.5,")" + value + R"("]})";
}

std::string Answer(const std::vector<std::string>& series) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (size_t i = 0; i < series.size(); ++i) body += (i ? "," : "") + series[i];
  return body + "]}}";
}

TEST(PrometheusHistoryTest, QueryAsksOneVectorForAllNodes) {
  const std::string query = HistoryQuery(testing::kPrimesKey, 3600);
  // The recorded speed, 0 where history leaves the node out: those dropped.
  EXPECT_NE(
      query.find(
          R"((last_over_time(ballast_node_recorded_speed_cost_units_per_second{workload="primes"}[3600s]) > 0))"),
      std::string::npos);
  EXPECT_EQ(query.find("ballast_node_speed_cost_units_per_second"), std::string::npos);
  // The age from the timestamp gauge, one series per node: no subquery.
  EXPECT_NE(query.find(
                R"(max_over_time(ballast_node_speed_timestamp_seconds{workload="primes"}[3600s]))"),
            std::string::npos);
  EXPECT_EQ(query.find(":"), std::string::npos);
  EXPECT_NE(query.find("ballast_node_throttled[3600s]"), std::string::npos);
  EXPECT_EQ(query.find("node=\""), std::string::npos);  // no per-node selector
  // A job's series are grouped by weightedjob and job_namespace, and by the
  // labels older coordinators named the job with (job, namespace), as
  // exported or renamed by a scrape without honor_labels.
  EXPECT_NE(query.find("on(weightedjob, job_namespace, job, exported_job, namespace, "
                       "exported_namespace)"),
            std::string::npos);
  EXPECT_NE(query.find("avg by (weightedjob, job_namespace, job, exported_job, namespace, "
                       "exported_namespace)"),
            std::string::npos);
}

TEST(PrometheusHistoryTest, TheLegacyFormReadsTheSpeedsOfJobsWithoutARecordedSpeed) {
  const std::string query = LegacyHistoryQuery(testing::kPrimesKey, 3600);
  EXPECT_NE(
      query.find(
          R"((last_over_time(ballast_node_speed_cost_units_per_second{workload="primes"}[3600s]) unless on(weightedjob, job_namespace, job, exported_job, namespace, exported_namespace) last_over_time(ballast_node_recorded_speed_cost_units_per_second{workload="primes"}[3600s])))"),
      std::string::npos);
  // Dated by the speeds alone, to within window / 20.
  EXPECT_NE(query.find("[3600s:180s]"), std::string::npos);
  EXPECT_EQ(query.find("ballast_node_speed_timestamp_seconds"), std::string::npos);
  // The throttled part is HistoryQuery's.
  const std::string rest = HistoryQuery(testing::kPrimesKey, 3600);
  const std::string throttled = "label_replace(avg by (node) (avg_over_time(ballast_node_throttled";
  EXPECT_EQ(query.substr(query.find(throttled)), rest.substr(rest.find(throttled)));
  EXPECT_NE(LegacyHistoryQuery(testing::kPrimesKey, 10).find("[60s:60s]"), std::string::npos);
}

TEST(PrometheusHistoryTest, QueryQuotesTheWorkloadKind) {
  EXPECT_NE(HistoryQuery(HistoryKey::FromText("a\"b\\c"), 10).find(R"(workload="a\"b\\c")"),
            std::string::npos);
  EXPECT_NE(HistoryQuery(testing::kPrimesKey, 10).find("[60s]"),
            std::string::npos);  // at least 60 s
}

TEST(PrometheusHistoryTest, ReadsPerNodeStatsAndDiscountsThrottledSamples) {
  auto history = ParseHistoryAnswer(Answer({
      Series("b", "speed", "0.5"), Series("b", "samples", "4"), Series("b", "age", "30"),
      Series("b", "throttled", "0.5"), Series("a", "speed", "1.5"), Series("a", "samples", "2"),
      Series("a", "age", "-3"),  // clocks apart: no negative age
  }));
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].node, "a");
  EXPECT_DOUBLE_EQ((*history)[0].speed, 1.5);
  EXPECT_DOUBLE_EQ((*history)[0].samples, 2);
  EXPECT_DOUBLE_EQ((*history)[0].age_seconds, 0);
  EXPECT_EQ((*history)[1].node, "b");
  EXPECT_DOUBLE_EQ((*history)[1].samples, 3);  // 4 * (1 - 0.5 / 2)
  EXPECT_DOUBLE_EQ((*history)[1].age_seconds, 30);
}

TEST(PrometheusHistoryTest, AnAbsentOrNaNAgeIsNotKnown) {
  auto history = ParseHistoryAnswer(Answer({
      Series("a", "speed", "1"),
      Series("a", "samples", "2"),  // no age: an older coordinator
      Series("b", "speed", "1"),
      Series("b", "samples", "2"),
      Series("b", "age", "NaN"),
      Series("c", "speed", "1"),
      Series("c", "samples", "2"),
      Series("c", "age", "+Inf"),
  }));
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 3u);
  EXPECT_TRUE(std::isnan((*history)[0].age_seconds));
  EXPECT_TRUE(std::isnan((*history)[1].age_seconds));
  EXPECT_TRUE(std::isinf((*history)[2].age_seconds));  // as old as can be: stale
}

TEST(PrometheusHistoryTest, LeavesOutNodesWithoutAUsableSpeed) {
  auto history = ParseHistoryAnswer(Answer({
      Series("nan", "speed", "NaN"),
      Series("nan", "samples", "2"),
      Series("zero", "speed", "0"),
      Series("zero", "samples", "2"),
      Series("inf", "speed", "+Inf"),
      Series("inf", "samples", "2"),
      Series("none", "samples", "2"),
      Series("throttled-only", "throttled", "1"),
      Series("nosamples", "speed", "1"),
  }));
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(history->empty());
}

TEST(PrometheusHistoryTest, EmptyResultIsNoHistory) {
  auto history = ParseHistoryAnswer(Answer({}));
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(history->empty());
}

TEST(PrometheusHistoryTest, PrometheusErrorIsUnavailable) {
  auto history =
      ParseHistoryAnswer(R"({"status":"error","errorType":"bad_data","error":"parse error"})");
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(history.status().message().find("parse error"), std::string::npos);
}

TEST(PrometheusHistoryTest, GarbageNamesWhatWasWrong) {
  struct Case {
    std::string body;
    const char* says;
  } cases[] = {
      {"<html>502 Bad Gateway</html>", "the Prometheus answer"},
      {"[1]", "answer: expected an object"},
      {R"({"status":"weird"})", "status: expected \"success\""},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "data: expected"},
      {R"({"status":"success","data":{"resultType":"vector"}})", "data.result: expected"},
      {Answer({R"({"metric":{"node":"a","stat":"speed"},"value":[1,2]})"}),
       "data.result[0].value: expected [time, \"number\"]"},
      {Answer({R"({"metric":{"node":"a","stat":"speed"},"value":[1,"fast"]})"}),
       "data.result[0].value"},
      {Answer({R"({"metric":{"stat":"speed"},"value":[1,"1"]})"}),
       "data.result[0].metric: expected labels node and stat"},
      {Answer({R"({"metric":{"node":"a","stat":"mood"},"value":[1,"1"]})"}),
       "data.result[0].metric.stat"},
      {Answer({R"({"metric":{"node":"a","stat":"speed"}})"}), "data.result[0].value: missing"},
      {std::string(20, '[') + std::string(20, ']'), "nested deeper than 8"},
  };
  for (const auto& c : cases) {
    auto history = ParseHistoryAnswer(c.body);
    ASSERT_FALSE(history.ok()) << c.body;
    EXPECT_EQ(history.status().code(), StatusCode::kInvalid) << c.body;
    EXPECT_NE(history.status().message().find(c.says), std::string::npos)
        << c.body << " -> " << history.status().message();
  }
}

TEST(PrometheusHistoryTest, RefusesTooLargeAnswers) {
  AnswerLimits limits;
  limits.max_bytes = 100;
  EXPECT_FALSE(ParseHistoryAnswer(Answer({Series("a", "speed", "1"), Series("a", "samples", "1"),
                                          Series("b", "speed", "1")}),
                                  limits)
                   .ok());
  limits = {};
  limits.max_series = 2;
  auto history = ParseHistoryAnswer(
      Answer({Series("a", "speed", "1"), Series("a", "samples", "1"), Series("b", "speed", "1")}),
      limits);
  ASSERT_FALSE(history.ok());
  EXPECT_NE(history.status().message().find("3 series"), std::string::npos);
}

}  // namespace
}  // namespace ballast::history
