// The views of Kueue's objects (operator/api/kueue_views.h): a Workload and a
// ResourceFlavor as the API server holds them, read field by field, and
// fields of another type read as absent without throwing.
#include "operator/api/kueue_views.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ballast::api {
namespace {

using nlohmann::json;

// A Workload of 4 workers admitted to flavor "fast" by ClusterQueue cq, 2 of
// its pods reclaimable.
json AdmittedWorkload() {
  return json::parse(R"({
    "metadata": {"name": "weightedjob-p-job-u", "namespace": "ns", "uid": "wl-uid",
                 "resourceVersion": "9", "generation": 3,
                 "ownerReferences": [{"uid": "job-uid"}]},
    "spec": {"active": true, "podSets": [{"name": "workers", "count": 4}]},
    "status": {
      "conditions": [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
         "message": "Quota reserved in ClusterQueue cq"},
        {"type": "Admitted", "status": "True", "reason": "Admitted",
         "message": "The workload is admitted"}],
      "admission": {"clusterQueue": "cq",
                    "podSetAssignments": [{"name": "workers",
                                           "flavors": {"cpu": "fast", "memory": "fast"}}]},
      "reclaimablePods": [{"name": "workers", "count": 2}]}
  })");
}

TEST(KueueViewsTest, ReadsAWorkload) {
  const WorkloadView workload = ReadWorkload(AdmittedWorkload());
  EXPECT_EQ(workload.meta.name, "weightedjob-p-job-u");
  EXPECT_TRUE(workload.meta.OwnedBy("job-uid"));
  EXPECT_EQ(workload.resource_version, "9");
  EXPECT_EQ(workload.generation, 3);
  EXPECT_EQ(workload.count, 4);
  EXPECT_TRUE(workload.active);
  EXPECT_TRUE(workload.Admitted());
  EXPECT_TRUE(workload.QuotaReserved());
  EXPECT_FALSE(workload.Evicted());
  EXPECT_FALSE(workload.Finished());
  EXPECT_EQ(workload.conditions.at("Admitted").message, "The workload is admitted");
  EXPECT_EQ(workload.cluster_queue, "cq");
  EXPECT_EQ(workload.flavors, std::vector<std::string>{"fast"});
  EXPECT_EQ(workload.reclaimable, 2);
  EXPECT_EQ(workload.raw_conditions.size(), 2u);
}

TEST(KueueViewsTest, AnInactiveWorkloadIsOnlyOneWhoseActiveIsFalse) {
  json workload = AdmittedWorkload();
  workload["spec"]["active"] = false;
  EXPECT_FALSE(ReadWorkload(workload).active);
  workload["spec"].erase("active");
  EXPECT_TRUE(ReadWorkload(workload).active) << "Kueue's default";
  workload["spec"]["active"] = "false";
  EXPECT_TRUE(ReadWorkload(workload).active) << "not a boolean: absent";
}

TEST(KueueViewsTest, FieldsOfAnotherTypeReadAsAbsent) {
  const WorkloadView odd = ReadWorkload(json::parse(R"({
    "metadata": {"name": 5, "resourceVersion": 9, "generation": "3"},
    "spec": {"podSets": "x"},
    "status": {"conditions": [1, {"type": "Admitted", "status": "True", "reason": 7}],
               "admission": {"clusterQueue": ["cq"],
                             "podSetAssignments": [{"name": "workers", "flavors": {"cpu": 1}}]},
               "reclaimablePods": {"workers": 2}}
  })"));
  EXPECT_EQ(odd.meta.name, "");
  EXPECT_EQ(odd.resource_version, "");
  EXPECT_EQ(odd.generation, 0);
  EXPECT_EQ(odd.count, 0);
  EXPECT_TRUE(odd.Admitted());
  EXPECT_EQ(odd.conditions.at("Admitted").reason, "");
  EXPECT_EQ(odd.cluster_queue, "");
  EXPECT_TRUE(odd.flavors.empty());
  EXPECT_EQ(odd.reclaimable, 0);
  // Counts past an int32_t, or below 0, are cut to its range.
  json huge = AdmittedWorkload();
  huge["spec"]["podSets"][0]["count"] = int64_t{1} << 40;
  huge["status"]["reclaimablePods"][0]["count"] = -3;
  EXPECT_EQ(ReadWorkload(huge).count, 2147483647);
  EXPECT_EQ(ReadWorkload(huge).reclaimable, 0);
  for (const json& nothing : {json(), json("x"), json::array(), json::object()}) {
    const WorkloadView view = ReadWorkload(nothing);
    EXPECT_EQ(view.count, 0) << nothing.dump();
    EXPECT_TRUE(view.active) << nothing.dump();
    EXPECT_TRUE(view.conditions.empty()) << nothing.dump();
  }
}

TEST(KueueViewsTest, ReadsAFlavor) {
  const FlavorView flavor = ReadFlavor(json::parse(
      R"({"metadata":{"name":"f"},"spec":{"nodeLabels":{"a":"b","n":1},"tolerations":[{"key":"k"}]}})"));
  EXPECT_EQ(flavor.name, "f");
  EXPECT_EQ(flavor.node_labels, (std::map<std::string, std::string>{{"a", "b"}}));
  EXPECT_EQ(flavor.tolerations.size(), 1u);
  const FlavorView odd =
      ReadFlavor(json::parse(R"({"metadata":"f","spec":{"nodeLabels":[1],"tolerations":{}}})"));
  EXPECT_EQ(odd.name, "");
  EXPECT_TRUE(odd.node_labels.empty());
  EXPECT_TRUE(odd.tolerations.empty());
}

}  // namespace
}  // namespace ballast::api
