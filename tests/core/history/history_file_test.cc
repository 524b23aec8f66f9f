// Tests of the history file of `ballast run --history` (core/history/history_file.h):
// the store's form read back, a file of the earlier form converted to one
// relative sample per node, and bad files named with their field.
#include "core/history/history_file.h"

#include <gtest/gtest.h>

#include <string>

#include "core/fuzzy/history_prior.h"
#include "tests/support/history_keys.h"

namespace ballast::history {
namespace {

TEST(HistoryFileTest, ReadsTheStoresForm) {
  SpeedStore store;
  ASSERT_TRUE(RecordJob(store, testing::kPrimesKey, {{"pi4b-a", 3}, {"pi3b", 1}}, 1000, {}));
  ASSERT_TRUE(RecordJob(store,
                        HistoryKey(workload::WorkloadKind::kExec, "registry.local/recompress"),
                        {{"pi4b-a", 2}, {"pi3b", 2}}, 1100, {}));
  auto read = ReadHistoryFile(StoreToText(store, {}) + "\n", "h.json", {});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, store);
}

TEST(HistoryFileTest, ABlankFileOrOneWithoutEntriesIsEmpty) {
  for (const char* text : {"", " \n", R"({"version": 1})", R"({"version": 1, "nodes": {}})",
                           R"({"version": 1, "workloads": {}})"}) {
    auto read = ReadHistoryFile(text, "h.json", {});
    ASSERT_TRUE(read.ok()) << text << ": " << read.status().ToString();
    EXPECT_TRUE(read->nodes.empty()) << text;
  }
}

// A file of the earlier form (each node's aggregate per workload kind) gives
// each node one sample: its speed over the mean of its workload's speeds, at
// the aggregate's time. Its sample count and spread are not kept: a sample of
// the store is a job.
TEST(HistoryFileTest, AnOldFileGivesEachNodeOneRelativeSample) {
  const std::string old = R"({"version": 1, "workloads": {
    "primes": [{"node": "pi4b-a", "speed": 900, "samples": 12, "time": 1795000000, "spread": 0.01},
               {"node": "pi3b", "speed": 300, "samples": 3.5, "time": 1795000100}],
    "exec": [{"node": "pi5-a", "speed": 4.0, "samples": 40, "time": 0}]}})";
  auto read = ReadHistoryFile(old, "h.json", {});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  // Mean 600: pi4b-a 1.5, pi3b 0.5. A workload of one node says nothing.
  SpeedStore want;
  want.nodes["pi4b-a"]["primes"] = {{1.5, 1795000000}};
  want.nodes["pi3b"]["primes"] = {{0.5, 1795000100}};
  EXPECT_EQ(*read, want);
  // The prior it gives: the ratio 3, one sample each.
  const auto known =
      LookupHistory(*read, testing::kPrimesKey, {"pi4b-a", "pi3b", "pi5-a"}, 1795000160);
  ASSERT_EQ(known.size(), 2u);
  EXPECT_DOUBLE_EQ(known[0].samples, 1);
  EXPECT_DOUBLE_EQ(known[0].age_seconds, 160);
  EXPECT_DOUBLE_EQ(known[1].age_seconds, 60);
  fuzzy::HistoryPriorOptions options;
  options.full_trust_samples = kFullTrustJobs;
  const auto priors = fuzzy::BlendHistoryPrior({{"pi4b-a", 1}, {"pi3b", 1}}, known, options);
  EXPECT_EQ(priors[0].node, "pi3b");
  EXPECT_EQ(priors[0].source, fuzzy::PriorSource::kBlended);
  EXPECT_NEAR(priors[0].credibility, std::sqrt(1 / kFullTrustJobs), 1e-12);
  EXPECT_LT(priors[0].value, priors[1].value);
  // Written back in the store's form, it reads as the same store.
  const std::string written = StoreToText(*read, {});
  EXPECT_EQ(written.find("workloads"), std::string::npos) << written;
  auto again = ReadHistoryFile(written, "h.json", {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *read);
}

// Speeds far apart stay positive and within the store's bounds.
TEST(HistoryFileTest, AnOldFilesExtremeSpeedsStayWithinTheStoresBounds) {
  const std::string old = R"({"version": 1, "workloads": {"primes": [
    {"node": "a", "speed": 1e300, "samples": 1, "time": 1099511627776},
    {"node": "b", "speed": 1e-300, "samples": 1, "time": 0}]}})";
  auto read = ReadHistoryFile(old, "h.json", {});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_DOUBLE_EQ(read->nodes["a"]["primes"][0].speed, 2);
  EXPECT_DOUBLE_EQ(read->nodes["a"]["primes"][0].at, kMaxSampleTime);
  EXPECT_GT(read->nodes["b"]["primes"][0].speed, 0);
  auto again = ReadHistoryFile(StoreToText(*read, {}), "h.json", {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
}

TEST(HistoryFileTest, BadFilesNameTheField) {
  const std::string good = R"("node": "a", "speed": 1, "samples": 1, "time": 5)";
  struct Case {
    std::string text;
    std::string says;
  } cases[] = {
      {"not json", "h.json"},
      {"[]", "h.json: document: expected an object"},
      // The store's form.
      {R"({"version": 2})", "h.json: version: expected 1, got 2"},
      {R"({"version": 1, "extra": 0})", "h.json: extra: unknown field \"extra\""},
      {R"({"version": 1, "nodes": []})", "h.json: nodes: expected an object"},
      {R"({"version": 1, "nodes": {"a": {"primes": [[0, 5]]}}})",
       "h.json: nodes.a.primes[0]: expected [speed, time] with speed in (0, 1e9]"},
      {R"({"version": 1, "nodes": {"a": {"primes": [[1, 1e12]]}}})",
       "h.json: nodes.a.primes[0]: expected [speed, time]"},
      {R"({"version": 1, "nodes": {"a": [[[[[[[[[1]]]]]]]]]}})", "nested deeper than 8"},
      // The earlier form.
      {R"({"version": 2, "workloads": {}})", "h.json: version: expected an integer in [1, 1]"},
      {R"({"version": 1, "workloads": {}, "nodes": {}})", "unknown field \"nodes\""},
      {R"({"version": 1, "workloads": []})", "h.json: workloads: expected an object"},
      {R"({"version": 1, "workloads": {"primes": {}}})", "workloads.primes: expected an array"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": -1, "samples": 1,
          "time": 5}]}})",
       "h.json: workloads.primes[0].speed: expected a number > 0"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 0,
          "time": 5}]}})",
       "workloads.primes[0].samples"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 1,
          "time": -5}]}})",
       "workloads.primes[0].time"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1, "samples": 1,
          "time": 5, "spread": -1}]}})",
       "workloads.primes[0].spread: expected a number in [0, 1e6]"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "Bad_Name", "speed": 1,
          "samples": 1, "time": 5}]}})",
       "workloads.primes[0].node"},
      {R"({"version": 1, "workloads": {"primes": [{)" + good + "}, {" + good + "}]}}",
       "node a listed twice"},
      {R"({"version": 1, "workloads": {"primes": [{"node": "a", "speed": 1e999,
          "samples": 1, "time": 5}]}})",
       "h.json"},
  };
  for (const Case& c : cases) {
    auto read = ReadHistoryFile(c.text, "h.json", {});
    ASSERT_FALSE(read.ok()) << c.text;
    EXPECT_EQ(read.status().code(), StatusCode::kInvalid) << c.text;
    EXPECT_NE(read.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << read.status().message();
  }
}

// docs/history.md says both forms' node names are names as Kubernetes names
// nodes; the store's form took any 1 to 253 bytes (a '/', capitals, a
// control byte), which the earlier form and a cluster file refuse.
TEST(HistoryFileTest, NodeNamesKubernetesWouldRefuseAreRefusedInBothForms) {
  for (const char* name : {"Bad_Name", "a/b", "UPPER", "-lead", "trail-", "a..b", "x\\u0007y"}) {
    SCOPED_TRACE(name);
    const std::string store = std::string(R"({"version": 1, "nodes": {")") + name +
                              R"(": {"primes": [[1, 5]]}, "ok": {"primes": [[1, 5]]}}})";
    auto read = ReadHistoryFile(store, "h.json", {});
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.status().message().find("h.json: nodes: expected a DNS-1123 subdomain"),
              std::string::npos)
        << read.status().message();
    auto from_text = StoreFromText(store, {});
    ASSERT_FALSE(from_text.ok());
    EXPECT_NE(from_text.status().message().find("history.nodes: expected a DNS-1123 subdomain"),
              std::string::npos)
        << from_text.status().message();
  }
  for (const char* name : {"pi4b-a", "pi4b-1.rack-2", "0"}) {
    const std::string store =
        std::string(R"({"version": 1, "nodes": {")") + name + R"(": {"primes": [[1, 5]]}}})";
    auto read = ReadHistoryFile(store, "h.json", {});
    ASSERT_TRUE(read.ok()) << name << ": " << read.status().message();
    EXPECT_TRUE(read->nodes.contains(name));
  }
}

TEST(HistoryFileTest, OversizedFilesAreRefusedBeforeParsing) {
  for (const std::string& huge : {std::string(kMaxHistoryFileBytes + 1, ' '),
                                  R"({"version": 1, "nodes": {"a": {"primes": [)" +
                                      std::string(kMaxHistoryFileBytes, ' ') + "]}}}"}) {
    auto read = ReadHistoryFile(huge, "h.json", {});
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.status().message().find("h.json"), std::string::npos) << read.status().message();
  }
}

// A workload of more nodes than the earlier form allowed is refused naming it.
TEST(HistoryFileTest, AnOldFileOfTooManyNodesIsRefused) {
  std::string list;
  for (size_t i = 0; i <= kMaxOldFileNodes; ++i) {
    list += (i ? "," : "") + std::string(R"({"node":"n)") + std::to_string(i) +
            R"(","speed":1,"samples":1,"time":1})";
  }
  auto read =
      ReadHistoryFile(R"({"version":1,"workloads":{"primes":[)" + list + "]}}", "h.json", {});
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("workloads.primes: more than 10000 nodes"),
            std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace ballast::history
