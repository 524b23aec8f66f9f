#include "operator/api/job_status.h"

#include <gtest/gtest.h>

namespace ballast::api {
namespace {

using nlohmann::json;

TEST(StatusPatch, CarriesChangedKeysAndNullsRemovedOnes) {
  const json from = {{"phase", "Running"}, {"progress", "10%"}, {"checkpoint", {{"a", 1}}}};
  const json to = {{"phase", "Succeeded"}, {"progress", "10%"}, {"efficiency", 0.9}};
  EXPECT_EQ(StatusPatch(from, to),
            (json{{"phase", "Succeeded"}, {"efficiency", 0.9}, {"checkpoint", nullptr}}));
  EXPECT_TRUE(StatusPatch(to, to).empty());
  EXPECT_EQ(StatusPatch(json::object(), {{"phase", "Pending"}}), (json{{"phase", "Pending"}}));
}

TEST(ProgressText, RoundsDownAndSaysHundredOnlyWhenDone) {
  EXPECT_EQ(ProgressText(0, 150000), "0%");
  EXPECT_EQ(ProgressText(149999, 150000), "99%");
  EXPECT_EQ(ProgressText(150000, 150000), "100%");
  EXPECT_EQ(ProgressText(0, 0), "0%");
  EXPECT_EQ(ProgressText(uint64_t{1} << 49, uint64_t{1} << 50), "50%");
}

}  // namespace
}  // namespace ballast::api
