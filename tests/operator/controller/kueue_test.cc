// The builders of kueue.h on a template no reader made: one without the
// worker container (ReadPodTemplate always gives one; a PodTemplate built or
// changed by other code may not). Decide's use of them, and the other
// builders: decide_kueue_test.cc. Pure.
#include "operator/controller/kueue.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "operator/api/pod_template.h"
#include "operator/api/weighted_job.h"

namespace ballast::controller::kueue_test {
namespace {

using nlohmann::json;

api::WeightedJobSpec PrimesSpec() {
  const api::ParsedSpec parsed =
      api::ParseWeightedJobSpec(json::parse(R"({"workload":{"primes":{"limit":4000}}})"), "p");
  EXPECT_TRUE(parsed.spec) << parsed.error.status.message();
  return parsed.spec.value_or(api::WeightedJobSpec{});
}

// Regression (issue 60): BuildWorkload read the template's containers[0]
// by indexing, undefined for a spec without containers; it reads the
// worker container as every other builder does (api::WorkerContainerOf).
TEST(KueueTest, AWorkloadOfATemplateWithoutItsWorkerContainerHasBallastsWorker) {
  api::ObjectMeta job;
  job.name = "p";
  job.ns = "ns";
  job.uid = "abcdef-123";
  WorkerPodSettings settings;
  settings.default_image = "registry.example/ballast-worker:1";
  settings.default_resources = {{"requests", {{"cpu", "250m"}}}};
  const json absent;  // no containers at all
  for (const json& containers : {absent, json::array(), json::array({"worker"}), json("worker")}) {
    SCOPED_TRACE(containers.dump());
    api::WeightedJobSpec spec = PrimesSpec();
    if (containers.is_null()) {
      spec.pod_template.spec.erase("containers");
    } else {
      spec.pod_template.spec["containers"] = containers;
    }
    EXPECT_EQ(api::WorkerContainerOf(spec.pod_template), json({{"name", "worker"}}));
    const json workload = BuildWorkload(job, spec, settings, "q", 3, "", std::nullopt);
    const json& pod_set = workload["spec"]["podSets"][0];
    EXPECT_EQ(pod_set["count"], 3);
    const json& pod = pod_set["template"]["spec"];
    ASSERT_EQ(pod["containers"].size(), 1u) << pod.dump();
    EXPECT_EQ(pod["containers"][0]["name"], "worker");
    EXPECT_EQ(pod["containers"][0]["image"], "registry.example/ballast-worker:1");
    EXPECT_EQ(pod["containers"][0]["resources"], settings.default_resources);
  }
}

// The template's worker container gives the Workload its image and
// resources when it has them.
TEST(KueueTest, AWorkloadTakesTheImageAndResourcesOfTheTemplatesWorkerContainer) {
  api::WeightedJobSpec spec = PrimesSpec();
  spec.pod_template.spec["containers"] = json::array(
      {{{"name", "w"}, {"image", "example/mine:2"}, {"resources", {{"limits", {{"cpu", "1"}}}}}},
       {{"name", "sidecar"}, {"image", "example/sidecar:1"}}});
  const json workload =
      BuildWorkload(api::ObjectMeta{}, spec, WorkerPodSettings{}, "q", 1, "", std::nullopt);
  const json& container = workload["spec"]["podSets"][0]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "example/mine:2");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "1");
}

}  // namespace
}  // namespace ballast::controller::kueue_test
