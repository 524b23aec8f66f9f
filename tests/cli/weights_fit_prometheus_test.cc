// `ballast weights --fit URL` (cli/fit_speeds.h): the real binary against a
// real Prometheus holding a known history (testbed/real_prometheus.h),
// against one that is down, silent or answers garbage, and with the flags
// wrong; and SelectNodeSpeeds, the pure choice of the nodes to fit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/fit_speeds.h"
#include "core/fuzzy/profile.h"
#include "net/prometheus_history_source.h"
#include "tests/support/loopback_server.h"
#include "tests/support/shared_prometheus_suite.h"
#include "tests/support/shell_command.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kNodes =
    std::string(BALLAST_SOURCE_DIR) + "/examples/scenarios/pi-mixed-rack.yaml";

struct CommandRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  Clock::duration took{};
};

// Runs `ballast weights --nodes <pi-mixed-rack> <args>`.
CommandRun Weights(const std::string& args) {
  const fs::path err_file =
      fs::temp_directory_path() / ("ballast-fit-err-" + std::to_string(getpid()));
  const auto start = Clock::now();
  auto [code, out] = testing::RunShellCommand(std::string(BALLAST_BINARY) + " weights --nodes " +
                                              kNodes + " " + args + " 2>" + err_file.string());
  CommandRun run{code, out, "", Clock::now() - start};
  std::ifstream in(err_file);
  std::stringstream err;
  err << in.rdbuf();
  run.err = err.str();
  fs::remove(err_file);
  return run;
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> LinesStarting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The output after the comment lines: the fitted profile itself.
std::string ProfilePart(const std::string& out) { return out.substr(out.find("\napiVersion") + 1); }

// The speeds of the rack's nodes, with exact ratios to each job's mean.
const std::map<std::string, double> kRack = {{"pi5-a", 8},  {"pi5-b", 8},  {"pi4b-a", 4},
                                             {"pi4b-b", 4}, {"pi4b-c", 2}, {"pi3b-a", 1},
                                             {"pi3b-b", 1}};

class WeightsFitPrometheusTest : public testing::SharedPrometheusSuite<WeightsFitPrometheusTest> {
 protected:
  // Two primes jobs over the whole rack, two and one hour ago, the second at
  // three times the first's scale; a job on two nodes the rack no longer
  // has; a matmul job on one node. pi3b-b was throttled throughout.
  static void SetUpTestSuite() {
    now_ = static_cast<double>(std::time(nullptr));
    std::string samples;
    for (const auto& [job, ago, scale] :
         {std::tuple{"first", 7200.0, 1.0}, std::tuple{"second", 3600.0, 3.0}}) {
      for (const auto& [node, speed] : kRack) {
        for (int k = 0; k < 5; ++k) {
          samples += testing::SpeedSample(job, "primes", node, speed * scale * (0.6 + k / 10.0),
                                          now_ - ago - (4 - k) * 15);
        }
      }
    }
    samples += testing::SpeedSample("old", "primes", "gone-a", 5, now_ - 5000);
    samples += testing::SpeedSample("old", "primes", "gone-b", 7, now_ - 5000);
    samples += testing::SpeedSample("mm", "matmul", "pi5-a", 3, now_ - 600);
    for (int k = 0; k <= 120; ++k) {
      samples += testing::ThrottledSample("pi3b-b", 1, now_ - 7200 + k * 60);
    }
    StartPrometheus(samples);
  }
};

TEST_F(WeightsFitPrometheusTest, FitsTheSpeedsTheHistoryQueryAnswers) {
  const CommandRun run = Weights("--fit " + server_->url() + " --workload primes");
  ASSERT_EQ(run.code, 0) << run.err << server_->Log();
  const auto header = LinesStarting(run.out, "# speeds: ");
  ASSERT_EQ(header.size(), 1u) << run.out;
  EXPECT_EQ(
      header[0].rfind(
          "# speeds: Prometheus at " + server_->url() + ", workload primes, the 7d up to ", 0),
      0u)
      << header[0];
  // Each node's speed relative to its job's mean; samples: two jobs, pi3b-b's
  // halved for its throttling.
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"pi5-a", {"2", "2"}},    {"pi5-b", {"2", "2"}},    {"pi4b-a", {"1", "2"}},
      {"pi4b-b", {"1", "2"}},   {"pi4b-c", {"0.5", "2"}}, {"pi3b-a", {"0.25", "2"}},
      {"pi3b-b", {"0.25", "1"}}};
  size_t rows = 0;
  for (const std::string& line : LinesStarting(run.out, "# pi")) {
    const auto words = Words(line);
    ASSERT_EQ(words.size(), 10u) << line;
    ASSERT_TRUE(expected.contains(words[1])) << line;
    EXPECT_EQ(words[2], expected.at(words[1]).first) << line;
    EXPECT_EQ(words[3], expected.at(words[1]).second) << line;
    ++rows;
  }
  EXPECT_EQ(rows, expected.size()) << run.out;
  // Prometheus knows two nodes the rack does not have.
  EXPECT_NE(run.err.find("warning: Prometheus has speeds of 2 node(s) not in --nodes, left out of "
                         "the fit: gone-a, gone-b"),
            std::string::npos)
      << run.err;
  auto profile = fuzzy::ParseProfile(run.out, "fitted.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString() << "\n" << run.out;
  EXPECT_EQ(profile->name, "raspberry-pi-fitted");
}

// The same speeds as a file fit to the same profile, with the same errors.
TEST_F(WeightsFitPrometheusTest, FitsAsTheSameSpeedsInAFileDo) {
  net::PrometheusHistoryOptions options;
  options.url = server_->url();
  options.timeout = std::chrono::seconds(10);
  auto source = net::PrometheusHistory::Create(options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto history = (*source)->History(history::HistoryKey(workload::WorkloadKind::kPrimes), now_);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  const fs::path file =
      fs::temp_directory_path() / ("ballast-fit-speeds-" + std::to_string(getpid()));
  {
    std::ofstream speeds(file);
    speeds.precision(17);
    for (const auto& node : *history) {
      if (kRack.contains(node.node)) speeds << node.node << ": " << node.speed << "\n";
    }
  }
  const CommandRun from_file = Weights("--fit " + file.string());
  const CommandRun from_url = Weights("--fit " + server_->url() + " --workload primes");
  fs::remove(file);
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  ASSERT_EQ(from_url.code, 0) << from_url.err;
  EXPECT_EQ(ProfilePart(from_url.out), ProfilePart(from_file.out));
  const auto file_rows = LinesStarting(from_file.out, "# pi");
  const auto url_rows = LinesStarting(from_url.out, "# pi");
  ASSERT_EQ(url_rows.size(), file_rows.size());
  for (size_t i = 0; i < url_rows.size(); ++i) {
    auto words = Words(url_rows[i]);
    words.erase(words.begin() + 3);  // the samples column
    EXPECT_EQ(words, Words(file_rows[i])) << url_rows[i] << "\n" << file_rows[i];
  }
  EXPECT_EQ(LinesStarting(from_url.out, "# rms"), LinesStarting(from_file.out, "# rms"));
}

TEST_F(WeightsFitPrometheusTest, FewerThanTwoNodesWithASpeedIsAnError) {
  const std::pair<std::string, std::string> cases[] = {
      {"--workload matmul", "1 node(s) of --nodes have a speed: pi5-a; the fit needs two or more"},
      {"--workload exec", "0 node(s) of --nodes have a speed; the fit needs two or more"},
      {"--workload primes --window 30m", "0 node(s) of --nodes have a speed;"},
  };
  for (const auto& [flags, says] : cases) {
    const CommandRun run = Weights("--fit " + server_->url() + " " + flags);
    EXPECT_EQ(run.code, 1) << flags << ": " << run.err;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_NE(run.err.find("ballast: --fit " + server_->url()), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << flags << ": " << run.err;
  }
}

TEST(WeightsFitFaultsTest, PrometheusDownIsAnErrorNamingTheUrlAtOnce) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  const CommandRun run = Weights("--fit " + url + " --workload primes");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("ballast: --fit " + url +
                         " (workload primes, --window 7d): Prometheus "
                         "gave no speeds: "),
            std::string::npos)
      << run.err;
  EXPECT_LT(run.took, std::chrono::seconds(4));  // refused; the timeout is 5 s
}

TEST(WeightsFitFaultsTest, PrometheusThatNeverAnswersIsAnErrorAfterTheTimeout) {
  testing_support::LoopbackServer silent("");
  const CommandRun run = Weights("--fit " + silent.url() + " --workload primes --timeout 0.5");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("--fit " + silent.url()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("no answer within 500 ms"), std::string::npos) << run.err;
  EXPECT_GE(run.took, std::chrono::milliseconds(500));
  EXPECT_LT(run.took, std::chrono::seconds(4)) << "the process outlived its timeout";
}

TEST(WeightsFitFaultsTest, GarbageIsAnErrorNamingTheUrlAndWhatWasWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {testing_support::HttpOk("<html>hello</html>"), "the Prometheus answer"},
      {testing_support::HttpOk(
           R"({"status":"success","data":{"resultType":"matrix","result":[]}})"),
       "data: expected a vector result"},
      {"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
       "HTTP 503"},
  };
  for (const auto& [reply, says] : cases) {
    testing_support::LoopbackServer server(reply);
    const CommandRun run = Weights("--fit " + server.url() + " --workload primes");
    EXPECT_EQ(run.code, 1) << run.err;
    EXPECT_NE(run.err.find("--fit " + server.url()), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << run.err;
  }
}

TEST(WeightsFitFlagsTest, WrongFlagsAreRefusedNamingTheFlag) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  const std::string speeds =
      std::string(BALLAST_SOURCE_DIR) + "/examples/speeds/pi-mixed-rack.yaml";
  const std::pair<std::string, std::string> cases[] = {
      {"--fit " + url, "--workload: required with --fit URL"},
      {"--fit " + url + " --workload sorting", "--workload: expected one of primes, matmul, exec"},
      {"--fit " + url + " --workload primes --window 7x",
       "--window: expected seconds or a duration"},
      {"--fit " + url + " --workload primes --window 30", "--window: expected at least 60 s"},
      {"--fit " + url + " --workload primes --timeout 0", "--timeout: expected seconds in (0, 60]"},
      {"--fit http:// --workload primes", "ballast: --fit: "},
      {"--fit " + speeds + " --workload primes", "--workload: only with --fit URL"},
      {"--fit " + speeds + " --window 7d", "--window: only with --fit URL"},
      {"--fit no-such-file.yaml", "no-such-file.yaml: no such file"},
  };
  for (const auto& [flags, says] : cases) {
    const CommandRun run = Weights(flags);
    EXPECT_EQ(run.code, 2) << flags << ": " << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << flags << ": " << run.err;
  }
}

// SelectNodeSpeeds: the nodes of --nodes that have a speed, and warnings.
std::vector<fuzzy::NodeFacts> Facts(const std::vector<std::string>& names) {
  std::vector<fuzzy::NodeFacts> nodes;
  for (const auto& name : names) nodes.push_back({name, {}});
  return nodes;
}

TEST(SelectNodeSpeedsTest, KeepsTheNodesOfNodesAndWarnsOfTheRest) {
  const std::vector<fuzzy::NodeHistory> history = {
      {"a", 2, 3, 10}, {"b", 1, 1.5, 10}, {"old", 4, 1, 10}};
  auto speeds = SelectNodeSpeeds(history, Facts({"a", "b", "c"}), "Prometheus at x");
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  EXPECT_EQ(speeds->speeds, (std::map<std::string, double>{{"a", 2}, {"b", 1}}));
  EXPECT_EQ(speeds->samples, (std::map<std::string, double>{{"a", 3}, {"b", 1.5}}));
  EXPECT_EQ(speeds->origin, "Prometheus at x");
  EXPECT_EQ(speeds->warnings,
            (std::vector<std::string>{
                "Prometheus has speeds of 1 node(s) not in --nodes, left out of the fit: old",
                "1 node(s) of --nodes have no speed in Prometheus, left out of the fit: c"}));
}

TEST(SelectNodeSpeedsTest, AWarningNamesTenNodesThenCounts) {
  std::vector<fuzzy::NodeHistory> history = {{"a", 1, 1, 0}, {"b", 1, 1, 0}};
  for (int i = 0; i < 12; ++i) history.push_back({"old-" + std::to_string(10 + i), 1, 1, 0});
  auto speeds = SelectNodeSpeeds(history, Facts({"a", "b"}), "");
  ASSERT_TRUE(speeds.ok());
  ASSERT_EQ(speeds->warnings.size(), 1u);
  EXPECT_NE(speeds->warnings[0].find("12 node(s) not in --nodes"), std::string::npos);
  EXPECT_NE(speeds->warnings[0].find("old-19 and 2 more"), std::string::npos)
      << speeds->warnings[0];
}

TEST(SelectNodeSpeedsTest, FewerThanTwoNodesIsUnavailableNamingThem) {
  auto one = SelectNodeSpeeds({{"a", 1, 1, 0}, {"old", 1, 1, 0}}, Facts({"a", "b"}), "");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(one.status().message(),
            "1 node(s) of --nodes have a speed: a (and 1 node(s) not in --nodes: old); the fit "
            "needs two or more (run the workload on more nodes, or widen --window)");
  EXPECT_FALSE(SelectNodeSpeeds({}, Facts({"a", "b"}), "").ok());
}

TEST(SelectNodeSpeedsTest, ANameThatIsNoNodesNameIsQuotedInTheWarning) {
  auto speeds = SelectNodeSpeeds({{"a", 1, 1, 0}, {"b", 1, 1, 0}, {"x\x1b[2J", 1, 1, 0}},
                                 Facts({"a", "b"}), "");
  ASSERT_TRUE(speeds.ok());
  ASSERT_EQ(speeds->warnings.size(), 1u);
  EXPECT_EQ(speeds->warnings[0].find('\x1b'), std::string::npos) << speeds->warnings[0];
  EXPECT_NE(speeds->warnings[0].find("\\x1b"), std::string::npos) << speeds->warnings[0];
}

}  // namespace
}  // namespace ballast::cli
