// The real `ballast` binary against numbers and names a hostile or careless
// user writes (issue 13): each is refused with exit 2 and the file and line,
// or read with a warning, and nothing hangs. Every command runs under
// `timeout 60`, so a hang fails the test (exit 124) instead of stalling it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "tests/support/shell_command.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = BALLAST_SOURCE_DIR;

// A directory of its own for the running test (ctest runs tests in parallel).
// One directory per test and process: two runs of the suite on one machine
// (two checkouts) once removed each other's files mid-test.
fs::path TestDir() {
  const fs::path dir =
      fs::temp_directory_path() /
      ("ballast-hostile-" + std::to_string(getpid()) + "-" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void Write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

// Runs `ballast <arguments>`; returns its exit code and what it wrote to
// stdout and stderr together.
std::pair<int, std::string> Ballast(const std::string& arguments) {
  const std::string command =
      "timeout 60 " + std::string(BALLAST_BINARY) + " " + arguments + " 2>&1";
  return testing::RunShellCommand(command);
}

constexpr const char* kAbsurdNodes = R"(nodes:
  - {name: huge, speed: 0.3, labels: {ballast.io/cpu-ghz: "1e200"}}
  - {name: tiny, speed: 0.3, labels: {ballast.io/cpu-ghz: "1e-200"}}
  - {name: normal, speed: 0.3, labels: {ballast.io/cpu-ghz: "1.5"}}
)";

// Regression: these labels gave weights inf and -nan with exit 0, and the
// adaptive policy then looped forever (`simulate` too, Ctrl-C ignored).
TEST(HostileInputsTest, CpuGhz1e200LabelsWarnAndSimulateFinishesInsteadOfLoopingForever) {
  const fs::path dir = TestDir();
  const std::string profile = (kSource / "examples/profiles/cpu-ghz.yaml").string();
  Write(dir / "nodes.yaml", kAbsurdNodes);
  const auto [code, out] =
      Ballast("weights --profile " + profile + " --nodes " + (dir / "nodes.yaml").string());
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("warning: node huge: criterion cpu (label ballast.io/cpu-ghz): malformed "
                     "value '1e200'"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("warning: node tiny: criterion cpu (label ballast.io/cpu-ghz): malformed "
                     "value '1e-200'"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("inf"), std::string::npos) << out;
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;

  fs::copy_file(profile, dir / "cpu-ghz.yaml");
  Write(dir / "scenario.yaml", std::string("name: absurd\nworkload: {items: 2000, itemSeconds: "
                                           "0.01}\nprofile: cpu-ghz.yaml\n") +
                                   kAbsurdNodes);
  const auto [sim_code, sim_out] =
      Ballast("simulate " + (dir / "scenario.yaml").string() + " --policies adaptive,weighted");
  EXPECT_EQ(sim_code, 0) << sim_out;
  EXPECT_NE(sim_out.find("\nadaptive "), std::string::npos) << sim_out;
  fs::remove_all(dir);
}

// Regression: latency 1e15 and bytesPerItem 2^64-1 were accepted.
TEST(HostileInputsTest, AbsurdScenarioNumbersExitTwoWithFileAndLine) {
  const fs::path dir = TestDir();
  Write(dir / "scenario.yaml",
        "name: t\nworkload: {items: 10}\nnodes:\n  - {name: a, speed: 1, latency: 1e15}\n");
  auto [code, out] = Ballast("simulate " + (dir / "scenario.yaml").string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("scenario.yaml:4:"), std::string::npos) << out;
  EXPECT_NE(out.find("nodes[0].latency: expected seconds in [0, 3600], got 1e+15"),
            std::string::npos)
      << out;
  fs::remove_all(dir);
}

// Regression (issue 61): a scenario within every bound of its own — 5e7
// items with costJitter, 1,000 jobs, seven policies — drew 5e7 jittered
// costs for each of its 14,000 runs: hours, and no line until the first
// policy's thousand jobs were done. The product is refused before anything
// runs, naming it.
TEST(HostileInputsTest, AScenarioWithinEveryBoundButHoursAsAProductIsRefused) {
  const fs::path dir = TestDir();
  Write(dir / "scenario.yaml",
        "name: t\nworkload: {items: 50000000, itemSeconds: 0.0001, costJitter: 0.5}\n"
        "nodes:\n  - {name: a, speed: 1}\n  - {name: b, speed: 0.5}\n"
        "jobs:\n  - {name: run, repeat: 1000}\n"
        "policies: [equal, weighted, selfsched, guided, factoring, mms, adaptive]\n");
  auto [code, out] = Ballast("simulate " + (dir / "scenario.yaml").string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("workload.costJitter: 14000 runs (7 policies x 2 history settings x 1000 "
                     "jobs) each drawing 50000000 jittered item costs make 7e+11 in all, more "
                     "than 2e+09"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("simulating equal"), std::string::npos) << "nothing ran: " << out;
  fs::remove_all(dir);
}

// Regression: `team/a` sat at 0 % for four minutes and exited 1; `../x`
// wrote its log outside the run's folder.
TEST(HostileInputsTest, JobNamedTeamSlashAAndNodeNamedDotDotSlashXExitTwoBeforeRunning) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml",
        "apiVersion: ballast.io/v1alpha1\nkind: WeightedJob\nmetadata:\n  name: team/a\nspec:\n"
        "  workload: {primes: {limit: 1000}}\n");
  Write(dir / "good-job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 0.5}\n");
  Write(dir / "bad-cluster.yaml", "nodes:\n  - {name: ../x, speed: 0.5}\n");
  fs::create_directories(dir / "run");
  auto [code, out] = Ballast("run " + (dir / "job.yaml").string() + " --cluster " +
                             (dir / "cluster.yaml").string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("job.yaml:4:9: metadata.name: expected a DNS-1123 label"), std::string::npos)
      << out;
  std::tie(code, out) =
      Ballast("run " + (dir / "good-job.yaml").string() + " --cluster " +
              (dir / "bad-cluster.yaml").string() + " --logs " + (dir / "run").string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("bad-cluster.yaml:2:12: nodes[0].name: expected a DNS-1123 subdomain"),
            std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists(dir / "x.log"));
  fs::remove_all(dir);
}

// Regression: a 10 MiB label value gave a 10 MiB warning on stderr (and in
// `-o json`). The value is quoted cut, with its length.
TEST(HostileInputsTest, TenMebibyteLabelGivesAWarningOfAFewHundredBytes) {
  const fs::path dir = TestDir();
  const std::string huge = std::string(10 << 20, '9') + "x";
  Write(dir / "nodes.yaml",
        "nodes:\n  - {name: a, labels: {ballast.io/cpu-model: cortex-a72, ballast.io/sd-gb: \"" +
            huge + "\"}}\n  - {name: b, labels: {ballast.io/cpu-model: cortex-a53}}\n");
  const auto [code, out] = Ballast("weights --nodes " + (dir / "nodes.yaml").string());
  EXPECT_EQ(code, 0) << out.substr(0, 2000);
  EXPECT_LT(out.size(), 4096u) << out.substr(0, 2000);
  EXPECT_NE(out.find("malformed value '" + std::string(80, '9') + "'... (10485761 characters)"),
            std::string::npos)
      << out.substr(0, 2000);
  const auto [json_code, json_out] =
      testing::RunShellCommand(std::string(BALLAST_BINARY) + " weights -o json --nodes " +
                               (dir / "nodes.yaml").string() + " 2>/dev/null");
  EXPECT_EQ(json_code, 0);
  EXPECT_LT(json_out.size(), 8192u);
  EXPECT_TRUE(nlohmann::json::accept(json_out)) << json_out.substr(0, 2000);
  fs::remove_all(dir);
}

// Regression: a node name of 252 or 253 characters is a valid DNS-1123
// subdomain, but "<node>.log" is over the 255-byte limit of a file name: the
// log was never created, the worker's lines landed on `ballast run`'s stdout
// and `-o json` no longer parsed (exit 0, no warning). The log gets a bounded
// name, which the output names.
TEST(HostileInputsTest, NodeNameOf253CharactersGetsABoundedLogAndJsonStillParses) {
  const fs::path dir = TestDir();
  const std::string node = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                           std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(node.size(), 253u);
  Write(dir / "job.yaml", "workload: {primes: {limit: 20000}}\n");
  Write(dir / "cluster.yaml",
        "nodes:\n  - {name: " + node + ", speed: 1}\n  - {name: short, speed: 1}\n");
  const fs::path logs = dir / "logs";
  const auto [code, out] = testing::RunShellCommand(
      "timeout 60 " + std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
      " --cluster " + (dir / "cluster.yaml").string() + " --logs " + logs.string() +
      " -o json 2>/dev/null");
  ASSERT_EQ(code, 0) << out;
  nlohmann::json json;
  ASSERT_NO_THROW(json = nlohmann::json::parse(out)) << out;
  EXPECT_EQ(json["log_dir"], logs.string());
  ASSERT_EQ(json["nodes"].size(), 2u);
  EXPECT_EQ(json["nodes"][0]["name"], node);
  const std::string log = json["nodes"][0]["log"];
  EXPECT_LE(log.size(), 255u);
  EXPECT_TRUE(log.ends_with(".log")) << log;
  EXPECT_TRUE(log.starts_with(std::string(63, 'a') + ".")) << log;
  EXPECT_TRUE(fs::exists(logs / log)) << log;
  EXPECT_GT(fs::file_size(logs / log), 0u) << "the worker's lines belong in its log";
  EXPECT_EQ(json["nodes"][1]["log"], "short.log");
  EXPECT_TRUE(fs::exists(logs / "short.log"));

  // The table names the file of the long name.
  const auto [table_code, table] =
      Ballast("run " + (dir / "job.yaml").string() + " --cluster " +
              (dir / "cluster.yaml").string() + " --logs " + logs.string());
  EXPECT_EQ(table_code, 0) << table;
  EXPECT_NE(table.find("  node " + node + ": " + log + "\n"), std::string::npos) << table;
  fs::remove_all(dir);
}

// A log that cannot be created stops the run with its path, before any
// worker starts, instead of letting the worker print on the run's stdout.
TEST(HostileInputsTest, LogThatCannotBeCreatedFailsTheRunNamingIt) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  fs::create_directories(dir / "logs" / "a.log");  // a directory where the log goes
  const auto [code, out] =
      Ballast("run " + (dir / "job.yaml").string() + " --cluster " +
              (dir / "cluster.yaml").string() + " --logs " + (dir / "logs").string() + " -o json");
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("cannot create the log of node a: " + (dir / "logs" / "a.log").string()),
            std::string::npos)
      << out;
  fs::remove_all(dir);
}

// Found by the job fuzz target's check of its output: an exec command with
// a Latin-1 byte parsed, and reached the workers with U+FFFD in its place.
// A job file that is not UTF-8 is refused with the line and column.
TEST(HostileInputsTest, JobFileThatIsNotUtf8IsRefusedWithTheLine) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml",
        "workload:\n  items: 10\n  exec:\n    command: [sh, -c, \"echo caf\xe9\"]\n");
  const auto [code, out] = Ballast("run " + (dir / "job.yaml").string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("job.yaml:4:32: byte 0xe9 is not UTF-8"), std::string::npos) << out;
  fs::remove_all(dir);
}

// A policy with options on the command line (name:key=value): the whole text
// labels its results beside the plain name; a malformed or unknown option is
// refused with exit code 2, naming it, before anything runs.
TEST(HostileInputsTest, PolicyOptionsOnTheCommandLine) {
  const std::string scenario = (kSource / "examples/scenarios/pi-mixed-rack.yaml").string();
  const auto [code, out] =
      Ballast("simulate " + scenario + " --policies adaptive,adaptive:backup=off:stealing=off");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\nadaptive "), std::string::npos) << out;
  EXPECT_NE(out.find("\nadaptive:backup=off:stealing=off "), std::string::npos) << out;
  const std::pair<const char*, const char*> cases[] = {
      {"adaptive:backup", "'backup': expected an option as key=value"},
      {"adaptive:=on", "'=on': expected an option as key=value"},
      {"adaptive:backup=on:backup=off", "option backup given twice"},
      {"adaptive:backup=maybe", "backup: expected true or false (or on, off), got \"maybe\""},
      {"adaptive:chunk=8", "has no option \"chunk\""},
  };
  for (const auto& [policy, says] : cases) {
    const auto [bad_code, bad_out] = Ballast("simulate " + scenario + " --policies " + policy);
    EXPECT_EQ(bad_code, 2) << policy << ": " << bad_out;
    EXPECT_NE(bad_out.find(says), std::string::npos) << policy << ": " << bad_out;
  }
}

// `ballast bench --sequences` repeats a chain of history runs: without
// --history, or out of its range, it is refused before any run starts.
TEST(HostileInputsTest, BenchSequencesNeedHistoryAndARange) {
  const std::string job = (kSource / "examples/jobs/primes-300000.yaml").string();
  const std::pair<const char*, const char*> cases[] = {
      {" --sequences 3", "--sequences requires --history"},
      {" --history --sequences 0", "--sequences: Value 0 not in range 1 to 50"},
      {" --history --sequences 51", "--sequences: Value 51 not in range 1 to 50"},
  };
  for (const auto& [flags, says] : cases) {
    const auto [code, out] = Ballast("bench " + job + " --policies adaptive" + flags);
    EXPECT_NE(code, 0) << flags << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << flags << ": " << out;
    EXPECT_EQ(out.find("run 1:"), std::string::npos) << flags << ": " << out;
  }
}

// The history flags of `ballast operator` are refused before it looks for a
// cluster, naming the flag.
TEST(HostileInputsTest, OperatorHistoryFlagsAreRefusedBeforeAnythingStarts) {
  const std::pair<const char*, const char*> cases[] = {
      {"--prometheus-url ftp://prometheus:9090",
       "--prometheus-url: expected an http(s) URL, got \"ftp://prometheus:9090\""},
      {"--prometheus-url prometheus:9090", "--prometheus-url: expected an http(s) URL"},
      {"--prometheus-timeout 0", "--prometheus-timeout 0: expected seconds in (0, 60]"},
      {"--prometheus-window 10", "--prometheus-window 10: expected seconds >= 60"},
      {"--history-configmap history", "--history-configmap history: expected NAMESPACE/NAME"},
      {"--history-full-trust-samples -1", "--history-full-trust-samples -1: expected a number > 0"},
      {"--history-max-age 0", "--history-max-age 0: expected seconds > 0"},
  };
  for (const auto& [flags, says] : cases) {
    const auto [code, out] = Ballast(std::string("operator --kubeconfig /nonexistent ") + flags);
    EXPECT_EQ(code, 2) << flags << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << flags << ": " << out;
  }
}

// So are the probes', the coordinator's and the status pacing's; of two
// wrong flags the first part's is named (health, then the coordinator, then
// the pacing).
TEST(HostileInputsTest, OperatorHealthCoordinatorAndPacingFlagsAreRefusedBeforeAnythingStarts) {
  const std::pair<const char*, const char*> cases[] = {
      {"--health-stall-seconds 0", "--health-stall-seconds 0: expected seconds > 0"},
      {"--coordinator-listen 8080", "--coordinator-listen 8080: expected HOST:PORT"},
      {"--status-interval 0", "--status-interval 0: expected seconds in (0, 3600]"},
      {"--progress-interval 4000", "--progress-interval 4000: expected seconds in (0, 3600]"},
      {"--progress-step 101", "--progress-step 101: expected percentage points in (0, 100]"},
      {"--progress-step 0 --health-stall-seconds 0", "--health-stall-seconds 0:"},
      {"--status-interval 0 --coordinator-listen 8080", "--coordinator-listen 8080:"},
  };
  for (const auto& [flags, says] : cases) {
    const auto [code, out] = Ballast(std::string("operator --kubeconfig /nonexistent ") + flags);
    EXPECT_EQ(code, 2) << flags << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << flags << ": " << out;
  }
}

// Regression (issue 61): an itemsFrom.file or profile naming /dev/zero or
// /dev/urandom made `ballast run` grow without bound, a FIFO nobody writes
// blocked it for good, and --history on a FIFO, directory or device said
// "larger than 4194304 bytes". Every file a user names is read by one
// bounded reader: each is refused at once, exit 2, naming the file and what
// it is.
TEST(HostileInputsTest, DevZeroFifoOrDirectoryNamedAsAFileIsRefusedAtOnceNamingIt) {
  const fs::path dir = TestDir();
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string good = (dir / "job.yaml").string();
  Write(good, "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  const std::string cluster = " --cluster " + (dir / "cluster.yaml").string();
  Write(dir / "zero-items.yaml",
        "workload: {exec: {command: [\"true\"]}}\nitemsFrom: {file: /dev/zero}\n");
  Write(dir / "fifo-items.yaml",
        "workload: {exec: {command: [\"true\"]}}\nitemsFrom: {file: fifo}\n");
  Write(dir / "urandom-profile.yaml", "workload: {primes: {limit: 1000}}\nprofile: /dev/urandom\n");
  const std::pair<std::string, std::string> cases[] = {
      {"run " + (dir / "zero-items.yaml").string() + cluster,
       "spec.itemsFrom.file: /dev/zero: a device, not a regular file"},
      {"run " + (dir / "fifo-items.yaml").string() + cluster,
       "spec.itemsFrom.file: " + fifo + ": a FIFO, not a regular file"},
      {"run " + (dir / "urandom-profile.yaml").string() + cluster,
       "/dev/urandom: a device, not a regular file"},
      {"run /dev/zero" + cluster, "/dev/zero: a device, not a regular file"},
      {"run " + good + " --cluster " + fifo, fifo + ": a FIFO, not a regular file"},
      {"run " + good + cluster + " --history " + fifo, fifo + ": a FIFO, not a regular file"},
      {"run " + good + cluster + " --history " + dir.string(),
       dir.string() + ": a directory, not a regular file"},
      {"run " + good + cluster + " --history /dev/zero", "/dev/zero: a device, not a regular file"},
      {"simulate " + fifo, fifo + ": a FIFO, not a regular file"},
      {"weights --nodes /dev/zero", "/dev/zero: a device, not a regular file"},
      {"weights --fit " + fifo + " --nodes " + (kSource / "examples/nodes/seed000.yaml").string(),
       fifo + ": a FIFO, not a regular file"},
  };
  for (const auto& [arguments, says] : cases) {
    const auto [code, out] = Ballast(arguments);
    EXPECT_EQ(code, 2) << arguments << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << arguments << ": " << out;
    EXPECT_EQ(out.find("larger than"), std::string::npos) << arguments << ": " << out;
  }
  fs::remove_all(dir);
}

// Regression (issue 61): a --history whose directory is missing let the job
// run to its end, then exit 2 with no node table, no result line and an
// empty `-o json`. An output file that cannot be written is refused before
// the run, naming its flag and why, exit 2.
TEST(HostileInputsTest, AnOutputThatCannotBeWrittenIsRefusedBeforeTheRun) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  Write(dir / "file", "x");
  const std::string run =
      "run " + (dir / "job.yaml").string() + " --cluster " + (dir / "cluster.yaml").string();
  const std::string missing = (dir / "missing").string();
  const std::pair<std::string, std::string> cases[] = {
      {" --history " + missing + "/h.json",
       "--history " + missing + "/h.json: the directory " + missing + " does not exist"},
      {" --report " + missing + "/r.html -o json",
       "--report " + missing + "/r.html: the directory " + missing + " does not exist"},
      {" --report " + (dir / "file").string() + "/r.html",
       (dir / "file").string() + " is a regular file, not a directory"},
  };
  for (const auto& [flags, says] : cases) {
    const auto [code, out] = Ballast(run + flags);
    EXPECT_EQ(code, 2) << flags << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << flags << ": " << out;
    EXPECT_EQ(out.find("result:"), std::string::npos) << "nothing ran: " << out;
  }
  fs::remove_all(dir);
}

// An output that still cannot be written at the end (its place taken during
// the run) loses nothing of the result: the table or JSON is printed whole,
// then the error, and the exit code is 3 (kExitOutputLost), not 2.
TEST(HostileInputsTest, AnOutputThatFailsAfterTheRunLeavesTheResultPrintedAndExitsThree) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  const std::string run = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                          " --cluster " + (dir / "cluster.yaml").string();
  // The report is written beside itself first (r.html.tmp): a directory there
  // fails the write, and nothing before the run can see it coming.
  const std::string report = (dir / "r.html").string();
  fs::create_directories(report + ".tmp");
  const auto [code, out] = testing::RunShellCommand("timeout 60 " + run + " --report " + report +
                                                    " -o json 2>/dev/null");
  EXPECT_EQ(code, 3) << out;
  nlohmann::json json;
  ASSERT_NO_THROW(json = nlohmann::json::parse(out)) << out;
  EXPECT_EQ(json["result"]["primes"]["count"], 168) << out;
  ASSERT_EQ(json["output_errors"].size(), 1u) << out;
  EXPECT_NE(json["output_errors"][0].get<std::string>().find("--report: " + report),
            std::string::npos)
      << out;
  // The history is written beside itself as <file>.<pid>.tmp: a directory
  // there (the shell's pid is the run's, exec keeps it) fails the rename.
  const std::string history = (dir / "h.json").string();
  const auto [table_code, table] =
      testing::RunShellCommand("timeout 60 sh -c 'mkdir \"$0.$$.tmp\" && exec " + run +
                               " --history \"$0\"' " + history + " 2>&1");
  EXPECT_EQ(table_code, 3) << table;
  const size_t result = table.find("\nresult: ");
  const size_t error = table.find("ballast: --history: cannot write " + history);
  EXPECT_NE(result, std::string::npos) << table;
  ASSERT_NE(error, std::string::npos) << table;
  EXPECT_LT(result, error) << "the result comes first: " << table;
  EXPECT_NE(table.find("the run finished; its result is printed above"), std::string::npos)
      << table;
  fs::remove_all(dir);
}

// Regression (issue 61): history samples dated in the future (recorded by
// a clock set wrong; a Raspberry Pi has no real-time clock) stayed the
// newest of their node for good, pinning the store. A run drops them, says
// so, and writes the file without them.
TEST(HostileInputsTest, HistorySamplesDatedInTheFutureAreDroppedAndNamed) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "h.json", R"({"version": 1, "nodes": {"pi4b-master": {"primes": [[1.2, 4102444800], )"
                        R"([1.1, 1700000000]]}, "pi3b-worker": {"primes": [[0.4, 1700000000]]}}})");
  const auto [code, out] =
      Ballast("run " + (dir / "job.yaml").string() + " --history " + (dir / "h.json").string());
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("ballast: warning: --history " + (dir / "h.json").string() +
                     ": dropped 1 sample dated more than 3600 s after now (the latest "
                     "4102444800; recorded by a clock set wrong?): pi4b-master primes 1"),
            std::string::npos)
      << out;
  std::ifstream in(dir / "h.json");
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written.find("4102444800"), std::string::npos) << written;
  EXPECT_NE(written.find("1700000000"), std::string::npos) << "the real samples stay: " << written;
  fs::remove_all(dir);
}

// Regression (issue 61): a history file of up to 4 MiB is read, but the
// store is written within 256 KiB: the stalest entries were left out
// silently. A run says how many and how new the newest of them was.
TEST(HostileInputsTest, AHistoryPastTheStoresBytesSaysWhatWasLeftOut) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  std::string history = R"({"version": 1, "nodes": {)";
  for (int node = 0; node < 4000; ++node) {
    history += (node == 0 ? "" : ", ") + std::string("\"node-") + std::to_string(node) +
               "\": {\"primes\": [";
    for (int sample = 0; sample < 16; ++sample) {
      history += (sample == 0 ? "" : ", ") + std::string("[1.25, ") +
                 std::to_string(1700000000 + node * 100 + sample) + "]";
    }
    history += "]}";
  }
  history += "}}";
  ASSERT_GT(history.size(), size_t{1} << 20);
  Write(dir / "h.json", history);
  const auto [code, out] =
      Ballast("run " + (dir / "job.yaml").string() + " --history " + (dir / "h.json").string());
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("ballast: warning: --history " + (dir / "h.json").string() +
                     ": kept within 262144 bytes: left out the "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" stalest node-and-workload entries ("), std::string::npos) << out;
  EXPECT_LE(fs::file_size(dir / "h.json"), size_t{262144} + 1);
  fs::remove_all(dir);
}

// A socket bound on loopback whose port the test holds, with the port below
// it free (the coordinator's, at --metrics-port); -1 when none was found.
std::pair<int, int> HeldPortAboveAFreeOne() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int held = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(held, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(held, 1) != 0 ||
        getsockname(held, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      close(held);
      continue;
    }
    const int port = ntohs(address.sin_port);
    const int below = socket(AF_INET, SOCK_STREAM, 0);
    address.sin_port = htons(static_cast<uint16_t>(port - 1));
    const bool free = bind(below, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    close(below);
    if (free) return {held, port};
    close(held);
  }
  return {-1, -1};
}

// Regression (issue 61): a run that failed before its result (every worker
// failed, past activeDeadlineSeconds, a bad file) printed nothing on
// `-o json`, and why the workers failed only in their logs. Each prints a
// JSON document with the failure and its cause, and the message names the
// workers' last error.
TEST(HostileInputsTest, AFailedRunPrintsItsFailureAndCauseAsJson) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  const std::string run = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                          " --cluster " + (dir / "cluster.yaml").string() + " -o json";
  auto json_of = [](const std::string& out) {
    nlohmann::json json;
    EXPECT_NO_THROW(json = nlohmann::json::parse(out)) << out;
    return json;
  };
  // The only worker cannot serve its metrics port: it fails each restart.
  const auto [held, port] = HeldPortAboveAFreeOne();
  ASSERT_GE(held, 0);
  const auto [code, out] = testing::RunShellCommand("timeout 60 " + run + " --metrics-port " +
                                                    std::to_string(port - 1) + " 2>/dev/null");
  close(held);
  EXPECT_EQ(code, 1) << out;
  nlohmann::json failed = json_of(out);
  EXPECT_EQ(failed["exit_code"], 1) << out;
  EXPECT_EQ(failed["failure"]["reason"], "RunFailed") << out;
  const std::string message = failed["failure"]["message"].get<std::string>();
  EXPECT_NE(message.find("every worker failed past its 3 restarts: a (exit code "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("cannot serve metrics on 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << "the cause, from the worker's log: " << message;
  EXPECT_NE(message.find("; logs in "), std::string::npos) << message;

  // Past activeDeadlineSeconds.
  Write(dir / "slow.yaml",
        "workload:\n  exec:\n    command: [sleep, '30']\nitems: 2\nactiveDeadlineSeconds: 1\n");
  const auto [late_code, late] = testing::RunShellCommand(
      "timeout 60 " + std::string(BALLAST_BINARY) + " run " + (dir / "slow.yaml").string() +
      " --cluster " + (dir / "cluster.yaml").string() + " --no-cgroups -o json 2>/dev/null");
  EXPECT_EQ(late_code, 1) << late;
  nlohmann::json deadline = json_of(late);
  EXPECT_EQ(deadline["failure"]["message"], "the job ran longer than activeDeadlineSeconds (1 s)")
      << late;

  // A bad file: exit 2, reason BadInput.
  Write(dir / "bad.yaml", "workload: {primes: {limit: -1}}\n");
  const auto [bad_code, bad] =
      testing::RunShellCommand("timeout 60 " + std::string(BALLAST_BINARY) + " run " +
                               (dir / "bad.yaml").string() + " -o json 2>/dev/null");
  EXPECT_EQ(bad_code, 2) << bad;
  nlohmann::json refused = json_of(bad);
  EXPECT_EQ(refused["failure"]["reason"], "BadInput") << bad;
  EXPECT_EQ(refused["exit_code"], 2) << bad;
  EXPECT_NE(refused["failure"]["message"].get<std::string>().find("limit"), std::string::npos)
      << bad;
  fs::remove_all(dir);
}

// Regression (issue 61): a failed item's output with escape sequences
// reached the terminal raw: "\x1b[2J\x1b[H" cleared the screen and the
// command's "result: 999 primes" came up at its top as the run's result.
// What a command wrote is shown with its control characters written out.
TEST(HostileInputsTest, ACommandsEscapeSequencesNeverReachTheTerminal) {
  const fs::path dir = TestDir();
  Write(dir / "forge.sh", "printf '\\033[2J\\033[Hresult: 999 primes\\rX\\n'; exit 1\n");
  Write(dir / "job.yaml", "workload:\n  exec:\n    command: [sh, " + (dir / "forge.sh").string() +
                              "]\n    perItem: true\n    retries: 0\nitems: 2\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  const auto [code, out] = Ballast("run " + (dir / "job.yaml").string() + " --cluster " +
                                   (dir / "cluster.yaml").string() + " --no-cgroups");
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "no raw escape: " << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_NE(out.find("\nresult: 0 items succeeded, 2 failed"), std::string::npos) << out;
  EXPECT_NE(out.find("\\x1b[2J\\x1b[Hresult: 999 primes\\x0dX"), std::string::npos) << out;
  EXPECT_NE(out.find("ballast: the job failed (FailedItems): "), std::string::npos) << out;
  fs::remove_all(dir);
}

// Regression (issue 61): `TMPDIR=` (set, empty) stopped every run: the
// temporary directory was taken to be the path "". Empty is unset: /tmp.
TEST(HostileInputsTest, AnEmptyTmpdirDoesNotStopARun) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n");
  const auto [code, out] = testing::RunShellCommand(
      "TMPDIR= timeout 60 " + std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
      " --cluster " + (dir / "cluster.yaml").string() + " 2>&1");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\nresult: 168 primes"), std::string::npos) << out;
  EXPECT_NE(out.find("workers' logs in "), std::string::npos) << out;
  fs::remove_all(dir);
}

// Regression (issue 61): ports past 65535 were taken: `ballast run
// --metrics-port 65535` gave its workers 65536 and up, `--worker-metrics-port
// 70000` went into every worker pod, a Prometheus URL's port 70000 was
// kept in 16 bits, and "HOST:8080x" read as 8080. Each is refused, exit 2.
TEST(HostileInputsTest, PortsPast65535AreRefused) {
  const fs::path dir = TestDir();
  Write(dir / "job.yaml", "workload: {primes: {limit: 1000}}\n");
  Write(dir / "cluster.yaml", "nodes:\n  - {name: a, speed: 1}\n  - {name: b, speed: 1}\n");
  const std::string nodes = (kSource / "examples/nodes/seed000.yaml").string();
  const std::pair<std::string, std::string> cases[] = {
      {"run " + (dir / "job.yaml").string() + " --cluster " + (dir / "cluster.yaml").string() +
           " --metrics-port 65535",
       "--metrics-port 65535: the 2 nodes' workers serve /metrics on ports 65536 to 65537, past "
       "65535"},
      {"run " + (dir / "job.yaml").string() + " --metrics-port 70000", "--metrics-port"},
      {"operator --kubeconfig /nonexistent --worker-metrics-port 70000",
       "--worker-metrics-port: Value 70000 not in range 0 to 65535"},
      {"operator --kubeconfig /nonexistent --coordinator-listen 0.0.0.0:8080x",
       "--coordinator-listen 0.0.0.0:8080x: expected HOST:PORT"},
      {"operator --kubeconfig /nonexistent --health-listen :70000",
       "--health-listen :70000: expected HOST:PORT"},
      {"weights --nodes " + nodes + " --fit http://127.0.0.1:70000 --workload primes",
       "--fit: expected a port of 1 to 65535, got \"http://127.0.0.1:70000\""},
  };
  for (const auto& [arguments, says] : cases) {
    const auto [code, out] = Ballast(arguments);
    EXPECT_EQ(code, 2) << arguments << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << arguments << ": " << out;
    EXPECT_EQ(out.find("result:"), std::string::npos) << arguments << ": " << out;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ballast::cli
