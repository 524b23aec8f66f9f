// The job parser of `ballast run` (core/job/job_spec.h) against the files the
// CRDs are tested with: every example job parses, the WeightedJob with every
// key of the CRD's spec parses, and the invalid WeightedJobs the API server
// rejects (tests/operator/crds/testdata/invalid/) are rejected here too,
// except those marked "# cpp: accepts" (Kubernetes-only rules); likewise the
// invalid WeightProfiles with the profile parser (core/fuzzy/profile.h).
#include "core/job/job_spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/fuzzy/profile.h"
#include "core/job/job_json.h"

namespace ballast::job {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = BALLAST_SOURCE_DIR;
const fs::path kTestdata = kSource / "tests/operator/crds/testdata";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The .yaml files of a directory, sorted.
std::vector<fs::path> YamlFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Errors carry their field's path as data (Status::path), whether the job
// came from a file (located at its line) or from the API server's tree.
TEST(JobSpecTest, AnErrorCarriesItsFieldPathAsData) {
  auto parsed = ParseJob("workload:\n  primes: {limit: abc}\n", "job.yaml");
  ASSERT_FALSE(parsed.ok());
  // A bare spec's paths are the file's own: no "spec." before them.
  EXPECT_EQ(parsed.status().path(), "workload.primes.limit");
  EXPECT_EQ(parsed.status().message(),
            fmt::format("job.yaml:2:19: workload.primes.limit: {}", parsed.status().detail()));
  EXPECT_EQ(parsed.status().detail().rfind("expected an integer", 0), 0u);
  auto tree =
      JobSpecFromJson(nlohmann::json::parse(R"({"workload": {"primes": {}}, "itemz": 1})"), "job");
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().path(), "spec.itemz");
  EXPECT_EQ(tree.status().detail().rfind("unknown field \"itemz\"", 0), 0u)
      << tree.status().message();
  auto both = JobSpecFromJson(
      nlohmann::json::parse(
          R"({"workload": {"exec": {"command": ["true"]}}, "items": 2, "itemsFrom": {"list": ["a"]}})"),
      "job");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().path(), "spec.itemsFrom");
  EXPECT_EQ(both.status().detail(),
            "give the items' count (items) or their list (itemsFrom), not both");
}

TEST(JobSpecExamplesTest, EveryExampleJobParses) {
  const auto files = YamlFiles(kSource / "examples/jobs");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    auto job = ParseJob(ReadFile(file), file.filename().string());
    EXPECT_TRUE(job.ok()) << file << ": " << job.status().ToString();
  }
}

TEST(JobSpecExamplesTest, ManifestExamplesAreNamedByTheirMetadata) {
  auto job = ParseJob(ReadFile(kSource / "examples/jobs/primes-300000.yaml"), "primes.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "primes-300000");
}

// The matmul example's keys, as kubectl and the parser read them alike.
TEST(JobSpecExamplesTest, MatmulExampleReadsSizeAndBlock) {
  auto job = ParseJob(ReadFile(kSource / "examples/jobs/matmul-4096.yaml"), "matmul.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->workload.kind, workload::WorkloadKind::kMatmul);
  EXPECT_EQ(job->workload.matmul.n, 4096u);
  EXPECT_EQ(job->workload.matmul.block, 256u);
}

TEST(JobSpecCrdParityTest, EveryKeyOfTheCrdSpecIsAccepted) {
  auto job = ParseJob(ReadFile(kTestdata / "full-job.yaml"), "full-job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "full-job-report");
  EXPECT_EQ(job->workload.kind, workload::WorkloadKind::kExec);
  EXPECT_EQ(job->workload.items, 64u);
  EXPECT_TRUE(job->workload.exec.per_item);
  EXPECT_TRUE(job->workload.exec.serve);
  EXPECT_EQ(job->workload.exec.retries, 5u);
  EXPECT_EQ(job->workload.exec.image, "debian:bookworm-slim");
  EXPECT_EQ(job->policy.name(), "adaptive");
  EXPECT_EQ(job->policy.label, "no-comp");
  const auto& options = std::get<balance::AdaptiveOptions>(job->policy.options);
  EXPECT_FALSE(options.compensation);
  EXPECT_FALSE(options.stealing);
  EXPECT_FALSE(options.hedge);
  EXPECT_TRUE(options.backup);
  EXPECT_EQ(options.min_report_seconds, 0.25);
  EXPECT_EQ(job->profile, "raspberry-pi");
  EXPECT_EQ(job->lease_seconds, 45);
  EXPECT_EQ(job->backoff_limit, 0u);
  ASSERT_TRUE(job->active_deadline_s.has_value());
  EXPECT_EQ(*job->active_deadline_s, 600);
  EXPECT_EQ(job->verify_fraction, 0.05);
  EXPECT_EQ(job->max_failed_items, std::optional<uint64_t>(3));
  const workload::ResultSpec& result = job->workload.exec.result;
  EXPECT_EQ(result.merge.size(), 4u);
  EXPECT_EQ(result.merge.at("smallest"), workload::MergeRule::kMin);
  EXPECT_EQ(result.list_limit, 20u);
  EXPECT_EQ(result.max_bytes, 4096u);
  EXPECT_EQ(result.keep_dir, "/data/results");
}

TEST(JobSpecTest, VerifyIsOffByDefault) {
  auto job = ParseJob("workload: {primes: {limit: 1000}}\n", "job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->verify_fraction, 0);
}

// Unset by default: every other item runs and the job then fails
// (core/job/failure_policy.h), as a Job with backoffLimitPerIndex; 0 is a
// written policy (fail at the first failed item), not the default.
TEST(JobSpecTest, FailurePolicyIsUnsetByDefault) {
  auto job = ParseJob("workload: {primes: {limit: 1000}}\n", "job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_FALSE(job->max_failed_items);
  auto strict = ParseJob(
      "workload: {exec: {command: [\"true\"]}}\nitems: 9\nfailurePolicy: {maxFailedItems: 0}\n",
      "job.yaml");
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  EXPECT_EQ(strict->max_failed_items, std::optional<uint64_t>(0));
  auto tolerant = ParseJob(
      "workload: {exec: {command: [\"true\"]}}\nitems: 9\nfailurePolicy: {maxFailedItems: 4}\n",
      "job.yaml");
  ASSERT_TRUE(tolerant.ok()) << tolerant.status().ToString();
  EXPECT_EQ(tolerant->max_failed_items, std::optional<uint64_t>(4));
  auto unknown =
      ParseJob("workload: {primes: {limit: 1000}}\nfailurePolicy: {maxFailed: 1}\n", "job.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("failurePolicy"), std::string::npos)
      << unknown.status().message();
}

TEST(JobSpecTest, VerifyFractionOutsideZeroOneNamesFileLineAndRule) {
  for (const std::string bad : {"0", "-0.5", "1.01", ".nan", ".inf", "some"}) {
    SCOPED_TRACE(bad);
    auto job = ParseJob("workload: {primes: {limit: 1000}}\nverify:\n  fraction: " + bad + "\n",
                        "job.yaml");
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.status().message().rfind("job.yaml:3", 0), 0u) << job.status().message();
    EXPECT_NE(job.status().message().find("> 0 and <= 1"), std::string::npos)
        << job.status().message();
  }
  auto unknown = ParseJob("workload: {primes: {limit: 1000}}\nverify: {share: 0.1}\n", "job.yaml");
  EXPECT_FALSE(unknown.ok());
}

// Each file starts with "# server: <message>" and "# cpp: rejects" or
// "# cpp: accepts (why)".
TEST(JobSpecCrdParityTest, WhatTheApiServerRejectsTheParserRejects) {
  const auto files = YamlFiles(kTestdata / "invalid");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    const bool accepts = text.find("\n# cpp: accepts") != std::string::npos;
    ASSERT_TRUE(accepts || text.find("\n# cpp: rejects") != std::string::npos)
        << file << " says neither '# cpp: rejects' nor '# cpp: accepts'";
    auto job = ParseJob(text, file.filename().string());
    if (accepts) {
      EXPECT_TRUE(job.ok()) << file << ": " << job.status().ToString();
    } else {
      EXPECT_FALSE(job.ok()) << file << " was accepted";
      if (!job.ok()) {
        // The error names the file and a line, like every Ballast file error.
        EXPECT_EQ(job.status().message().rfind(file.filename().string() + ":", 0), 0u)
            << job.status().ToString();
      }
    }
  }
}

TEST(JobSpecCrdParityTest, WhatTheApiServerRejectsTheProfileParserRejects) {
  const auto files = YamlFiles(kTestdata / "invalid-profiles");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    ASSERT_NE(text.find("\n# cpp: rejects"), std::string::npos) << file;
    auto profile = fuzzy::ParseProfile(text, file.filename().string());
    EXPECT_FALSE(profile.ok()) << file << " was accepted";
    if (!profile.ok()) {
      // The error names the file, a line and the field's path under spec,
      // where the API server's names it too.
      EXPECT_EQ(profile.status().message().rfind(file.filename().string() + ":", 0), 0u)
          << profile.status().ToString();
      EXPECT_NE(profile.status().message().find(": spec."), std::string::npos)
          << profile.status().ToString();
    }
  }
}

TEST(JobSpecCrdParityTest, ShippedProfileParses) {
  auto profile = fuzzy::ParseProfile(ReadFile(kSource / "crds/profiles/raspberry-pi.yaml"),
                                     "raspberry-pi.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "raspberry-pi");
}

// ---------------------------------------------------------------------------
// Names, checked as Kubernetes checks them (common/names.h), with the file
// and the line.

constexpr const char* kWorkload = "  workload: {primes: {limit: 1000}}\n";

// Regression: a job named `team/a` sat at 0 % for four minutes (its name is a
// path segment of the coordinator's URLs) and exited 1 with a misleading
// message. It is refused before anything runs.
TEST(JobSpecNamesTest, JobNamedTeamSlashAIsRefusedWithFileAndLineNotAStall) {
  const std::string manifest = std::string(
                                   "apiVersion: ballast.io/v1alpha1\n"
                                   "kind: WeightedJob\n"
                                   "metadata:\n"
                                   "  name: team/a\n"
                                   "spec:\n") +
                               kWorkload;
  auto job = ParseJob(manifest, "job.yaml");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(
      job.status().message().rfind("job.yaml:4:9: metadata.name: expected a DNS-1123 label", 0), 0u)
      << job.status().message();
  EXPECT_NE(job.status().message().find("got 'team/a': '/' (character 5) is not allowed"),
            std::string::npos)
      << job.status().message();
  // The bare spec's `name` is checked alike.
  auto bare = ParseJob("name: team/a\nworkload: {primes: {limit: 1000}}\n", "bare.yaml");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().message().rfind("bare.yaml:1:7: name: expected a DNS-1123 label", 0), 0u)
      << bare.status().message();
}

// Regression: names over 255 characters or with control bytes exited 1 (the
// log file or cgroup could not be created) after the run had begun.
TEST(JobSpecNamesTest, NamesOver255CharactersOrWithControlBytesAreRefusedWithFileAndLine) {
  const std::string long_name(256, 'a');
  auto job = ParseJob("name: " + long_name + "\nworkload: {primes: {limit: 1000}}\n", "j.yaml");
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("it has 256 characters, more than 63"), std::string::npos)
      << job.status().message();
  auto control = ParseJob("name: \"a\\x07b\"\nworkload: {primes: {limit: 1000}}\n", "j.yaml");
  ASSERT_FALSE(control.ok());
  EXPECT_NE(control.status().message().find("'\\x07' (character 2) is not allowed"),
            std::string::npos)
      << control.status().message();
  auto node =
      ParseCluster("nodes:\n  - {name: " + std::string(254, 'n') + ", speed: 0.1}\n", "c.yaml");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().message().rfind("c.yaml:2:12: nodes[0].name: expected a DNS-1123 "
                                          "subdomain",
                                          0),
            0u)
      << node.status().message();
  EXPECT_NE(node.status().message().find("it has 254 characters, more than 253"),
            std::string::npos);
}

// Regression: a node named `../x` wrote its log outside the run's folder
// (and named a cgroup outside Ballast's). Node names are DNS-1123 subdomains,
// as Kubernetes names nodes: no '/', and a '.' only between letters or digits.
TEST(JobSpecNamesTest, NodeNamedDotDotSlashXIsRefusedNotALogOutsideTheRun) {
  for (const std::string name : {"../x", "a/b", "..", ".", "x/../../etc"}) {
    SCOPED_TRACE(name);
    auto cluster = ParseCluster(
        "nodes:\n  - {name: pi4b-1, speed: 0.5}\n  - name: \"" + name + "\"\n    speed: 0.5\n",
        "cluster.yaml");
    ASSERT_FALSE(cluster.ok());
    EXPECT_EQ(cluster.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(cluster.status().message().rfind(
                  "cluster.yaml:3:11: nodes[1].name: expected a DNS-1123 subdomain", 0),
              0u)
        << cluster.status().message();
  }
  auto dotted = ParseCluster("nodes:\n  - {name: pi4b-1.rack-2, speed: 0.5}\n", "cluster.yaml");
  ASSERT_TRUE(dotted.ok()) << dotted.status().ToString();
  EXPECT_EQ(dotted->nodes[0].name, "pi4b-1.rack-2");
}

TEST(JobSpecNamesTest, EveryExampleClusterHasValidNodeNames) {
  const auto files = YamlFiles(kSource / "examples/clusters");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    auto cluster = ParseCluster(ReadFile(file), file.filename().string());
    EXPECT_TRUE(cluster.ok()) << file << ": " << cluster.status().ToString();
  }
}

// A node slower than the smallest share a CPU quota or the worker's duty
// cycle can hold would get more than its speed: refused with the line.
TEST(JobSpecNamesTest, ANodeSpeedNoQuotaCanHoldIsRefusedWithFileAndLine) {
  auto cluster = ParseCluster("nodes:\n  - {name: a, speed: 0.0005}\n", "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().message(),
            "c.yaml:2:22: nodes[0].speed: expected a fraction of one core in [0.001, 64], got "
            "0.0005");
  auto slowest = ParseCluster("nodes:\n  - {name: a, speed: 0.001}\n", "c.yaml");
  ASSERT_TRUE(slowest.ok()) << slowest.status().ToString();
}

}  // namespace
// A manifest says what it is, as `kubectl apply` requires: apiVersion and
// kind are checked (the job fuzz target found a garbled apiVersion accepted).
TEST(JobSpecTest, AManifestNeedsBallastsApiVersionAndKind) {
  const std::string spec = "spec:\n  workload: {primes: {limit: 1000}}\n";
  EXPECT_TRUE(
      ParseJob("apiVersion: ballast.io/v1alpha1\nkind: WeightedJob\n" + spec, "j.yaml").ok());
  auto garbled = ParseJob("apiVersion: ballast.io/v1alpha9\nkind: WeightedJob\n" + spec, "j.yaml");
  ASSERT_FALSE(garbled.ok());
  EXPECT_EQ(
      garbled.status().message(),
      "j.yaml:1:13: apiVersion: expected \"ballast.io/v1alpha1\", got \"ballast.io/v1alpha9\"");
  auto missing = ParseJob("kind: WeightedJob\n" + spec, "j.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "j.yaml:1:1: apiVersion: missing");
  auto other = ParseJob("apiVersion: ballast.io/v1alpha1\nkind: WeightProfile\n" + spec, "j.yaml");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "j.yaml:2:7: kind: expected \"WeightedJob\", got \"WeightProfile\"");
}

// Regression: a 10 MiB `profile:` value was repeated whole in the error
// (20 MiB on stderr, no file:line). It is refused at its line, quoted cut.
TEST(JobSpecTest, ATenMebibyteProfileValueIsRefusedWithItsLineAndCut) {
  const std::string huge(10 << 20, 'p');
  auto job = ParseJob("workload: {primes: {limit: 1000}}\nprofile: " + huge + "\n", "j.yaml");
  ASSERT_FALSE(job.ok());
  const std::string message = job.status().message();
  EXPECT_EQ(message.rfind("j.yaml:2:10: profile: expected a profile's name or file", 0), 0u)
      << message.substr(0, 200);
  EXPECT_LT(message.size(), 300u);
}

}  // namespace ballast::job

namespace ballast::job {
namespace {

const char kExec[] = "workload: {exec: {command: [sh, -c, 'cat $BALLAST_ITEMS_FILE']}}\n";

TEST(JobSpecItemsFromTest, AnInlineListGivesTheItemsTheirValuesAndCosts) {
  auto job = ParseJob(std::string(kExec) +
                          "itemsFrom:\n  list: [a.jpg, {value: b.jpg, cost: 2048}, \"2024\"]\n"
                          "  order: listed\n",
                      "job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->workload.items, 3u);
  ASSERT_NE(job->workload.item_values, nullptr);
  EXPECT_EQ(*job->workload.item_values, (std::vector<std::string>{"a.jpg", "b.jpg", "2024"}));
  ASSERT_NE(job->workload.item_costs, nullptr);
  EXPECT_EQ(*job->workload.item_costs, (std::vector<double>{1, 2048, 1}));
  EXPECT_FALSE(job->item_source.pending());

  auto plain = ParseJob(std::string(kExec) + "itemsFrom: {list: [a, b]}\n", "job.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->workload.item_costs, nullptr);
}

TEST(JobSpecItemsFromTest, AListByReferenceWaitsForResolveItems) {
  auto job = ParseJob(std::string(kExec) + "itemsFrom: {file: photos.txt, format: cost-value}\n",
                      "job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_TRUE(job->item_source.pending());
  EXPECT_EQ(job->item_source.file, "photos.txt");
  EXPECT_EQ(job->workload.items, 0u);
  Status bad = ResolveItems(&*job, "10 a\n12k b\n", "photos.txt");
  EXPECT_NE(bad.message().find("photos.txt:2: expected a cost"), std::string::npos)
      << bad.message();
  EXPECT_EQ(bad.path(), "") << "a line of a file is not a field";
  // Nor is the file: a list of no items names it, with no path.
  Status empty = ResolveItems(&*job, "\n", "photos.txt");
  EXPECT_EQ(empty.message(), "photos.txt: no items");
  EXPECT_EQ(empty.path(), "");
  ASSERT_TRUE(ResolveItems(&*job, "10 a\n\n20\tb c\n", "photos.txt").ok());
  EXPECT_FALSE(job->item_source.pending());
  EXPECT_EQ(job->workload.items, 2u);
  // Dealt by the default policy's order (adaptive: largest first).
  EXPECT_EQ((*job->workload.item_values)[0], "b c");
  EXPECT_EQ((*job->workload.item_costs)[0], 20);

  auto config_map = ParseJob(
      std::string(kExec) + "itemsFrom: {configMap: {name: photos, key: list.txt}}\n", "job.yaml");
  ASSERT_TRUE(config_map.ok()) << config_map.status().message();
  EXPECT_EQ(config_map->item_source.config_map, "photos");
  EXPECT_EQ(config_map->item_source.key, "list.txt");
}

// Items with costs are dealt in the order the policy deals in
// (balance/item_order.h) unless itemsFrom.order says: item i is then the i-th
// largest, ties as listed; values go with their items.
TEST(JobSpecItemsFromTest, ItemsWithCostsAreDealtInThePolicysOrderUnlessTheJobSays) {
  const std::string list =
      "itemsFrom:\n  list: [{value: s, cost: 1}, {value: l, cost: 9}, {value: m, cost: 5}, "
      "{value: m2, cost: 5}]\n";
  struct Case {
    std::string extra;
    std::vector<std::string> values;
  };
  const std::vector<Case> cases = {
      {"", {"l", "m", "m2", "s"}},  // adaptive, the default policy
      {"policy: mms\n", {"l", "m", "m2", "s"}},
      {"policy: guided\n", {"s", "l", "m", "m2"}},
      {"  order: listed\n", {"s", "l", "m", "m2"}},
      {"  order: largestFirst\npolicy: equal\n", {"l", "m", "m2", "s"}},
      {"  order: policy\npolicy: equal\n", {"s", "l", "m", "m2"}},
  };
  for (const Case& c : cases) {
    // The order line belongs to itemsFrom, the policy line to the spec.
    const std::string order =
        c.extra.starts_with("  ") ? c.extra.substr(0, c.extra.find('\n') + 1) : "";
    const std::string rest = c.extra.substr(order.size());
    auto job = ParseJob(std::string(kExec) + list + order + rest, "job.yaml");
    ASSERT_TRUE(job.ok()) << c.extra << job.status().message();
    EXPECT_EQ(*job->workload.item_values, c.values) << c.extra;
  }
  auto by_file =
      ParseJob(std::string(kExec) + "itemsFrom: {file: p.txt, format: cost-value, order: listed}\n",
               "job.yaml");
  ASSERT_TRUE(by_file.ok()) << by_file.status().message();
  ASSERT_TRUE(ResolveItems(&*by_file, "1 s\n9 l\n", "p.txt").ok());
  EXPECT_EQ(*by_file->workload.item_values, (std::vector<std::string>{"s", "l"}));
  auto bad = ParseJob(std::string(kExec) + list + "  order: biggest\n", "job.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "itemsFrom.order: expected \"policy\", \"largestFirst\" or \"listed\", got "
                "\"biggest\""),
            std::string::npos)
      << bad.status().message();
}

TEST(JobSpecItemsFromTest, TheCrdsItemsExampleParses) {
  auto job = ParseJob(ReadFile(kTestdata / "items-job.yaml"), "items-job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->workload.items, 3u);
  // Dealt largest first (the example's policy deals so).
  EXPECT_EQ(*job->workload.item_values,
            (std::vector<std::string>{"photos/b.jpg", "photos/a.jpg", "photos/c d.jpg"}));
  EXPECT_EQ(*job->workload.item_costs, (std::vector<double>{2048000, 1, 0.5}));
}

TEST(JobSpecItemsFromTest, MistakesNameTheFieldAndLine) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {std::string(kExec) + "items: 3\nitemsFrom: {list: [a]}\n",
       "job.yaml:3:12: itemsFrom: give the items' count (items) or their list"},
      {"workload: {primes: {limit: 100}}\nitemsFrom: {list: [a]}\n",
       "itemsFrom: a list of items is for exec workloads"},
      {std::string(kExec) + "itemsFrom: {list: [a], file: b}\n",
       "itemsFrom.file: expected exactly one of list, configMap, file, got list and file"},
      {std::string(kExec) + "itemsFrom: {format: value}\n",
       "itemsFrom: expected exactly one of list, configMap, file, got none"},
      {std::string(kExec) + "itemsFrom: {list: [a], format: cost-value}\n",
       "itemsFrom.format: format is for a list given one item a line"},
      {std::string(kExec) + "itemsFrom: {file: a, format: csv}\n",
       "itemsFrom.format: expected \"value\" or \"cost-value\""},
      {std::string(kExec) + "itemsFrom:\n  list:\n    - a\n    - 2024\n",
       "job.yaml:5:7: itemsFrom.list[1]: expected a string or {value, cost}"},
      {std::string(kExec) + "itemsFrom: {list: [a, {value: b, cost: 0}]}\n",
       "itemsFrom.list[1].cost: expected a number > 0"},
      {std::string(kExec) + "itemsFrom: {list: [a, \"b\\nc\"]}\n",
       "itemsFrom.list[1]: an item's value holds the control character U+000A at byte 1"},
      {std::string(kExec) + "itemsFrom: {configMap: {name: Photos, key: a}}\n",
       "itemsFrom.configMap.name: expected a DNS-1123 subdomain"},
      {std::string(kExec) + "itemsFrom: {configMap: {name: p, key: a/b}}\n",
       "itemsFrom.configMap.key: expected a ConfigMap key"},
      {std::string(kExec) + "itemsFrom: {list: []}\n",
       "itemsFrom.list: expected a list of 1 to 100000 items"},
  };
  for (const Case& c : cases) {
    auto job = ParseJob(c.text, "job.yaml");
    ASSERT_FALSE(job.ok()) << c.text;
    EXPECT_NE(job.status().message().find(c.expected), std::string::npos)
        << job.status().message() << "\nexpected: " << c.expected;
  }
}

TEST(JobSpecItemsFromTest, AResultDeclarationIsReadAndBounded) {
  auto job = ParseJob(
      "workload:\n  exec:\n    command: [sh, -c, exit]\n    result:\n      merge: {\"n\": sum, "
      "names: "
      "list}\n"
      "      listLimit: 20\n      keepDir: /data/out\nitems: 4\n",
      "job.yaml");
  ASSERT_TRUE(job.ok()) << job.status().message();
  const workload::ResultSpec& result = job->workload.exec.result;
  EXPECT_EQ(result.merge.at("n"), workload::MergeRule::kSum);
  EXPECT_EQ(result.merge.at("names"), workload::MergeRule::kList);
  EXPECT_EQ(result.list_limit, 20u);
  EXPECT_EQ(result.keep_dir, "/data/out");

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"merge: {count: avg}", "workload.exec.result.merge.count: expected sum, min, max or list"},
      {"merge: {}", "workload.exec.result.merge: expected a map of 1 to 32 fields"},
      {"merge: {a: list, b: list, c: list}\n      listLimit: 100",
       "workload.exec.result.listLimit: 3 list fields keeping 100 entries each"},
      {"merge: {count: sum}\n      keepDir: out",
       "workload.exec.result.keepDir: expected an "
       "absolute directory path"},
      {"merge: {count: sum}\n      maxBytes: 1000000", "workload.exec.result.maxBytes"},
  };
  for (const auto& [body, expected] : bad) {
    auto refused = ParseJob("workload:\n  exec:\n    command: [sh, -c, exit]\n    result:\n      " +
                                body + "\nitems: 4\n",
                            "job.yaml");
    ASSERT_FALSE(refused.ok()) << body;
    EXPECT_NE(refused.status().message().find(expected), std::string::npos)
        << refused.status().message() << "\nexpected: " << expected;
  }
}

// `merge: {n: sum}` was field "n" to `ballast run` and "false" through
// kubectl (YAML 1.1 reads an unquoted n as a boolean), so a command writing
// {"n": ...} worked in one and failed in the other. Both readers now see
// "false" and refuse it the same way; quoted, the name is "n" in both.
TEST(JobSpecItemsFromTest, BothReadersAgreeOnAMergeFieldYamlReadsAsABoolean) {
  auto job_file = [](const std::string& merge) {
    return "workload:\n  exec:\n    command: [sh, -c, exit]\n    result:\n      merge: " + merge +
           "\nitems: 4\n";
  };
  // What kubectl sends for the same manifest: the key as go-yaml v2 resolves it.
  auto as_applied = [](const std::string& key) {
    return JobSpecFromJson(
        nlohmann::json::parse(
            R"({"workload": {"exec": {"command": ["sh"], "result": {"merge": {")" + key +
            R"(": "sum"}}}}, "items": 4})"),
        "job");
  };
  const std::vector<std::pair<std::string, std::string>> unquoted = {
      {"n", "false"}, {"N", "false"},  {"no", "false"}, {"Off", "false"}, {"FALSE", "false"},
      {"y", "true"},  {"Yes", "true"}, {"ON", "true"},  {"true", "true"},
  };
  for (const auto& [written, sent] : unquoted) {
    SCOPED_TRACE(written);
    auto run = ParseJob(job_file("{" + written + ": sum}"), "job.yaml");
    ASSERT_FALSE(run.ok());
    const std::string expected = "workload.exec.result.merge." + sent + ": a field named " + sent +
                                 " is what YAML makes of an unquoted ";
    EXPECT_NE(run.status().message().find("job.yaml:5:"), std::string::npos)
        << run.status().message();
    EXPECT_NE(run.status().message().find(expected), std::string::npos) << run.status().message();
    EXPECT_NE(run.status().message().find("quote the name (\"n\": sum) or choose another"),
              std::string::npos)
        << run.status().message();
    auto applied = as_applied(sent);
    ASSERT_FALSE(applied.ok());
    EXPECT_NE(applied.status().message().find(expected), std::string::npos)
        << applied.status().message();
  }
  for (const char* quoted : {"\"n\"", "'y'", "\"off\"", "!!str yes"}) {
    SCOPED_TRACE(quoted);
    auto run = ParseJob(job_file(std::string("{") + quoted + ": sum}"), "job.yaml");
    ASSERT_TRUE(run.ok()) << run.status().message();
    ASSERT_EQ(run->workload.exec.result.merge.size(), 1u);
    const std::string name = run->workload.exec.result.merge.begin()->first;
    EXPECT_TRUE(name == "n" || name == "y" || name == "off" || name == "yes") << name;
    auto applied = as_applied(name);
    ASSERT_TRUE(applied.ok()) << applied.status().message();
    EXPECT_EQ(applied->workload.exec.result.merge, run->workload.exec.result.merge);
  }
}

// `merge: {0x10: sum}` was field "0x10" to `ballast run` and "16" through
// kubectl (go-yaml v2 reads 0x10, 017, 1e3, +1 and 1_000 as numbers and
// sends their decimal text), so a command's {"0x10": ...} worked in one
// and failed in the other. A name YAML reads as a number is refused by both
// readers, quoted or not (kubectl's "16" cannot say which it was).
TEST(JobSpecItemsFromTest, BothReadersRefuseAMergeFieldYamlReadsAsANumber) {
  auto job_file = [](const std::string& merge) {
    return "workload:\n  exec:\n    command: [sh, -c, exit]\n    result:\n      merge: " + merge +
           "\nitems: 4\n";
  };
  auto as_applied = [](const std::string& key) {
    return JobSpecFromJson(
        nlohmann::json::parse(
            R"({"workload": {"exec": {"command": ["sh"], "result": {"merge": {")" + key +
            R"(": "sum"}}}}, "items": 4})"),
        "job");
  };
  const std::vector<std::pair<std::string, std::string>> numbers = {
      {"0x10", "16"}, {"017", "15"},  {"1e3", "1000"}, {"+1", "1"},   {"1_000", "1000"},
      {"0b101", "5"}, {"0o17", "15"}, {"-2", "-2"},    {".5", "0.5"}, {"\"16\"", "16"},
  };
  for (const auto& [written, sent] : numbers) {
    SCOPED_TRACE(written);
    auto run = ParseJob(job_file("{" + written + ": sum}"), "job.yaml");
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.status().message().find("job.yaml:5:"), std::string::npos)
        << run.status().message();
    EXPECT_NE(run.status().message().find(" is a number to YAML, which kubectl sends as its "
                                          "decimal text"),
              std::string::npos)
        << run.status().message();
    auto applied = as_applied(sent);
    ASSERT_FALSE(applied.ok());
    EXPECT_NE(applied.status().message().find("workload.exec.result.merge." + sent +
                                              ": a field named " + sent + " is a number to YAML"),
              std::string::npos)
        << applied.status().message();
  }
  // Names that only start like a number are names to both.
  for (const char* name : {"x16", "1a", "_1", "0x", "1.2.3", "v1_000", "0b2", "e3"}) {
    SCOPED_TRACE(name);
    auto run = ParseJob(job_file(std::string("{") + name + ": sum}"), "job.yaml");
    ASSERT_TRUE(run.ok()) << run.status().message();
    ASSERT_EQ(run->workload.exec.result.merge.count(name), 1u);
    auto applied = as_applied(name);
    ASSERT_TRUE(applied.ok()) << applied.status().message();
  }
}

}  // namespace
}  // namespace ballast::job
