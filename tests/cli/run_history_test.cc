// The run-to-run history of `ballast run --history` (cli/run/run_history.h): real
// runs on this machine, the second told the speeds the first measured.
#include "cli/run/run_history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "cli/run/local_runner.h"
#include "core/fuzzy/profile.h"
#include "tests/support/primes_workload.h"
#include "tests/support/shell_command.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

LocalRunOptions PrimesOptions() {
  job::JobSpec job;
  job.name = "history-primes";
  job.workload = testing::PrimesWorkload(60000);
  job.policy = {balance::AdaptiveOptions{}, ""};
  auto cluster = DefaultCluster();
  EXPECT_TRUE(cluster.ok());
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  EXPECT_TRUE(profile.ok());
  return {std::move(job), *cluster, *profile, BALLAST_WORKER_BINARY, true, "", nullptr};
}

// The second run's policy is told the first run's measured speeds, on the
// fuzzy weights' scale, with each node's reports (as far as its computing
// time backs them) as its samples.
TEST(RunHistoryTest, TheSecondRunStartsFromWhatTheFirstMeasured) {
  LocalRunOptions options = PrimesOptions();
  auto weights = ClusterWeights(options.profile, options.cluster);
  ASSERT_TRUE(weights.ok());
  const auto first_priors = RunPriors(*weights, {}, "primes", 1000, {});
  for (const fuzzy::NodePrior& prior : first_priors) {
    EXPECT_EQ(prior.source, fuzzy::PriorSource::kProfile) << prior.node;
  }
  auto first = RunLocal(options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const fuzzy::HistoryFile learned = Learn({}, "primes", *first, 1000, {});
  // A record for every node with merged work (one whose every completion a
  // backup's copy beat has nothing measured).
  std::set<std::string> with_work;
  for (const auto& worker : first->view.workers) {
    if (worker.items > 0) with_work.insert(worker.name);
  }
  ASSERT_FALSE(with_work.empty());
  ASSERT_EQ(learned.workloads.at("primes").size(), with_work.size());
  for (const fuzzy::HistoryRecord& record : learned.workloads.at("primes")) {
    EXPECT_EQ(with_work.count(record.node), 1u) << record.node;
    EXPECT_GT(record.speed, 0) << record.node;
    EXPECT_EQ(record.time, 1000);
    for (const auto& worker : first->view.workers) {
      if (worker.name != record.node) continue;
      EXPECT_DOUBLE_EQ(record.samples,
                       fuzzy::JobSamples(worker.reports, worker.MergedBusySeconds(), {}));
    }
  }
  const auto priors = RunPriors(*weights, learned, "primes", 1060, {});
  for (const fuzzy::NodePrior& prior : priors) {
    if (with_work.count(prior.node) == 0) {
      EXPECT_EQ(prior.source, fuzzy::PriorSource::kProfile) << prior.node;
      options.priors.push_back({prior.node, prior.value, prior.credibility});
      continue;
    }
    EXPECT_NE(prior.source, fuzzy::PriorSource::kProfile) << prior.node;
    EXPECT_DOUBLE_EQ(prior.age_seconds, 60);
    EXPECT_TRUE(std::isfinite(prior.value) && prior.value > 0);
    options.priors.push_back({prior.node, prior.value, prior.credibility});
  }
  // Another workload kind has no history.
  EXPECT_EQ(RunPriors(*weights, learned, "exec", 1060, {})[0].source, fuzzy::PriorSource::kProfile);
  auto second = RunLocal(options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  for (size_t i = 0; i < priors.size(); ++i) {
    EXPECT_DOUBLE_EQ(second->view.workers[i].prior_speed, priors[i].value);
  }
  EXPECT_EQ(second->view.result.Summary(), first->view.result.Summary());
}

fs::path HistoryTestDir() {
  const fs::path dir =
      fs::temp_directory_path() /
      ("ballast-history-" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml") << "workload:\n  primes: {limit: 20000}\n";
  return dir;
}

// The ITEMS column of `node`'s row in run's result table (-1 if absent).
int64_t ItemsInTable(const std::string& out, const std::string& node) {
  const size_t table = out.find("MEASURED");
  if (table == std::string::npos) return -1;
  const size_t row = out.find("\n" + node + " ", table);
  if (row == std::string::npos) return -1;
  std::istringstream fields(out.substr(row + 1, out.find('\n', row + 1) - row - 1));
  std::string name;
  double weight = 0, speed = 0, measured = 0;
  int64_t items = -1;
  fields >> name >> weight >> speed >> measured >> items;
  return items;
}

// Every node that handed in merged work is recorded, and the second run
// reads its record back; a node whose every completion was dropped (a
// backup's copy handed in first, likely on a job this small) has nothing
// measured and keeps its profile weight.
TEST(RunHistoryCliTest, RunWritesTheHistoryAndReadsItBack) {
  const fs::path dir = HistoryTestDir();
  fs::remove(dir / "h.json");
  const std::string command = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                              " --history " + (dir / "h.json").string() + " 2>&1";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("prior pi4b-master        profile 5"), std::string::npos) << out;
  std::ifstream file(dir / "h.json");
  const std::string text((std::istreambuf_iterator<char>(file)), {});
  auto parsed = fuzzy::ParseHistoryFile(text, "h.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  std::set<std::string> recorded;
  for (const fuzzy::HistoryRecord& record : parsed->workloads.at("primes")) {
    recorded.insert(record.node);
  }
  const auto [again, second] = testing::RunShellCommand(command);
  ASSERT_EQ(again, 0) << second;
  for (const std::string node : {"pi4b-master", "pi4b-worker", "pi3b-worker"}) {
    const int64_t items = ItemsInTable(out, node);
    ASSERT_GE(items, 0) << node << "\n" << out;
    EXPECT_EQ(recorded.count(node) == 1, items > 0) << node << "\n" << out << text;
    const size_t line = second.find("prior " + node);
    ASSERT_NE(line, std::string::npos) << second;
    const std::string prior = second.substr(line, second.find('\n', line) - line);
    if (recorded.count(node) == 0) {
      EXPECT_NE(prior.find("profile"), std::string::npos) << prior;
    } else {
      EXPECT_TRUE(prior.find("history") != std::string::npos ||
                  prior.find("blended") != std::string::npos)
          << prior;
    }
  }
  EXPECT_FALSE(recorded.empty()) << text;
  // Both runs state their energy and judge every node against its own
  // baseline: the first has none; the second's history is a few reports of
  // milliseconds, too little to judge by.
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
  fs::remove_all(dir);
}

// -o json: the run's energy, and with --history each node's deviation.
TEST(RunHistoryCliTest, JsonHasTheEnergyAndEachNodesDeviation) {
  const fs::path dir = HistoryTestDir();
  fs::remove(dir / "h.json");
  const std::string command = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                              " --history " + (dir / "h.json").string() + " -o json 2>/dev/null";
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

TEST(RunHistoryCliTest, ABadHistoryFileIsRefusedNamingIt) {
  const fs::path dir = HistoryTestDir();
  std::ofstream(dir / "h.json") << R"({"version": 1, "workloads": {"primes": [{"node": "a",
    "speed": -3, "samples": 1, "time": 0}]}})";
  const auto [code, err] =
      testing::RunShellCommand(std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                               " --history " + (dir / "h.json").string() + " 2>&1 >/dev/null");
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("h.json: workloads.primes[0].speed: expected a number > 0"), std::string::npos)
      << err;
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
    if (k != 4) EXPECT_EQ(jobs[k]["slow"], "-") << jobs[k]["name"];
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
