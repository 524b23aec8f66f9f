#include "core/history/speed_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/health/deviation.h"
#include "tests/support/history_keys.h"

namespace ballast::history {
namespace {

TEST(SpeedStoreTest, RecordKeepsSpeedsRelativeToTheJobMean) {
  SpeedStore store;
  ASSERT_TRUE(RecordJob(store, testing::kPrimesKey, {{"a", 30}, {"b", 10}}, 1000, {}));
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"][0].speed, 1.5);
  EXPECT_DOUBLE_EQ(store.nodes["b"]["primes"][0].speed, 0.5);
  EXPECT_DOUBLE_EQ(store.nodes["b"]["primes"][0].at, 1000);
}

TEST(SpeedStoreTest, RecordSkipsUnusableSpeedsAndRefusesAJobWithFewerThanTwoLeft) {
  SpeedStore store;
  EXPECT_FALSE(RecordJob(store, testing::kPrimesKey, {{"a", 0}, {"b", -1}}, 1, {}));
  EXPECT_TRUE(store.nodes.empty());
  // One usable speed is only itself relative to itself: nothing to learn.
  EXPECT_FALSE(
      RecordJob(store, testing::kPrimesKey, {{"a", 4}, {"b", 0}, {"c", std::nan("")}}, 1, {}));
  EXPECT_FALSE(RecordJob(store, testing::kPrimesKey, {{"a", 4}}, 1, {}));
  EXPECT_TRUE(store.nodes.empty());
  ASSERT_TRUE(RecordJob(store, testing::kPrimesKey, {{"a", 4}, {"b", 0}, {"c", 2}}, 1, {}));
  EXPECT_EQ(store.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"][0].speed, 4.0 / 3);
  EXPECT_FALSE(store.nodes.contains("b"));
}

TEST(SpeedStoreTest, KeepsTheNewestSamplesPerNodeAndKind) {
  SpeedStore store;
  StoreLimits limits;
  limits.samples_per_node = 3;
  for (int i = 0; i < 5; ++i)
    RecordJob(store, testing::kPrimesKey, {{"a", 1}, {"b", 1.0 + i}}, i, limits);
  RecordJob(store, testing::kMatmulKey, {{"a", 1}, {"b", 1}}, 9, limits);
  ASSERT_EQ(store.nodes["a"]["primes"].size(), 3u);
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"].front().at, 2);
  EXPECT_EQ(store.nodes["a"]["matmul"].size(), 1u);
}

TEST(SpeedStoreTest, LookupAnswersTheAskedNodesOfTheKind) {
  SpeedStore store;
  RecordJob(store, testing::kPrimesKey, {{"a", 3}, {"b", 1}}, 100, {});  // a 1.5, b 0.5
  RecordJob(store, testing::kPrimesKey, {{"a", 1}, {"b", 1}}, 160, {});  // a 1, b 1
  RecordJob(store, testing::kMatmulKey, {{"c", 1}, {"d", 1}}, 170, {});
  const auto known = LookupHistory(store, testing::kPrimesKey, {"a", "c", "z"}, 200);
  ASSERT_EQ(known.size(), 1u);
  EXPECT_EQ(known[0].node, "a");
  EXPECT_DOUBLE_EQ(known[0].speed, 1.25);
  EXPECT_DOUBLE_EQ(known[0].samples, 2);
  EXPECT_DOUBLE_EQ(known[0].age_seconds, 40);
}

// Regression (issue 61): samples dated in the future (recorded by a clock
// set wrong: a Raspberry Pi has no real-time clock) stayed the newest of
// their node for good. Every real sample was trimmed before them, and the
// node's history read 0 s old forever.
constexpr double kNow = 1'800'000'000;
constexpr double kYear2100 = 4'102'444'800;

SpeedStore StoreWithFutureSamples() {
  SpeedStore store;
  store.nodes["pi5-a"]["primes"] = {{1.5, kNow - 100}, {9, kYear2100}, {8, kYear2100 + 1}};
  store.nodes["pi3b-a"]["primes"] = {{0.5, kNow - 100}, {0.6, kNow + 60}};  // within the slack
  store.nodes["pi3b-a"]["matmul"] = {{3, kYear2100}};
  return store;
}

TEST(SpeedStoreTest, SamplesDatedInTheFutureAreDroppedAndNamed) {
  SpeedStore store = StoreWithFutureSamples();
  const DroppedSamples dropped = DropFutureSamples(store, kNow);
  EXPECT_EQ(dropped.count, 3u);
  EXPECT_EQ(dropped.latest, kYear2100 + 1);
  EXPECT_EQ(DescribeDropped(dropped),
            "dropped 3 samples dated more than 3600 s after now (the latest 4102444801; recorded "
            "by a clock set wrong?): pi3b-a matmul 1, pi5-a primes 2");
  EXPECT_EQ(store.nodes["pi5-a"]["primes"], (std::vector<SpeedSample>{{1.5, kNow - 100}}));
  // A sample within the slack of a clock a minute ahead is kept, dated now.
  EXPECT_EQ(store.nodes["pi3b-a"]["primes"],
            (std::vector<SpeedSample>{{0.5, kNow - 100}, {0.6, kNow}}));
  EXPECT_FALSE(store.nodes["pi3b-a"].contains("matmul")) << "an entry left empty goes";
  EXPECT_EQ(DropFutureSamples(store, kNow).count, 0u);
  EXPECT_EQ(DescribeDropped({}), "");
}

TEST(SpeedStoreTest, SamplesDatedInTheFutureNoLongerPinTheNewestKept) {
  SpeedStore store = StoreWithFutureSamples();
  StoreLimits limits;
  limits.samples_per_node = 2;
  for (int job = 1; job <= 3; ++job) {
    ASSERT_TRUE(
        RecordJob(store, testing::kPrimesKey, {{"pi5-a", 2}, {"pi3b-a", 1}}, kNow + job, limits));
  }
  // The jobs just recorded are kept, the newest last; not the ones of 2100.
  EXPECT_EQ(store.nodes["pi5-a"]["primes"],
            (std::vector<SpeedSample>{{4.0 / 3, kNow + 2}, {4.0 / 3, kNow + 3}}));
  const auto known = LookupHistory(StoreWithFutureSamples(), testing::kPrimesKey, {"pi5-a"}, kNow);
  ASSERT_EQ(known.size(), 1u);
  EXPECT_DOUBLE_EQ(known[0].speed, 1.5) << "the samples of 2100 are not the node's speed";
  EXPECT_DOUBLE_EQ(known[0].age_seconds, 100);
}

TEST(SpeedStoreTest, TextRoundTrips) {
  SpeedStore store;
  RecordJob(store, testing::kPrimesKey, {{"pi5-0", 3}, {"pi4b-0", 1}}, 1763900000, {});
  RecordJob(store, testing::kExecKey, {{"pi5-0", 2}, {"pi4b-0", 2}}, 1763900100, {});
  const std::string text = StoreToText(store, {});
  auto back = StoreFromText(text, {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, store);
}

TEST(SpeedStoreTest, TextStaysWithinItsBytesDroppingTheStalestEntries) {
  SpeedStore store;
  for (int node = 0; node < 200; ++node) {
    RecordJob(store, testing::kPrimesKey, {{"node-" + std::to_string(node), 1}, {"fresh", 2}}, node,
              {});
  }
  StoreLimits limits;
  limits.max_bytes = 2000;
  const std::string text = StoreToText(store, limits);
  EXPECT_LE(text.size(), limits.max_bytes);
  auto back = StoreFromText(text, limits);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->nodes.contains("fresh"));
  EXPECT_TRUE(back->nodes.contains("node-199"));
  EXPECT_FALSE(back->nodes.contains("node-0"));
}

// Entries of 16 samples are some 300 bytes each: leaving out as many as the
// excess over 64 bytes (as the text once did) dropped the whole store when it
// was four times too long. What fits stays, the newest entries.
TEST(SpeedStoreTest, TextPastItsBytesKeepsTheNewestEntriesThatFit) {
  SpeedStore store;
  StoreLimits limits;
  limits.max_bytes = 20000;
  for (int job = 0; job < 16; ++job) {
    for (int node = 0; node < 200; node += 2) {
      const std::string a = "node-" + std::to_string(node), b = "node-" + std::to_string(node + 1);
      RecordJob(store, testing::kPrimesKey, {{a, 1.0 + job % 3}, {b, 1}}, 1e6 + node * 100 + job,
                limits);
    }
  }
  const std::string text = StoreToText(store, limits);
  EXPECT_LE(text.size(), limits.max_bytes);
  EXPECT_GE(text.size(), limits.max_bytes * 3 / 4) << text.size();
  auto back = StoreFromText(text, limits);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->nodes.contains("node-199"));
  EXPECT_FALSE(back->nodes.contains("node-0"));
  for (const auto& [node, kinds] : back->nodes) EXPECT_EQ(kinds.at("primes").size(), 16u) << node;
}

// A store past its bytes loses its stalest entries (above): that is said,
// never silent (issue 61: a 4 MiB file was cut to 256 KiB without a word).
TEST(SpeedStoreTest, TextPastItsBytesSaysWhatItLeftOut) {
  SpeedStore store;
  for (int node = 0; node < 200; ++node) {
    RecordJob(store, testing::kPrimesKey, {{"node-" + std::to_string(node), 1}, {"fresh", 2}},
              1000 + node, {});
  }
  StoreLimits limits;
  limits.max_bytes = 2000;
  LeftOut left_out;
  const std::string text = StoreToText(store, limits, &left_out);
  EXPECT_LE(text.size(), limits.max_bytes);
  auto back = StoreFromText(text, limits);
  ASSERT_TRUE(back.ok());
  size_t kept = 0;
  for (const auto& [node, kinds] : back->nodes) kept += kinds.size();
  EXPECT_EQ(left_out.entries + kept, 201u);
  EXPECT_EQ(left_out.samples, left_out.entries);  // one sample each
  EXPECT_GT(left_out.newest, 1000);
  EXPECT_LT(left_out.newest, 1199);
  EXPECT_EQ(DescribeLeftOut(left_out, limits),
            fmt::format("kept within 2000 bytes: left out the {} stalest node-and-workload "
                        "entries ({} samples, the newest of them dated {:.0f})",
                        left_out.entries, left_out.samples, left_out.newest));
  LeftOut none;
  StoreToText(store, {}, &none);
  EXPECT_EQ(none, LeftOut{});
  EXPECT_EQ(DescribeLeftOut(none, {}), "");
}

TEST(SpeedStoreTest, EmptyTextIsAnEmptyStore) {
  auto store = StoreFromText("  \n", {});
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(store->nodes.empty());
}

TEST(SpeedStoreTest, CorruptTextNamesTheField) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"{", "history"},
      {"[]", "history: expected an object"},
      {R"({"version":2,"nodes":{}})", "history.version: expected 1"},
      {R"({"version":1,"nodes":[]})", "history.nodes: expected an object"},
      {R"({"version":1,"nodes":{"a":{"primes":[[0,5]]}}})", "history.nodes.a.primes[0]"},
      {R"({"version":1,"nodes":{"a":{"primes":[[1]]}}})", "history.nodes.a.primes[0]"},
      {R"({"version":1,"nodes":{"a":{"primes":{}}}})", "history.nodes.a.primes: expected a list"},
      {R"({"version":1,"extra":1})", "unknown field \"extra\""},
      {R"({"version":1,"nodes":{"a":[[[[[[[[[[1]]]]]]]]]]}})", "nested deeper than 8"},
  };
  for (const auto& c : cases) {
    auto store = StoreFromText(c.text, {});
    ASSERT_FALSE(store.ok()) << c.text;
    EXPECT_NE(store.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << store.status().message();
  }
}

TEST(SpeedStoreTest, ReadingKeepsOnlyTheNewestSamplesOfALongList) {
  std::string list;
  for (int i = 0; i < 40; ++i)
    list += (i ? "," : "") + std::string("[1,") + std::to_string(i) + "]";
  auto store = StoreFromText(R"({"version":1,"nodes":{"a":{"primes":[)" + list + "]}}}", {});
  ASSERT_TRUE(store.ok());
  ASSERT_EQ(store->nodes["a"]["primes"].size(), 16u);
  EXPECT_DOUBLE_EQ(store->nodes["a"]["primes"].front().at, 24);
}

// The operator's store keeps a sample per job and their mean, no spread: a
// job whose node is judged Slow against that mean enters it winsorized
// (health::WinsorizeSpeeds: at baseline * slow_below), as the operator's
// RecordSpeeds hands it over (decide_history.cc).
namespace winsorized {

const std::vector<std::string> kRack = {"a", "b", "c", "d"};

// One job of 10 s on each node: `a` at `a_speed`, the others at 100; judged
// against what the store holds, recorded as the operator records it.
// Returns the verdict on `a`.
health::NodeDeviation Job(SpeedStore& store, double a_speed, double now, bool winsorize) {
  std::vector<health::JobMeasurement> measured;
  std::map<std::string, double> speeds;
  for (const auto& node : kRack) {
    const double speed = node == "a" ? a_speed : 100;
    measured.push_back({node, speed, 10, 0});
    speeds[node] = speed;
  }
  const auto deviations =
      health::JudgeDeviations(LookupHistory(store, testing::kPrimesKey, kRack, now), measured, {});
  RecordJob(store, testing::kPrimesKey,
            winsorize ? health::WinsorizeSpeeds(speeds, deviations) : speeds, now, {});
  return deviations[0];
}

// The store's baseline of `a` against the others'.
double Relative(const SpeedStore& store) {
  const auto known = LookupHistory(store, testing::kPrimesKey, kRack, 1e6);
  return known[0].speed / known[1].speed;
}

SpeedStore Steady() {
  SpeedStore store;
  for (int i = 0; i < 4; ++i)
    RecordJob(store, testing::kPrimesKey, {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}, i, {});
  return store;
}

TEST(SpeedStoreTest, ASlowJobEntersAtTheEdgeOfTheBand) {
  SpeedStore store = Steady();
  const health::NodeDeviation slow = Job(store, 50, 10, true);
  ASSERT_EQ(slow.verdict, health::Verdict::kSlow);
  EXPECT_DOUBLE_EQ(slow.ratio, 0.5);
  // Entered at 75 of 100 (mean 93.75): a 0.8, the others 1.0667; the
  // store's means 0.96 and 1.0133.
  EXPECT_NEAR(store.nodes["a"]["primes"].back().speed, 0.8, 1e-12);
  EXPECT_NEAR(Relative(store), 0.96 / (4 + 100 / 93.75) * 5, 1e-12);  // 0.947
  // As measured it would be 0.889.
  SpeedStore as_measured = Steady();
  Job(as_measured, 50, 10, false);
  EXPECT_NEAR(Relative(as_measured), (4 + 50 / 87.5) / (4 + 100 / 87.5), 1e-12);
  // How bad the day was does not matter.
  SpeedStore worse = Steady();
  Job(worse, 5, 10, true);
  EXPECT_NEAR(Relative(worse), Relative(store), 1e-12);
  // The next healthy job is Normal.
  EXPECT_EQ(Job(store, 100, 20, true).verdict, health::Verdict::kNormal);
}

// A board that has really changed becomes the baseline: a lasting halving
// is flagged job after job, each moving the baseline a bounded step, then
// judged Normal and entered as measured. The store's plain mean of its last
// 16 jobs follows slowly: 14 jobs flagged (8 entered as measured), Normal
// from the 15th, within 10 % of the new speed after 20 (docs/history.md).
TEST(SpeedStoreTest, ALastingChangeBecomesTheBaseline) {
  for (const bool winsorize : {true, false}) {
    SpeedStore store = Steady();
    int flagged = 0, first_normal = 0;
    for (int job = 1; job <= 20; ++job) {
      const health::NodeDeviation d = Job(store, 50, 10 + job, winsorize);
      if (d.verdict == health::Verdict::kSlow) ++flagged;
      if (d.verdict == health::Verdict::kNormal && first_normal == 0) first_normal = job;
    }
    EXPECT_EQ(flagged, winsorize ? 14 : 8);
    EXPECT_EQ(first_normal, winsorize ? 15 : 9);
    EXPECT_LT(Relative(store), 0.55);
  }
}

}  // namespace winsorized

}  // namespace
}  // namespace ballast::history
