// The run-to-run history of `ballast run --history` (cli/run/run_history.h):
// real runs on this machine recorded as the operator records a job, the
// second told what the first measured; a file of the earlier form still read.
#include "cli/run/run_history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/run/local_runner.h"
#include "cli/scenario_loader.h"
#include "coordinator/recorded_speeds.h"
#include "core/fuzzy/profile.h"
#include "core/history/history_file.h"
#include "tests/support/history_keys.h"
#include "tests/support/primes_workload.h"
#include "tests/support/shell_command.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// Primes below 150,000 by trial division: about 2 s of computing on each of
// the seed-000 nodes, past the 0.5 s a recorded speed needs and short of the
// 5 s a verdict against the baseline needs.
constexpr uint64_t kRecordedLimit = 150000;

LocalRunOptions PrimesOptions() {
  job::JobSpec job;
  job.name = "history-primes";
  job.workload = testing::PrimesWorkload(kRecordedLimit);
  job.policy = {balance::AdaptiveOptions{}, ""};
  auto cluster = DefaultCluster();
  EXPECT_TRUE(cluster.ok());
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  EXPECT_TRUE(profile.ok());
  return {std::move(job), *cluster, *profile, BALLAST_WORKER_BINARY, true, "", nullptr};
}

// The first run is recorded as the operator records a job: one sample per
// node it keeps, relative to their mean; the second run's policy is told
// those ratios on the fuzzy weights' scale, one job's worth of credibility.
TEST(RunHistoryTest, TheSecondRunStartsFromWhatTheFirstMeasured) {
  LocalRunOptions options = PrimesOptions();
  auto weights = ClusterWeights(options.profile, options.cluster);
  ASSERT_TRUE(weights.ok());
  for (const fuzzy::NodePrior& prior : RunPriors(*weights, {}, testing::kPrimesKey, 1000)) {
    EXPECT_EQ(prior.source, fuzzy::PriorSource::kProfile) << prior.node;
  }
  auto first = RunLocal(options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const history::SpeedStore learned = Learn({}, testing::kPrimesKey, *first, 1000);
  const auto recorded = coordinator::SpeedsToRecord(first->view).speeds;
  ASSERT_GE(recorded.size(), 2u) << "the nodes computed too briefly to be recorded";
  double mean = 0;
  for (const auto& [node, speed] : recorded) mean += speed / static_cast<double>(recorded.size());
  for (const auto& worker : first->view.workers) {
    auto it = recorded.find(worker.name);
    if (it == recorded.end()) {
      EXPECT_FALSE(learned.nodes.contains(worker.name)) << worker.name;
      continue;
    }
    const auto& samples = learned.nodes.at(worker.name).at("primes");
    ASSERT_EQ(samples.size(), 1u) << worker.name;
    EXPECT_NEAR(samples[0].speed, it->second / mean, 1e-12) << worker.name;
    EXPECT_EQ(samples[0].at, 1000);
  }
  const auto priors = RunPriors(*weights, learned, testing::kPrimesKey, 1060);
  for (const fuzzy::NodePrior& prior : priors) {
    options.priors.push_back({prior.node, prior.value, prior.credibility});
    if (!recorded.contains(prior.node)) {
      EXPECT_EQ(prior.source, fuzzy::PriorSource::kProfile) << prior.node;
      continue;
    }
    EXPECT_EQ(prior.source, fuzzy::PriorSource::kBlended) << prior.node;
    EXPECT_NEAR(prior.credibility, std::sqrt(1 / history::kFullTrustJobs), 1e-12);
    EXPECT_DOUBLE_EQ(prior.samples, 1);
    EXPECT_DOUBLE_EQ(prior.age_seconds, 60);
    EXPECT_TRUE(std::isfinite(prior.value) && prior.value > 0);
  }
  // Another history key has none.
  EXPECT_EQ(RunPriors(*weights, learned, testing::kExecKey, 1060)[0].source,
            fuzzy::PriorSource::kProfile);
  auto second = RunLocal(options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  for (size_t i = 0; i < priors.size(); ++i) {
    EXPECT_DOUBLE_EQ(second->view.workers[i].prior_speed, priors[i].value);
  }
  EXPECT_EQ(second->view.result.Summary(), first->view.result.Summary());
  // A second job adds a sample to each node it records.
  const history::SpeedStore twice = Learn(learned, testing::kPrimesKey, *second, 1100);
  for (const auto& [node, speed] : coordinator::SpeedsToRecord(second->view).speeds) {
    EXPECT_EQ(twice.nodes.at(node).at("primes").size(), recorded.contains(node) ? 2u : 1u);
  }
}

// A node judged Slow enters at the edge of its band (health::WinsorizeSpeeds),
// as the operator enters it.
TEST(RunHistoryTest, ASlowNodeIsRecordedAtTheEdgeOfItsBand) {
  auto run = RunLocal(PrimesOptions());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const auto recorded = coordinator::SpeedsToRecord(run->view).speeds;
  ASSERT_GE(recorded.size(), 2u);
  const auto& [slow_node, measured] = *recorded.begin();
  health::NodeDeviation slow;
  slow.node = slow_node;
  slow.verdict = health::Verdict::kSlow;
  slow.measured = measured;
  slow.baseline = 2 * measured;  // measured at half its baseline
  slow.ratio = 0.5;
  slow.slow_below = 0.75;
  const history::SpeedStore plain = Learn({}, testing::kPrimesKey, *run, 1000);
  const history::SpeedStore winsorized = Learn({}, testing::kPrimesKey, *run, 1000, {slow});
  const auto relative = [&](const history::SpeedStore& store) {
    const std::string other = std::next(recorded.begin())->first;
    return store.nodes.at(slow_node).at("primes")[0].speed /
           store.nodes.at(other).at("primes")[0].speed;
  };
  EXPECT_NEAR(relative(winsorized), 1.5 * relative(plain), 1e-9);
}

fs::path HistoryTestDir() {
  const fs::path dir =
      fs::temp_directory_path() /
      ("ballast-history-" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml") << "workload:\n  primes: {limit: " << kRecordedLimit << "}\n";
  std::ofstream(dir / "small.yaml") << "workload:\n  primes: {limit: 20000}\n";
  return dir;
}

std::string ReadText(const fs::path& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), {}};
}

// The line "prior <node> ..." of a run's table ("" if absent).
std::string PriorLine(const std::string& out, const std::string& node) {
  const size_t line = out.find("prior " + node + " ");
  return line == std::string::npos ? "" : out.substr(line, out.find('\n', line) - line);
}

// The file is the store's form; every node the run recorded is read back by
// the second run, with one job's credibility.
TEST(RunHistoryCliTest, RunWritesTheHistoryAndReadsItBack) {
  const fs::path dir = HistoryTestDir();
  fs::remove(dir / "h.json");
  const std::string command = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                              " --history " + (dir / "h.json").string() + " 2>&1";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(PriorLine(out, "pi4b-master"), "prior pi4b-master        profile 5") << out;
  const std::string text = ReadText(dir / "h.json");
  EXPECT_EQ(text.rfind(R"({"nodes":{)", 0), 0u) << text;
  auto store = history::ReadHistoryFile(text, "h.json", {});
  ASSERT_TRUE(store.ok()) << store.status().ToString() << "\n" << text;
  std::set<std::string> recorded;
  for (const auto& [node, keys] : store->nodes) {
    ASSERT_EQ(keys.size(), 1u) << text;
    EXPECT_EQ(keys.at("primes").size(), 1u) << text;
    recorded.insert(node);
  }
  EXPECT_GE(recorded.size(), 2u) << out << text;
  const auto [again, second] = testing::RunShellCommand(command);
  ASSERT_EQ(again, 0) << second;
  for (const std::string node : {"pi4b-master", "pi4b-worker", "pi3b-worker"}) {
    const std::string prior = PriorLine(second, node);
    if (recorded.count(node) == 0) {
      EXPECT_NE(prior.find("profile"), std::string::npos) << prior;
    } else {
      EXPECT_NE(prior.find("blended"), std::string::npos) << prior;
      EXPECT_NE(prior.find("(Z 0.58, 1 samples, "), std::string::npos) << prior;
    }
  }
  // Both runs state their energy and judge every node against its own
  // baseline: the first has none; the second's nodes compute under the 5 s
  // a verdict needs.
  for (const std::string* run : {&out, &second}) {
    EXPECT_NE(run->find("energy: "), std::string::npos) << *run;
    EXPECT_NE(run->find("node health, against each node's own baseline (--history):"),
              std::string::npos)
        << *run;
    for (const std::string node : {"pi4b-master", "pi4b-worker", "pi3b-worker"}) {
      EXPECT_NE(run->find("\n  " + node + ": no verdict ("), std::string::npos) << node << *run;
    }
  }
  EXPECT_NE(out.find("  pi4b-master: no verdict (no-history)"), std::string::npos) << out;
  auto twice = history::ReadHistoryFile(ReadText(dir / "h.json"), "h.json", {});
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  for (const std::string& node : recorded) {
    EXPECT_GE(twice->nodes[node]["primes"].size(), 1u) << node;
  }
  fs::remove_all(dir);
}

// A file that earlier versions wrote (each node's aggregate) still gives a
// prior, one sample per node, and is rewritten in the store's form.
TEST(RunHistoryCliTest, AnOldFileStillGivesAPriorAndIsRewritten) {
  const fs::path dir = HistoryTestDir();
  const auto now = static_cast<long long>(std::time(nullptr));
  std::ofstream(dir / "h.json") << R"({"version": 1, "workloads": {"primes": [
    {"node": "pi4b-master", "speed": 10000, "samples": 17.5, "time": )"
                                << now << R"(, "spread": 0.004},
    {"node": "pi4b-worker", "speed": 10000, "samples": 17.5, "time": )"
                                << now << R"(},
    {"node": "pi3b-worker", "speed": 2000, "samples": 17.5, "time": )"
                                << now << "}]}}";
  // Too small a job to be recorded: the file is the old one converted.
  const auto [code, out] = testing::RunShellCommand(std::string(BALLAST_BINARY) + " run " +
                                                    (dir / "small.yaml").string() + " --history " +
                                                    (dir / "h.json").string() + " 2>&1");
  ASSERT_EQ(code, 0) << out;
  for (const std::string node : {"pi4b-master", "pi4b-worker", "pi3b-worker"}) {
    EXPECT_NE(PriorLine(out, node).find("blended"), std::string::npos) << out;
    EXPECT_NE(PriorLine(out, node).find(", 1 samples, "), std::string::npos) << out;
  }
  const std::string text = ReadText(dir / "h.json");
  EXPECT_EQ(text.find("workloads"), std::string::npos) << text;
  auto store = history::ReadHistoryFile(text, "h.json", {});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_EQ(store->nodes.size(), 3u) << text;
  // Its speed over the mean of the three, written to four significant digits.
  EXPECT_DOUBLE_EQ(store->nodes["pi4b-master"]["primes"][0].speed, 1.364);
  EXPECT_DOUBLE_EQ(store->nodes["pi3b-worker"]["primes"][0].speed, 0.2727);
  fs::remove_all(dir);
}

TEST(RunHistoryCliTest, ABadHistoryFileIsRefusedNamingIt) {
  const fs::path dir = HistoryTestDir();
  const std::pair<const char*, const char*> cases[] = {
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": -3, "samples": 1,
          "time": 0}]}})",
       "h.json: workloads.primes[0].speed: expected a number > 0"},
      {R"({"version": 1, "nodes": {"a": {"primes": [[-3, 0]]}}})",
       "h.json: nodes.a.primes[0]: expected [speed, time]"},
  };
  for (const auto& [text, says] : cases) {
    std::ofstream(dir / "h.json") << text;
    const auto [code, err] = testing::RunShellCommand(
        std::string(BALLAST_BINARY) + " run " + (dir / "small.yaml").string() + " --history " +
        (dir / "h.json").string() + " 2>&1 >/dev/null");
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find(says), std::string::npos) << err;
  }
  fs::remove_all(dir);
}

// -o json: the run's energy, and with --history each node's deviation.
TEST(RunHistoryCliTest, JsonHasTheEnergyAndEachNodesDeviation) {
  const fs::path dir = HistoryTestDir();
  fs::remove(dir / "h.json");
  const std::string command = std::string(BALLAST_BINARY) + " run " +
                              (dir / "small.yaml").string() + " --history " +
                              (dir / "h.json").string() + " -o json 2>/dev/null";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  const auto& energy = json["energy"];
  EXPECT_GT(energy["joules"].get<double>(), 0) << out;
  EXPECT_TRUE(energy["complete"].get<bool>()) << "the default cluster's boards are Pi 3B and 4B";
  EXPECT_FALSE(energy["estimate"].get<bool>());
  ASSERT_EQ(energy["nodes"].size(), 3u);
  double sum = 0;
  for (const auto& node : energy["nodes"]) sum += node["joules"].get<double>();
  EXPECT_NEAR(sum, energy["joules"].get<double>(), 1e-9);
  ASSERT_EQ(json["deviations"].size(), 3u);
  for (const auto& d : json["deviations"]) {
    EXPECT_EQ(d["verdict"], "none") << d;
    // A node whose every completion a backup's copy beat has no speed.
    EXPECT_TRUE(d["reason"] == "no-history" || d["reason"] == "no-measurement") << d;
  }
  fs::remove_all(dir);
}

// An exec job's history is kept under its worker image, as the operator keeps
// it (api::HistoryKey); primes under its kind.
TEST(RunHistoryCliTest, AnExecJobIsKeptUnderItsImage) {
  const fs::path dir = HistoryTestDir();
  const std::string exec = "workload:\n  exec: {command: [sh, -c, 'true']}\nitems: 4\n";
  const std::pair<std::string, std::string> cases[] = {
      {exec, "exec"},
      {exec + "template:\n  spec:\n    containers:\n"
              "      - {name: worker, image: 'registry.local:5000/recompress:1.2@sha256:ab'}\n",
       "exec:registry.local:5000/recompress"},
      {"workload:\n  exec: {command: [sh, -c, 'true'], image: 'localhost/recompress:v3'}\n"
       "items: 4\n",
       "exec:localhost/recompress"},
      {"apiVersion: ballast.io/v1alpha1\nkind: WeightedJob\nmetadata: {name: e}\nspec:\n"
       "  workload:\n    exec: {command: [sh, -c, 'true']}\n  items: 4\n  template:\n"
       "    spec:\n      containers:\n        - {name: worker, image: 'python:3.12'}\n",
       "exec:python"},
      {"workload:\n  primes: {limit: 100}\n", "primes"},
  };
  for (const auto& [text, key] : cases) {
    std::ofstream(dir / "key.yaml") << text;
    auto loaded = LoadJob((dir / "key.yaml").string(), "");
    ASSERT_TRUE(loaded.ok()) << text << loaded.status().ToString();
    EXPECT_EQ(loaded->history_key.text(), key) << text;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ballast::cli

namespace ballast::cli {
namespace {

// `ballast simulate` on a multi-job scenario: every job with history and
// without; the second job with history moves and sends under half of what
// the first did (a trusted prior asks for fewer reports, and the tail is
// settled by a few steals).
TEST(SimulateJobsCliTest, PrintsEveryJobWithAndWithoutHistory) {
  const std::string command = std::string(BALLAST_BINARY) + " simulate " + BALLAST_SOURCE_DIR +
                              "/examples/scenarios/history/pi-rack-repeat.yaml --policies "
                              "adaptive -o json 2>/dev/null";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  ASSERT_EQ(json["series"].size(), 2u);
  const auto& with = json["series"][0];
  EXPECT_TRUE(with["history"].get<bool>());
  ASSERT_EQ(with["jobs"].size(), 4u);
  EXPECT_GT(with["jobs"][0]["moved_items"].get<uint64_t>(), 0u);
  EXPECT_LE(2 * with["jobs"][1]["moved_items"].get<uint64_t>(),
            with["jobs"][0]["moved_items"].get<uint64_t>());
  EXPECT_LE(2 * with["jobs"][1]["messages"].get<uint64_t>(),
            with["jobs"][0]["messages"].get<uint64_t>());
  EXPECT_EQ(with["jobs"][1]["nodes"][0]["source"], "history");
  const auto& without = json["series"][1];
  EXPECT_EQ(without["jobs"][1]["moved_items"], without["jobs"][0]["moved_items"]);
  EXPECT_EQ(without["jobs"][1]["nodes"][0]["source"], "profile");
}

// `ballast weights --fit`: the output is a profile file as it stands, and
// it predicts the speeds better than the shipped one.
TEST(WeightsFitCliTest, PrintsAFittedProfileThatParses) {
  const std::string source = BALLAST_SOURCE_DIR;
  const std::string command = std::string(BALLAST_BINARY) + " weights --nodes " + source +
                              "/examples/scenarios/pi-mixed-rack.yaml --fit " + source +
                              "/examples/speeds/pi-mixed-rack.yaml 2>/dev/null";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  auto profile = fuzzy::ParseProfile(out, "fitted.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString() << "\n" << out;
  EXPECT_EQ(profile->name, "raspberry-pi-fitted");
  EXPECT_NE(out.find("# rms error:"), std::string::npos) << out;
}

TEST(WeightsFitCliTest, ABadSpeedsFileNamesItsLine) {
  const fs::path dir = fs::temp_directory_path() / "ballast-fit-bad";
  fs::create_directories(dir);
  std::ofstream(dir / "speeds.yaml") << "pi5-a: 1\npi4b-a: -2\n";
  const std::string command = std::string(BALLAST_BINARY) + " weights --nodes " +
                              BALLAST_SOURCE_DIR + "/examples/scenarios/pi-mixed-rack.yaml --fit " +
                              (dir / "speeds.yaml").string() + " 2>&1 >/dev/null";
  const auto [code, err] = testing::RunShellCommand(command);
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("speeds.yaml:2"), std::string::npos) << err;
  fs::remove_all(dir);
}

// examples/scenarios/health/pi-throttled-board.yaml: the board throttled
// mid-job is named under the job it happened in, with its figures, in the
// table and in JSON; each job states its energy.
TEST(SimulateJobsCliTest, NamesTheThrottledBoardInItsJob) {
  const std::string scenario =
      std::string(BALLAST_SOURCE_DIR) + "/examples/scenarios/health/pi-throttled-board.yaml";
  const std::string simulate =
      std::string(BALLAST_BINARY) + " simulate " + scenario + " --policies adaptive";
  const auto [code, out] = testing::RunShellCommand(simulate + " -o json 2>/dev/null");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  const auto& jobs = json["series"][0]["jobs"];
  ASSERT_EQ(jobs.size(), 6u);
  for (size_t k = 0; k < jobs.size(); ++k) {
    EXPECT_GT(jobs[k]["energy"]["joules"].get<double>(), 0);
    if (k != 4) {
      EXPECT_EQ(jobs[k]["slow"], "-") << jobs[k]["name"];
    }
  }
  EXPECT_EQ(jobs[4]["name"], "throttled");
  EXPECT_EQ(jobs[4]["slow"].get<std::string>().rfind("pi4b-b 0.", 0), 0u) << jobs[4]["slow"];
  const auto& node = jobs[4]["nodes"][3];
  EXPECT_EQ(node["name"], "pi4b-b");
  EXPECT_EQ(node["deviation"]["verdict"], "slow");
  EXPECT_LT(node["deviation"]["ratio"].get<double>(), 0.75);
  EXPECT_EQ(jobs[0]["nodes"][0]["deviation"]["reason"], "no-history");
  // Without history nothing is judged.
  EXPECT_EQ(json["series"][1]["jobs"][4]["slow"], "-");
  const auto [table_code, table] = testing::RunShellCommand(simulate + " 2>/dev/null");
  ASSERT_EQ(table_code, 0) << table;
  EXPECT_NE(table.find("energy_J"), std::string::npos) << table;
  const size_t throttled = table.find("\nthrottled ");
  ASSERT_NE(throttled, std::string::npos) << table;
  EXPECT_EQ(table.find("\n  pi4b-b ran at 0."), table.find('\n', throttled + 1)) << table;
  EXPECT_EQ(table.find(" ran at "), table.rfind(" ran at ")) << "one board named, once";
}

}  // namespace
}  // namespace ballast::cli
