// History as the prior end to end (docs/operator.md#history-as-the-prior):
// `ballast operator` against the e2e control plane and its emulated Pis. A
// second job on the same nodes starts from the speeds the first recorded in
// the operator's store; with Prometheus down, a job starts at once on the
// fuzzy weights and an Event says why.
// CTest names: operator_e2e_HistoryTest.<Test>, label e2e.
#include "testbed/real_prometheus.h"
#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

const kube::ResourceRef kConfigMaps = {"", "v1", "configmaps", true, "", ""};

class HistoryTest : public OperatorTest {
 protected:
  // status.nodes[] by node name.
  static std::map<std::string, json> Rows(const json& job) {
    std::map<std::string, json> rows;
    for (const auto& row : StatusOf(job).value("nodes", json::array())) rows[row["name"]] = row;
    return rows;
  }
};

TEST_F(HistoryTest, ASecondJobOnTheSameNodesStartsFromTheFirstJobsRecordedSpeeds) {
  ASSERT_FALSE(CreateJob(PrimesJob("first", kSmallLimit)).is_null());
  auto first = WaitSucceeded("first");
  ASSERT_TRUE(first);
  ExpectCompleteAndExact(*first, kSmallLimit);
  const auto first_rows = Rows(*first);
  ASSERT_EQ(first_rows.size(), kSeed000Weights.size());
  for (const auto& [node, row] : first_rows) {
    // Nothing known before: every prior is the fuzzy weight.
    EXPECT_EQ(row["prior"]["source"], "profile") << row;
    EXPECT_EQ(row["prior"]["value"], kSeed000Weights.at(node)) << row;
    EXPECT_GT(row.value("measuredSpeed", 0.0), 0) << row;
    EXPECT_TRUE(row.contains("priorError")) << row;
  }
  // The store holds what it measured, per node (the test's --history-configmap).
  ASSERT_TRUE(Poll(
      [&] {
        auto store = client_->Get(kConfigMaps.In(ns_).Named("history"));
        if (!store.ok()) return false;
        const std::string text =
            store->value("/data"_json_pointer, json::object()).value("speeds.json", "");
        return text.find("pi3b-0") != std::string::npos && text.find("primes") != std::string::npos;
      },
      seconds(10)))
      << "the first job's speeds are not in ConfigMap " << ns_ << "/history";

  // A restarted operator reads it back: the store survives the restart.
  ASSERT_NO_FATAL_FAILURE(RestartWith({}));
  ASSERT_FALSE(CreateJob(PrimesJob("second", kSmallLimit)).is_null());
  auto second = WaitSucceeded("second");
  ASSERT_TRUE(second);
  ExpectCompleteAndExact(*second, kSmallLimit);
  for (const auto& [node, row] : Rows(*second)) {
    const std::string source = row["prior"]["source"];
    EXPECT_TRUE(source == "history" || source == "blended") << row;
    EXPECT_EQ(row["prior"]["samples"], 1) << row;
    EXPECT_GE(row["prior"]["ageSeconds"], 0) << row;
    EXPECT_GT(row["prior"]["value"], 0) << row;
  }
  auto started = FindEvent("second", "Started");
  ASSERT_TRUE(started);
  EXPECT_NE(started->value("message", "")
                .find("priors from history on 3 of 3 nodes (ConfigMap " + ns_ + "/history)"),
            std::string::npos)
      << started->value("message", "");
  EXPECT_FALSE(FindEvent("second", "HistoryUnavailable"));
}

TEST_F(HistoryTest, WithPrometheusAJobStartsFromTheSpeedsItHolds) {
  // Three earlier primes jobs on seed 000's boards, as the coordinator's
  // gauge was scraped: pi3b-0 half as fast as its weight says. Without
  // ballast_node_speed_timestamp_seconds, as an older coordinator's: the
  // operator dates them by its second query, the subquery's.
  const double now = static_cast<double>(std::time(nullptr));
  const std::string samples =
      testing::EarlierPrimesJobs({{"pi4b-0", 50}, {"pi4b-1", 50}, {"pi3b-0", 5}}, now);
  std::string why;
  auto prometheus = testing::RealPrometheus::Start(samples, &why);
  ASSERT_TRUE(prometheus) << why;
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--prometheus-url", prometheus->url()}));
  ASSERT_FALSE(CreateJob(PrimesJob("primes", kSmallLimit)).is_null());
  auto job = WaitSucceeded("primes");
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
  const auto rows = Rows(*job);
  ASSERT_EQ(rows.size(), kSeed000Weights.size());
  // The subquery's age is short by up to one of its steps, never longer than
  // the newest sample's: an hour and the seconds this test has taken.
  const double newest_age = static_cast<double>(std::time(nullptr)) - now + 3600;
  for (const auto& [node, row] : rows) {
    EXPECT_NE(row["prior"]["source"], "profile") << row;
    EXPECT_EQ(row["prior"]["samples"], 3) << row;
    EXPECT_LE(row["prior"]["ageSeconds"].get<double>(), newest_age) << row;
  }
  // History says pi3b-0 is a tenth of a Pi 4B, the labels a fifth: the
  // prior moved toward the history.
  const double ratio = rows.at("pi3b-0")["prior"]["value"].get<double>() /
                       rows.at("pi4b-0")["prior"]["value"].get<double>();
  EXPECT_LT(ratio, 1.0 / 5) << rows.at("pi3b-0") << rows.at("pi4b-0");
  auto started = FindEvent("primes", "Started");
  ASSERT_TRUE(started);
  EXPECT_NE(
      started->value("message", "")
          .find("priors from history on 3 of 3 nodes (Prometheus at " + prometheus->url() + ")"),
      std::string::npos)
      << started->value("message", "");
  EXPECT_FALSE(FindEvent("primes", "HistoryUnavailable"));
}

TEST_F(HistoryTest, WithPrometheusDownAJobStartsOnTheFuzzyWeightsAndAnEventSaysWhy) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--prometheus-url", url, "--prometheus-timeout", "2"}));
  ASSERT_FALSE(CreateJob(PrimesJob("primes", kSmallLimit)).is_null());
  auto event = WaitEvent("primes", "HistoryUnavailable");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->value("type", ""), "Warning");
  const std::string message = event->value("message", "");
  EXPECT_NE(message.find("no history of primes speeds from Prometheus at " + url),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the job starts on the fuzzy weights"), std::string::npos) << message;
  auto job = WaitSucceeded("primes");
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
  for (const auto& [node, row] : Rows(*job)) {
    EXPECT_EQ(row["prior"]["source"], "profile") << row;
    EXPECT_EQ(row["prior"]["value"], kSeed000Weights.at(node)) << row;
  }
}

TEST_F(HistoryTest, WithPrometheusSilentTheJobStartsAfterTheTimeout) {
  // A port that accepts and never answers (the listen backlog takes the connection).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--prometheus-url", url, "--prometheus-timeout", "1"}));
  ASSERT_FALSE(CreateJob(PrimesJob("primes", kSmallLimit)).is_null());
  auto event = WaitEvent("primes", "HistoryUnavailable");
  ASSERT_TRUE(event);
  EXPECT_NE(event->value("message", "").find("no answer within 1000 ms"), std::string::npos)
      << event->value("message", "");
  auto job = WaitSucceeded("primes");
  close(fd);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
}

}  // namespace
}  // namespace ballast::operator_e2e
