#include "core/history/speed_store.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ballast::history {
namespace {

TEST(SpeedStoreTest, RecordKeepsSpeedsRelativeToTheJobMean) {
  SpeedStore store;
  ASSERT_TRUE(RecordJob(store, "primes", {{"a", 30}, {"b", 10}}, 1000, {}));
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"][0].speed, 1.5);
  EXPECT_DOUBLE_EQ(store.nodes["b"]["primes"][0].speed, 0.5);
  EXPECT_DOUBLE_EQ(store.nodes["b"]["primes"][0].at, 1000);
}

TEST(SpeedStoreTest, RecordSkipsUnusableSpeedsAndRefusesAJobWithFewerThanTwoLeft) {
  SpeedStore store;
  EXPECT_FALSE(RecordJob(store, "primes", {{"a", 0}, {"b", -1}}, 1, {}));
  EXPECT_TRUE(store.nodes.empty());
  // One usable speed is only itself relative to itself: nothing to learn.
  EXPECT_FALSE(RecordJob(store, "primes", {{"a", 4}, {"b", 0}, {"c", std::nan("")}}, 1, {}));
  EXPECT_FALSE(RecordJob(store, "primes", {{"a", 4}}, 1, {}));
  EXPECT_TRUE(store.nodes.empty());
  ASSERT_TRUE(RecordJob(store, "primes", {{"a", 4}, {"b", 0}, {"c", 2}}, 1, {}));
  EXPECT_EQ(store.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"][0].speed, 4.0 / 3);
  EXPECT_FALSE(store.nodes.contains("b"));
}

TEST(SpeedStoreTest, KeepsTheNewestSamplesPerNodeAndKind) {
  SpeedStore store;
  StoreLimits limits;
  limits.samples_per_node = 3;
  for (int i = 0; i < 5; ++i) RecordJob(store, "primes", {{"a", 1}, {"b", 1.0 + i}}, i, limits);
  RecordJob(store, "matmul", {{"a", 1}, {"b", 1}}, 9, limits);
  ASSERT_EQ(store.nodes["a"]["primes"].size(), 3u);
  EXPECT_DOUBLE_EQ(store.nodes["a"]["primes"].front().at, 2);
  EXPECT_EQ(store.nodes["a"]["matmul"].size(), 1u);
}

TEST(SpeedStoreTest, LookupAnswersTheAskedNodesOfTheKind) {
  SpeedStore store;
  RecordJob(store, "primes", {{"a", 3}, {"b", 1}}, 100, {});  // a 1.5, b 0.5
  RecordJob(store, "primes", {{"a", 1}, {"b", 1}}, 160, {});  // a 1, b 1
  RecordJob(store, "matmul", {{"c", 1}, {"d", 1}}, 170, {});
  const auto known = LookupHistory(store, "primes", {"a", "c", "z"}, 200);
  ASSERT_EQ(known.size(), 1u);
  EXPECT_EQ(known[0].node, "a");
  EXPECT_DOUBLE_EQ(known[0].speed, 1.25);
  EXPECT_DOUBLE_EQ(known[0].samples, 2);
  EXPECT_DOUBLE_EQ(known[0].age_seconds, 40);
}

TEST(SpeedStoreTest, TextRoundTrips) {
  SpeedStore store;
  RecordJob(store, "primes", {{"pi5-0", 3}, {"pi4b-0", 1}}, 1763900000, {});
  RecordJob(store, "exec", {{"pi5-0", 2}, {"pi4b-0", 2}}, 1763900100, {});
  const std::string text = StoreToText(store, {});
  auto back = StoreFromText(text, {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, store);
}

TEST(SpeedStoreTest, TextStaysWithinItsBytesDroppingTheStalestEntries) {
  SpeedStore store;
  for (int node = 0; node < 200; ++node) {
    RecordJob(store, "primes", {{"node-" + std::to_string(node), 1}, {"fresh", 2}}, node, {});
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

}  // namespace
}  // namespace ballast::history
