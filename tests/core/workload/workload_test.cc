// Tests of WorkloadSpec (core/workload/workload.h): the YAML union and its
// defaults, every error naming its line, the item mappings, and JSON.
//
// Every bad document marks the line its error must name with a "# <-"
// comment; the test checks that the message starts with "<file>:<that line>:".
#include "core/workload/workload.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/json_read.h"
#include "core/config/document.h"
#include "tests/support/marked_line.h"

namespace ballast::workload {
namespace {

using ::ballast::testing::MarkedLine;

// Reads a job document's `workload:` with its optional top-level `items:`,
// as the job's reader does, the error located in the file.
StatusOr<WorkloadSpec> ParseJob(const std::string& text) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(text, "job.yaml"));
  std::optional<uint64_t> items;
  if (const auto* node = json_read::Find(document.tree, "items")) items = node->get<uint64_t>();
  auto workload = json_read::Require(document.tree, "", "workload");
  if (!workload.ok()) return document.source.Locate(workload.status());
  auto spec = WorkloadSpecFromJson(**workload, items, "workload");
  if (!spec.ok()) return document.source.Locate(spec.status());
  return spec;
}

TEST(WorkloadYamlTest, PrimesDefaultsToTrialWithOneItemPerOddCandidate) {
  auto spec = ParseJob("workload:\n  primes: {limit: 300000}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kPrimes);
  EXPECT_EQ(spec->primes.limit, 300000u);
  EXPECT_EQ(spec->primes.method, PrimesSpec::Method::kTrial);
  EXPECT_EQ(spec->items, 150000u);
  EXPECT_EQ(spec->cost, balance::CostShape::kLinear);
}

TEST(WorkloadYamlTest, SieveDefaultsToAFewThousandItemsForTenToTheTen) {
  auto spec = ParseJob("workload:\n  primes: {limit: 10000000000, method: sieve}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->primes.method, PrimesSpec::Method::kSieve);
  EXPECT_EQ(spec->items, (10'000'000'000ULL + kSieveItemWidth - 1) / kSieveItemWidth);
  EXPECT_GT(spec->items, 1000u);
  EXPECT_LT(spec->items, 10000u);
  EXPECT_EQ(spec->cost, balance::CostShape::kUniform);
}

TEST(WorkloadYamlTest, ItemsOfTheJobOverrideTheDefault) {
  auto spec = ParseJob("items: 40\nworkload:\n  primes: {limit: 1000, method: sieve}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->items, 40u);
}

TEST(WorkloadYamlTest, MatmulHasOneItemPerBlockOfC) {
  auto spec = ParseJob("workload:\n  matmul: {size: 1024, block: 128, seed: 7}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kMatmul);
  EXPECT_EQ(spec->matmul, (MatmulSpec{1024, 128, 7}));
  EXPECT_EQ(spec->items, 64u);
  EXPECT_EQ(spec->cost, balance::CostShape::kUniform);
  EXPECT_TRUE(ParseJob("items: 64\nworkload:\n  matmul: {size: 1024, block: 128}\n").ok());
}

TEST(WorkloadYamlTest, ExecReadsEveryField) {
  auto spec = ParseJob(R"(items: 12
workload:
  exec: {command: ["sh", "-c", "echo $BALLAST_START"], perItem: true, retries: 5, image: busybox,
         backups: false, serve: true}
)");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kExec);
  EXPECT_EQ(spec->exec.command, (std::vector<std::string>{"sh", "-c", "echo $BALLAST_START"}));
  EXPECT_TRUE(spec->exec.per_item);
  EXPECT_EQ(spec->exec.retries, 5u);
  EXPECT_EQ(spec->exec.image, "busybox");
  EXPECT_FALSE(spec->exec.backups);
  EXPECT_TRUE(spec->exec.serve);
  EXPECT_EQ(spec->items, 12u);
  auto plain = ParseJob("items: 3\nworkload:\n  exec: {command: [\"true\"]}\n");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->exec.per_item);
  EXPECT_EQ(plain->exec.retries, 2u);
  EXPECT_TRUE(plain->exec.backups) << "the contract (docs/getting-started.md) allows a second run";
  EXPECT_FALSE(plain->exec.serve) << "a run's own process unless the command says it serves";
}

// Each bad document and a fragment its message must contain.
struct BadCase {
  const char* name;
  const char* text;
  const char* fragment;
};

const BadCase kBad[] = {
    {"no member", "workload: {}  # <-\n", "exactly one of primes, matmul, exec"},
    {"two members", "workload:\n  primes: {limit: 10}\n  matmul: {size: 4, block: 2}  # <-\n",
     "workload.matmul: expected exactly one of primes, matmul, exec, got primes and matmul"},
    {"unknown member", "workload:\n  fft: {n: 4}  # <-\n", "fft"},
    {"member not a map", "workload:\n  primes: 300000  # <-\n",
     "workload.primes: expected an object"},
    {"unknown primes key", "workload:\n  primes:\n    limit: 10\n    lmit: 3  # <-\n", "lmit"},
    {"missing limit", "workload:\n  primes: {method: sieve}  # <-\n", "limit"},
    {"zero limit", "workload:\n  primes:\n    limit: 0  # <-\n", "expected"},
    {"negative limit", "workload:\n  primes:\n    limit: -5  # <-\n", "expected"},
    {"bad method", "workload:\n  primes:\n    limit: 10\n    method: wheel  # <-\n",
     "\"trial\" or \"sieve\""},
    {"too many trial items", "items: 6\nworkload:\n  primes: {limit: 10}  # <-\n", "at most 5"},
    {"size not a multiple of block", "workload:\n  matmul:\n    size: 100\n    block: 30  # <-\n",
     "divisor of size = 100"},
    {"zero size", "workload:\n  matmul:\n    size: 0  # <-\n    block: 1\n", "expected"},
    {"matmul items mismatch", "items: 10\nworkload:\n  matmul: {size: 8, block: 2}  # <-\n",
     "(n/block)^2 = 16"},
    {"exec without items", "workload:\n  exec: {command: [\"true\"]}  # <-\n", "items"},
    {"empty command", "items: 2\nworkload:\n  exec:\n    command: []  # <-\n", "non-empty"},
    {"command not a list", "items: 2\nworkload:\n  exec:\n    command: echo hi  # <-\n",
     "non-empty list"},
    {"empty program", "items: 2\nworkload:\n  exec:\n    command: [\"\", x]  # <-\n", "program"},
    {"bad perItem",
     "items: 2\nworkload:\n  exec:\n    command: [\"true\"]\n    perItem: sometimes  # <-\n",
     "expected"},
    {"bad serve",
     "items: 2\nworkload:\n  exec:\n    command: [\"true\"]\n    serve: always  # <-\n",
     "expected"},
    {"bad backups",
     "items: 2\nworkload:\n  exec:\n    command: [\"true\"]\n    backups: maybe  # <-\n",
     "expected"},
    {"negative retries",
     "items: 2\nworkload:\n  exec:\n    command: [\"true\"]\n    retries: -1  # <-\n", "expected"},
};

TEST(WorkloadYamlTest, EveryErrorNamesItsLine) {
  for (const BadCase& bad : kBad) {
    SCOPED_TRACE(bad.name);
    auto spec = ParseJob(bad.text);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalid);
    const std::string message = spec.status().message();
    const int line = MarkedLine(bad.text);
    ASSERT_GT(line, 0);
    EXPECT_EQ(message.rfind("job.yaml:" + std::to_string(line) + ":", 0), 0u) << message;
    EXPECT_NE(message.find(bad.fragment), std::string::npos) << message;
  }
}

WorkloadSpec Primes(uint64_t limit, PrimesSpec::Method method, uint64_t items = 0) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kPrimes;
  spec.primes = {limit, method};
  spec.items = items == 0 ? DefaultItems(spec) : items;
  spec.cost = DefaultCost(spec);
  return spec;
}

// Checks that the item spans tile [0, limit) in order with no empty span.
void ExpectSpansTile(const WorkloadSpec& spec) {
  uint64_t next = 0;
  for (uint64_t item = 0; item < spec.items; ++item) {
    const balance::Range span = PrimesItemSpan(spec, item);
    ASSERT_EQ(span.begin, next) << "item " << item;
    ASSERT_FALSE(span.empty()) << "item " << item;
    next = span.end;
  }
  EXPECT_EQ(next, spec.primes.limit);
}

TEST(WorkloadMappingTest, TrialItemIsItsOddCandidateAndItemZeroHoldsTwo) {
  const WorkloadSpec spec = Primes(300000, PrimesSpec::Method::kTrial);
  EXPECT_EQ(PrimesItemSpan(spec, 0), (balance::Range{0, 3}));
  EXPECT_EQ(PrimesItemSpan(spec, 1), (balance::Range{3, 5}));
  EXPECT_EQ(PrimesItemSpan(spec, 7), (balance::Range{15, 17}));
  EXPECT_EQ(PrimesItemSpan(spec, 149999), (balance::Range{299999, 300000}));
  EXPECT_EQ(PrimesRangeSpan(spec, {10, 20}), (balance::Range{21, 41}));
  ExpectSpansTile(spec);
}

TEST(WorkloadMappingTest, SpansTileTheNumbersForOddLimitsAndChosenItems) {
  for (uint64_t limit : {2, 3, 4, 5, 7, 100, 101, 99991}) {
    for (auto method : {PrimesSpec::Method::kTrial, PrimesSpec::Method::kSieve}) {
      SCOPED_TRACE(std::to_string(limit));
      ExpectSpansTile(Primes(limit, method));
      const WorkloadSpec one = Primes(limit, method, 1);
      EXPECT_EQ(PrimesItemSpan(one, 0), (balance::Range{0, limit}));
    }
  }
  ExpectSpansTile(Primes(99991, PrimesSpec::Method::kTrial, 777));
  ExpectSpansTile(Primes(99991, PrimesSpec::Method::kSieve, 99991));
  ExpectSpansTile(Primes(10'000'000'000ULL, PrimesSpec::Method::kSieve));
}

// The cut i * limit / items passes 2^64 here (about 10^27): it is computed exactly without a
// 128-bit integer, which 32-bit ARM (the armv7 image) does not have.
TEST(WorkloadMappingTest, SpansOfTheLargestLimitAreExactWithoutA128BitInteger) {
  const uint64_t limit = kMaxPrimesLimit;  // 10^15
  const WorkloadSpec even = Primes(limit, PrimesSpec::Method::kSieve, 1'000'000);
  EXPECT_EQ(PrimesItemSpan(even, 0), (balance::Range{0, 1'000'000'000}));
  EXPECT_EQ(PrimesItemSpan(even, 123'456),
            (balance::Range{123'456'000'000'000, 123'457'000'000'000}));
  EXPECT_EQ(PrimesItemSpan(even, 999'999), (balance::Range{999'999'000'000'000, limit}));
  // 10^15 / (10^12 - 1) = 1000.000000001..: the last item starts at floor(10^15 - that).
  const WorkloadSpec uneven = Primes(limit, PrimesSpec::Method::kSieve, 999'999'999'999);
  EXPECT_EQ(PrimesItemSpan(uneven, 999'999'999'998), (balance::Range{999'999'999'998'999, limit}));
  EXPECT_EQ(PrimesItemSpan(uneven, 1), (balance::Range{1000, 2000}));
}

TEST(WorkloadMappingTest, MatmulBlocksAreRowMajor) {
  const MatmulSpec spec{12, 4, 1};
  EXPECT_EQ(MatmulBlocksPerSide(spec), 3u);
  EXPECT_EQ(MatmulBlock(spec, 0).row, 0u);
  EXPECT_EQ(MatmulBlock(spec, 5).row, 1u);
  EXPECT_EQ(MatmulBlock(spec, 5).col, 2u);
}

TEST(WorkloadMappingTest, MatmulEntriesAreSmallIntegersThatDependOnSeedAndPlace) {
  const MatmulSpec spec{64, 8, 7};
  int distinct_from_b = 0;
  int distinct_from_other_seed = 0;
  int seen[17] = {};
  for (uint32_t i = 0; i < 64; ++i) {
    for (uint32_t j = 0; j < 64; ++j) {
      const int a = MatmulEntry(spec, Matrix::kA, i, j);
      ASSERT_GE(a, -8);
      ASSERT_LE(a, 8);
      ++seen[a + 8];
      distinct_from_b += a != MatmulEntry(spec, Matrix::kB, i, j);
      distinct_from_other_seed += a != MatmulEntry({64, 8, 8}, Matrix::kA, i, j);
    }
  }
  for (int count : seen) EXPECT_GT(count, 100);  // all 17 values, about 241 each
  EXPECT_GT(distinct_from_b, 3500);
  EXPECT_GT(distinct_from_other_seed, 3500);
  EXPECT_EQ(Mix64(0), 0xE220A8397B1DCDAFULL);  // SplitMix64's first output for seed 0
}

TEST(WorkloadJsonTest, EveryKindRoundTrips) {
  const std::vector<std::string> jobs = {
      "workload:\n  primes: {limit: 300000}\n",
      "items: 9\nworkload:\n  primes: {limit: 1000000, method: sieve}\n",
      "workload:\n  matmul: {size: 256, block: 32, seed: 9223372036854775807}\n",
      "items: 5\nworkload:\n  exec: {command: [sh, -c, 'exit 0'], perItem: true, image: x}\n",
      "items: 5\nworkload:\n  exec: {command: [python3, serve.py], serve: true}\n",
  };
  for (const std::string& job : jobs) {
    SCOPED_TRACE(job);
    auto spec = ParseJob(job);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    const nlohmann::json json = WorkloadToJson(*spec);
    auto back = WorkloadFromJson(nlohmann::json::parse(json.dump()));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, *spec);
  }
}

TEST(WorkloadJsonTest, KeysAreCamelCaseAsInYaml) {
  auto spec = ParseJob("items: 5\nworkload:\n  exec: {command: [\"true\"], perItem: true}\n");
  ASSERT_TRUE(spec.ok());
  const nlohmann::json json = WorkloadToJson(*spec);
  EXPECT_TRUE(json["exec"].contains("perItem"));
  EXPECT_EQ(json["items"], 5);
  EXPECT_EQ(json["costModel"], "uniform");
}

TEST(WorkloadJsonTest, MalformedJsonIsInvalidNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"items": 5, "costModel": "uniform"})", "exactly one"},
      {R"({"primes": {"limit": 10, "method": "trial"}, "costModel": "linear"})", "items"},
      {R"({"primes": {"limit": "10", "method": "trial"}, "items": 5, "costModel": "linear"})",
       "primes.limit"},
      {R"({"primes": {"limit": 10, "method": "wheel"}, "items": 5, "costModel": "linear"})",
       "workload.primes.method"},
      {R"({"primes": {"limit": 10, "method": "trial", "x": 1}, "items": 5, "costModel": "linear"})",
       "unknown field \"x\""},
      {R"({"matmul": {"size": 10, "block": 3, "seed": 1}, "items": 9, "costModel": "uniform"})",
       "matmul.block"},
      {R"({"exec": {"command": [], "perItem": false, "retries": 2, "image": ""}, "items": 1,
          "costModel": "uniform"})",
       "exec.command"},
      {R"({"exec": {"command": ["a"], "perItem": 1, "retries": 2, "image": ""}, "items": 1,
          "costModel": "uniform"})",
       "exec.perItem"},
      {R"({"matmul": {"size": 4, "block": 2, "seed": 1}, "items": 4, "costModel": "cubic"})",
       "costModel"},
      {R"([1, 2])", "object"},
  };
  for (const auto& [text, fragment] : cases) {
    SCOPED_TRACE(text);
    auto spec = WorkloadFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalid);
    EXPECT_NE(spec.status().message().find(fragment), std::string::npos) << spec.status().message();
  }
}

}  // namespace
}  // namespace ballast::workload
