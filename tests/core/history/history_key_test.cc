// Tests of HistoryKey (core/history/history_key.h): the exact text of the keys
// the operator writes (its ConfigMap's entries, the label `workload` of the
// coordinator's series and of the history query), which must not change, and
// a key's text read back naming the same key.
#include "core/history/history_key.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/history/prometheus_history.h"
#include "core/history/speed_store.h"

namespace ballast::history {
namespace {

using workload::WorkloadKind;

TEST(HistoryKeyTest, TheTextOfKnownKeysIsAsWritten) {
  EXPECT_EQ(HistoryKey(WorkloadKind::kPrimes).text(), "primes");
  EXPECT_EQ(HistoryKey(WorkloadKind::kMatmul).text(), "matmul");
  EXPECT_EQ(HistoryKey(WorkloadKind::kExec).text(), "exec");
  EXPECT_EQ(HistoryKey(WorkloadKind::kExec, "registry.local/recompress").text(),
            "exec:registry.local/recompress");
  EXPECT_EQ(HistoryKey(WorkloadKind::kExec, "registry.lan:5000/team/anomalies").text(),
            "exec:registry.lan:5000/team/anomalies");
  EXPECT_EQ(HistoryKey(WorkloadKind::kExec, "python").text(), "exec:python");
  // The repository as given, even empty (an image ":tag" names none).
  EXPECT_EQ(HistoryKey(WorkloadKind::kExec, "").text(), "exec:");
  EXPECT_EQ(HistoryKey().text(), "");
  EXPECT_TRUE(HistoryKey().empty());
  EXPECT_FALSE(HistoryKey(WorkloadKind::kPrimes).empty());
}

TEST(HistoryKeyTest, TheTextReadBackIsTheSameKey) {
  const std::vector<HistoryKey> keys = {HistoryKey(WorkloadKind::kPrimes),
                                        HistoryKey(WorkloadKind::kMatmul),
                                        HistoryKey(WorkloadKind::kExec),
                                        HistoryKey(WorkloadKind::kExec, "localhost/recompress"),
                                        HistoryKey(WorkloadKind::kExec, "registry.lan:5000/py"),
                                        HistoryKey()};
  for (const HistoryKey& key : keys) {
    const HistoryKey back = HistoryKey::FromText(key.text());
    EXPECT_EQ(back, key) << key.text();
    EXPECT_EQ(back.text(), key.text());
  }
  EXPECT_EQ(HistoryKey::FromText("primes"), HistoryKey(WorkloadKind::kPrimes));
  EXPECT_EQ(HistoryKey::FromText("exec:localhost/recompress"),
            HistoryKey(WorkloadKind::kExec, "localhost/recompress"));
  EXPECT_NE(HistoryKey::FromText("exec:localhost/recompress"), HistoryKey(WorkloadKind::kExec));
  // A key this version would not make is kept as written.
  EXPECT_EQ(HistoryKey::FromText("a\"b\\c").text(), "a\"b\\c");
}

TEST(HistoryKeyTest, KeysOrderAndFormatAsTheirText) {
  EXPECT_LT(HistoryKey(WorkloadKind::kExec), HistoryKey(WorkloadKind::kExec, "a"));
  EXPECT_LT(HistoryKey(WorkloadKind::kMatmul), HistoryKey(WorkloadKind::kPrimes));
  EXPECT_EQ(fmt::format("no history of {} speeds",
                        HistoryKey(WorkloadKind::kExec, "localhost/recompress")),
            "no history of exec:localhost/recompress speeds");
  EXPECT_EQ(fmt::format("[{:>8}]", HistoryKey(WorkloadKind::kPrimes)), "[  primes]");
}

// Where a key is written, its text is what is written: the store's entry
// names (the operator's ConfigMap, `ballast run --history`'s file) and the
// label the history query selects on.
TEST(HistoryKeyTest, StoresAndQueriesWriteTheText) {
  const HistoryKey exec(WorkloadKind::kExec, "localhost/recompress");
  SpeedStore store;
  ASSERT_TRUE(RecordJob(store, exec, {{"a", 3}, {"b", 1}}, 1000, {}));
  ASSERT_TRUE(RecordJob(store, HistoryKey(WorkloadKind::kPrimes), {{"a", 1}, {"b", 1}}, 1000, {}));
  EXPECT_EQ(StoreToText(store, {}),
            R"({"nodes":{"a":{"exec:localhost/recompress":[[1.5,1000.0]],"primes":[[1.0,1000.0]]},)"
            R"("b":{"exec:localhost/recompress":[[0.5,1000.0]],"primes":[[1.0,1000.0]]}},)"
            R"("version":1})");
  // An entry written by any version is found by the key read back from its text.
  EXPECT_EQ(
      LookupHistory(store, HistoryKey::FromText("exec:localhost/recompress"), {"a"}, 1000).size(),
      1u);
  EXPECT_NE(HistoryQuery(exec, 3600).find(R"({workload="exec:localhost/recompress"})"),
            std::string::npos);
}

}  // namespace
}  // namespace ballast::history
