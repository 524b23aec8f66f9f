// `ballast operator` end to end with an exec job in the user's image
// (workload.exec.image, docs/workloads.md): every worker pod bundles the
// worker in its init container into an emptyDir, and its worker container
// runs that bundle through the bundle's own loader. The node agent has no
// images (it runs processes on this machine, emptyDir volumes as directories
// of the pod), so the user's image itself is tested by bundle_run_test; here
// the operator's pods, the init container and the bundled worker are real,
// and the namespace enforces the restricted Pod Security profile.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

TEST_F(OperatorTest, ExecJobWithAnImageRunsTheBundledWorkerOnEveryNode) {
  const std::string name = "exec-image";
  constexpr int kItems = 12;
  const fs::path out = fs::temp_directory_path() / ("ballast-e2e-" + ns_ + "-" + name);
  fs::remove_all(out);
  fs::create_directories(out);
  json job = PrimesJob(name, 1000);
  // Each item records the program its worker runs as: the bundle's loader.
  // Written beside and renamed, as docs/workloads.md asks of a command: an
  // endgame copy of an item stopped mid-write (or still running when the
  // test reads) must not leave the file empty.
  job["spec"]["workload"] = {
      {"exec",
       {{"command",
         json::array(
             {"sh", "-c",
              "f=\"$1/$BALLAST_ITEM\"; readlink /proc/$PPID/exe > \"$f.$$\" && mv \"$f.$$\" "
              "\"$f\"",
              "sh", out.string()})},
        {"perItem", true},
        {"retries", 0},
        {"image", "user-image:1"}}}};
  job["spec"]["items"] = kItems;
  // The pods, init container included, pass the restricted Pod Security
  // profile: the namespace enforces it, and refuses a pod that does not.
  ASSERT_TRUE(
      client_
          ->MergePatch(
              kube::Namespaces().Named(ns_),
              {{"metadata", {{"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}}}}})
          .ok());
  const auto refused = client_->Create(
      kPods.In(ns_), {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", "not-restricted"}}},
                      {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "x"}}})}}}});
  ASSERT_FALSE(refused.ok()) << "the namespace does not enforce the restricted profile";
  ASSERT_NE(refused.status().message().find("violates PodSecurity \"restricted"), std::string::npos)
      << refused.status().message();
  ASSERT_FALSE(CreateJob(job).is_null());

  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done) << Describe(name);
  const json result = StatusOf(*done).value("result", json::object());
  EXPECT_EQ(result.value("/exec/succeeded"_json_pointer, 0), kItems) << result.dump();
  EXPECT_EQ(result.value("/exec/failures"_json_pointer, json::array()), json::array());

  const auto pods = JobPods(name);
  ASSERT_EQ(pods.size(), kSeed000Weights.size()) << Describe(name);
  for (const auto& pod : pods) {
    const json& spec = pod["spec"];
    ASSERT_EQ(spec.value("initContainers", json::array()).size(), 1u) << spec.dump();
    EXPECT_EQ(spec["initContainers"][0].value("args", json::array()),
              json::array({"bundle", "--to", "/ballast"}));
    EXPECT_EQ(spec["containers"][0].value("image", ""), "user-image:1");
    const json init =
        pod.value("/status/initContainerStatuses/0/state/terminated"_json_pointer, json::object());
    EXPECT_EQ(init.value("exitCode", -1), 0) << pod["status"].dump();
  }
  for (int item = 0; item < kItems; ++item) {
    std::ifstream in(out / std::to_string(item));
    std::string program;
    std::getline(in, program);
    EXPECT_TRUE(program.ends_with("/volumes/ballast-bundle/ld.so"))
        << "item " << item << " ran under '" << program << "'";
  }
  RemoveCommandOutputs(out);
}

}  // namespace
}  // namespace ballast::operator_e2e
