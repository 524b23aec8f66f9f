// PrometheusHistory (operator/controller/prometheus_history_source.h) against
// a real Prometheus that holds a known history (tests/support/
// real_prometheus.h), and against loopback servers that fail as a Prometheus
// can: down (nothing listens), slow (never answers), garbage, too long.
#include "operator/controller/prometheus_history_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "support/loopback_server.h"
#include "support/real_prometheus.h"

namespace ballast::controller {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double WallNow() { return static_cast<double>(std::time(nullptr)); }

std::unique_ptr<PrometheusHistory> SourceAt(const std::string& url, milliseconds timeout,
                                            double window_s = 86400,
                                            milliseconds retry_after = milliseconds(0)) {
  PrometheusHistoryOptions options;
  options.url = url;
  options.timeout = timeout;
  options.window_seconds = window_s;
  options.retry_after = retry_after;
  auto source = PrometheusHistory::Create(options);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  return source.ok() ? std::move(*source) : nullptr;
}

using testing_support::LoopbackServer;

std::string Ok(const std::string& body) { return testing_support::HttpOk(body); }

class RealPrometheusTest : public ::testing::Test {
 protected:
  // Two primes jobs an hour apart, a matmul job; node n2 throttled for the
  // first half of the last 2 hours. Each job's gauge converges from the
  // prior to the node's speed; the last value is what counts.
  static void SetUpTestSuite() {
    now_ = WallNow();
    std::string samples;
    const struct {
      const char* job;
      double end_ago;
      std::map<std::string, double> speeds;
    } jobs[] = {{"first", 7200, {{"n1", 10}, {"n2", 5}}},
                {"second", 3600, {{"n1", 20}, {"n2", 10}, {"n3", 30}}}};
    for (const auto& job : jobs) {
      for (const auto& [node, speed] : job.speeds) {
        for (int k = 0; k < 20; ++k) {
          samples += testing::SpeedSample(job.job, "primes", node, speed * (0.5 + k / 38.0),
                                          now_ - job.end_ago - (19 - k) * 15);
        }
      }
    }
    samples += testing::SpeedSample("other", "matmul", "n1", 3, now_ - 600);
    for (int k = 0; k < 120; ++k) {
      samples += testing::ThrottledSample("n2", k < 60 ? 1 : 0, now_ - 7200 + k * 60);
    }
    std::string why;
    server_ = testing::RealPrometheus::Start(samples, &why).release();
    if (!server_) why_ = new std::string(why);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr) << *why_; }

  static inline double now_ = 0;
  static inline testing::RealPrometheus* server_ = nullptr;
  static inline std::string* why_ = nullptr;
};

TEST_F(RealPrometheusTest, OneQueryAnswersEveryNodesRelativeSpeedSamplesAndAge) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 10000);
  const HistoryLookup lookup = source->Lookup("primes", {"n1", "n2", "n3", "n4"}, now_);
  ASSERT_EQ(lookup.trouble, "") << server_->Log();
  ASSERT_EQ(lookup.nodes.size(), 3u);
  // Relative to each job's mean: first n1 10/7.5, n2 5/7.5; second n1 1, n2 0.5, n3 1.5.
  const std::map<std::string, double> speed = {
      {"n1", (10 / 7.5 + 1) / 2}, {"n2", (5 / 7.5 + 0.5) / 2}, {"n3", 1.5}};
  // n2's samples count 1 - 0.5 / 2: it was throttled half the time the window saw.
  const std::map<std::string, double> samples = {{"n1", 2}, {"n2", 1.5}, {"n3", 1}};
  for (const auto& node : lookup.nodes) {
    EXPECT_NEAR(node.speed, speed.at(node.node), 1e-9) << node.node;
    EXPECT_NEAR(node.samples, samples.at(node.node), 1e-9) << node.node;
    // The newest sample is an hour old; the age is up to one step (10000 s / 20) less.
    EXPECT_LE(node.age_seconds, 3600) << node.node;
    EXPECT_GE(node.age_seconds, 3600 - 500) << node.node;
  }
  EXPECT_NE(lookup.origin.find(server_->url()), std::string::npos);
}

TEST_F(RealPrometheusTest, AnotherWorkloadKindHasItsOwnHistory) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  const HistoryLookup lookup = source->Lookup("matmul", {"n1", "n2"}, now_);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 1u);
  EXPECT_EQ(lookup.nodes[0].node, "n1");
  EXPECT_DOUBLE_EQ(lookup.nodes[0].speed, 1);  // alone in its job
  EXPECT_TRUE(source->Lookup("exec", {"n1"}, now_).nodes.empty());
}

TEST_F(RealPrometheusTest, AWindowThatEndsBeforeTheHistoryFindsNone) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 1800);
  const HistoryLookup lookup = source->Lookup("primes", {"n1", "n2", "n3"}, now_);
  EXPECT_EQ(lookup.trouble, "");
  EXPECT_TRUE(lookup.nodes.empty());
}

// History (what `ballast weights --fit URL` asks): every node of the answer,
// none filtered out, and a failure as a Status rather than trouble.
TEST_F(RealPrometheusTest, HistoryAnswersEveryNodePrometheusKnows) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 10000);
  auto history = source->History("primes", now_);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  std::vector<std::string> nodes;
  for (const auto& node : *history) nodes.push_back(node.node);
  EXPECT_EQ(nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_NEAR((*history)[2].speed, 1.5, 1e-9);
  auto down = SourceAt("http://127.0.0.1:" + std::to_string(testing::UnusedLoopbackPort()),
                       milliseconds(2000))
                  ->History("primes", now_);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);
}

TEST_F(RealPrometheusTest, AQueryPrometheusRefusesIsUnavailableWithItsError) {
  auto source = SourceAt(server_->url(), milliseconds(5000));
  auto body = source->Query("sum(", now_);
  ASSERT_TRUE(body.ok()) << body.status().ToString();  // 400 with Prometheus's error
  auto answer = history::ParseHistoryAnswer(*body);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("bad_data"), std::string::npos)
      << answer.status().message();
}

TEST(PrometheusHistoryFaultsTest, PrometheusDownIsTroubleAtOnce) {
  auto source = SourceAt("http://127.0.0.1:" + std::to_string(testing::UnusedLoopbackPort()),
                         milliseconds(2000));
  const auto start = Clock::now();
  const HistoryLookup lookup = source->Lookup("primes", {"n1"}, WallNow());
  EXPECT_LT(Clock::now() - start, milliseconds(2000));  // refused, not timed out
  EXPECT_TRUE(lookup.nodes.empty());
  EXPECT_NE(lookup.trouble, "");
  EXPECT_EQ(lookup.trouble.find("no answer within"), std::string::npos) << lookup.trouble;
}

TEST(PrometheusHistoryFaultsTest, PrometheusThatNeverAnswersIsTroubleAfterTheTimeout) {
  LoopbackServer silent("");
  auto source = SourceAt(silent.url(), milliseconds(300));
  const auto start = Clock::now();
  const HistoryLookup lookup = source->Lookup("primes", {"n1"}, WallNow());
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(5000));  // bounded, whatever the server does
  EXPECT_EQ(lookup.trouble, "no answer within 300 ms");
  EXPECT_TRUE(lookup.nodes.empty());
}

TEST(PrometheusHistoryFaultsTest, AfterAFailureTheNextLookupsAreTroubleAtOnceUntilRetryAfter) {
  LoopbackServer silent("");
  auto source = SourceAt(silent.url(), milliseconds(300), 86400, milliseconds(1500));
  EXPECT_EQ(source->Lookup("primes", {"n1"}, WallNow()).trouble, "no answer within 300 ms");
  const auto start = Clock::now();
  const HistoryLookup again = source->Lookup("primes", {"n1"}, WallNow());
  EXPECT_LT(Clock::now() - start, milliseconds(300));  // not asked: no wait
  EXPECT_EQ(again.trouble, "no answer within 300 ms (0 s ago; not asked again for 1 s)");
  std::this_thread::sleep_for(milliseconds(1600));
  const auto retry = Clock::now();
  EXPECT_EQ(source->Lookup("primes", {"n1"}, WallNow()).trouble, "no answer within 300 ms");
  EXPECT_GE(Clock::now() - retry, milliseconds(300));  // asked again
}

TEST(PrometheusHistoryFaultsTest, GarbageIsTroubleNamingWhatWasWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {Ok("<html>hello</html>"), "the Prometheus answer"},
      {Ok(R"({"status":"success","data":{"resultType":"matrix","result":[]}})"),
       "data: expected a vector result"},
      {Ok(std::string(100, '[')), "nested deeper"},
      {"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
       "HTTP 503"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 20000000\r\nConnection: close\r\n\r\n{",
       "more than the"},
      {"not http at all\r\n\r\n", ""},
  };
  for (const auto& [reply, says] : cases) {
    LoopbackServer server(reply);
    auto source = SourceAt(server.url(), milliseconds(2000));
    const HistoryLookup lookup = source->Lookup("primes", {"n1"}, WallNow());
    EXPECT_TRUE(lookup.nodes.empty()) << reply.substr(0, 80);
    ASSERT_NE(lookup.trouble, "") << reply.substr(0, 80);
    EXPECT_NE(lookup.trouble.find(says), std::string::npos)
        << reply.substr(0, 80) << " -> " << lookup.trouble;
  }
}

TEST(PrometheusHistoryFaultsTest, AnAnswerLongerThanTheBoundIsRefusedWhileReading) {
  // Chunked: no Content-Length to refuse it by; the reader stops at the bound.
  std::string reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  const std::string chunk(1 << 16, ' ');
  for (int i = 0; i < 80; ++i) reply += "10000\r\n" + chunk + "\r\n";  // 5 MiB
  reply += "0\r\n\r\n";
  LoopbackServer server(reply);
  auto source = SourceAt(server.url(), milliseconds(5000));
  const HistoryLookup lookup = source->Lookup("primes", {"n1"}, WallNow());
  EXPECT_NE(lookup.trouble.find("longer than the 4194304 bytes allowed"), std::string::npos)
      << lookup.trouble;
}

TEST(PrometheusHistoryFaultsTest, CreateRefusesWhatIsNotAnHttpUrl) {
  for (const char* url : {"prometheus:9090", "ftp://host/", "http://", ""}) {
    PrometheusHistoryOptions options;
    options.url = url;
    auto source = PrometheusHistory::Create(options);
    ASSERT_FALSE(source.ok()) << url;
    EXPECT_NE(source.status().message().find("--prometheus-url"), std::string::npos);
  }
  PrometheusHistoryOptions options;
  options.url = "ftp://host/";
  options.flag = "--fit";
  auto source = PrometheusHistory::Create(options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().message().rfind("--fit: ", 0), 0u) << source.status().message();
}

}  // namespace
}  // namespace ballast::controller
