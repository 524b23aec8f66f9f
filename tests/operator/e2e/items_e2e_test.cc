// `ballast operator` end to end with items listed by value in a ConfigMap
// and a result the commands hand back (docs/workloads.md, "Items by value",
// "Results"): the operator reads the list, every worker's command reads the
// values of its range and writes its result, the job's status holds the
// merged fields and names the failed item by its value (tolerated by
// spec.failurePolicy; status.failedItemValues). A ConfigMap that does not
// exist fails the job, naming it.
#include <string>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

const ResourceRef kListConfigMaps = {"", "v1", "configmaps", true, "", ""};

TEST_F(OperatorTest, ItemsFromAConfigMapRunWithTheirValuesAndMergeTheirResults) {
  const std::string name = "listed";
  // 60 values with their costs (cost-value lines); one of them fails.
  std::string list;
  int64_t chars = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string value = i == 33 ? "broken.jpg" : "photo-" + std::to_string(i) + ".jpg";
    list += std::to_string(1000 + 250 * i) + "\t" + value + "\n";
    if (i != 33) chars += static_cast<int64_t>(value.size());
  }
  ASSERT_TRUE(client_
                  ->Create(kListConfigMaps.In(ns_), {{"apiVersion", "v1"},
                                                     {"kind", "ConfigMap"},
                                                     {"metadata", {{"name", "photos"}}},
                                                     {"data", {{"list.txt", list}}}})
                  .ok());
  json job = PrimesJob(name, 1000);
  job["spec"].erase("items");
  job["spec"]["workload"] = {
      {"exec",
       {{"command", json::array({"sh", "-c", R"(n=0
while IFS= read -r v; do
  case "$v" in broken*) exit 4;; esac
  n=$((n + ${#v}))
done < "$BALLAST_ITEMS_FILE"
echo "{\"chars\": $n, \"first\": \"$(head -n 1 "$BALLAST_ITEMS_FILE")\"}" > "$BALLAST_RESULT_FILE")"})},
        {"perItem", true},
        {"retries", 0},
        {"result", {{"merge", {{"chars", "sum"}, {"first", "list"}}}, {"listLimit", 3}}}}}};
  job["spec"]["itemsFrom"] = {{"configMap", {{"name", "photos"}, {"key", "list.txt"}}},
                              {"format", "cost-value"}};
  job["spec"]["failurePolicy"] = {{"maxFailedItems", 1}};  // the broken one is tolerated
  ASSERT_FALSE(CreateJob(job).is_null());

  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done) << Describe(name);
  const json status = StatusOf(*done);
  EXPECT_EQ(status.value("items", 0), 60) << status.dump();
  const json exec = status.value("/result/exec"_json_pointer, json::object());
  EXPECT_EQ(exec.value("succeeded", 0), 59) << exec.dump();
  EXPECT_EQ(exec.value("/fields/chars/sum"_json_pointer, int64_t{0}), chars) << exec.dump();
  EXPECT_EQ(exec.value("/fields/first/count"_json_pointer, 0), 59) << exec.dump();
  // Dealt largest first (adaptive's order): the last listed, costliest, is item 0.
  EXPECT_EQ(
      exec.value("/fields/first/list"_json_pointer, json::array()),
      json::parse(R"([[0, 0, "photo-59.jpg"], [1, 0, "photo-58.jpg"], [2, 0, "photo-57.jpg"]])"))
      << exec.dump();
  EXPECT_EQ(exec.value("failedValues", json::array()), json::array({"broken.jpg"})) << exec.dump();
  const json failures = exec.value("failures", json::array());
  ASSERT_EQ(failures.size(), 1u) << exec.dump();
  EXPECT_EQ(failures[0].value("begin", 0), 26) << "listed 33rd of 60, dealt 26th";
  EXPECT_EQ(failures[0].value("exitCode", 0), 4);
  EXPECT_EQ(status.value("failedItems", 0), 1);
  EXPECT_EQ(status.value("failedItemValues", json::array()), json::array({"broken.jpg"}));
}

// A job whose items' ConfigMap comes after it (later in the same apply)
// waits for it, saying so, and runs when it comes; one that never comes fails
// the job past --items-wait, naming it.
TEST_F(OperatorTest, ItemsFromAMissingConfigMapAreWaitedForThenFailTheJobNamingIt) {
  const std::string name = "late-list";
  json job = PrimesJob(name, 1000);
  job["spec"].erase("items");
  job["spec"]["workload"] = {{"exec", {{"command", json::array({"true"})}}}};
  job["spec"]["itemsFrom"] = {{"configMap", {{"name", "late"}, {"key", "list.txt"}}}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto waiting = WaitEvent(name, "WaitingForItems");
  ASSERT_TRUE(waiting) << Describe(name);
  EXPECT_NE(waiting->value("message", "").find("ConfigMap " + ns_ + "/late does not exist"),
            std::string::npos)
      << waiting->dump();
  EXPECT_EQ(PhaseOf(GetJob(name).value_or(json::object())), "Pending");
  ASSERT_TRUE(client_
                  ->Create(kListConfigMaps.In(ns_), {{"apiVersion", "v1"},
                                                     {"kind", "ConfigMap"},
                                                     {"metadata", {{"name", "late"}}},
                                                     {"data", {{"list.txt", "a\nb\nc\n"}}}})
                  .ok());
  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done) << Describe(name);
  EXPECT_EQ(StatusOf(*done).value("items", 0), 3);

  ASSERT_NO_FATAL_FAILURE(RestartWith({"--items-wait", "3"}));
  const std::string never = "no-list";
  job["metadata"]["name"] = never;
  job["spec"]["itemsFrom"] = {{"configMap", {{"name", "nowhere"}, {"key", "list.txt"}}}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto failed = WaitForJob(
      never, [](const json& j) { return ConditionOf(j, "Failed").value("status", "") == "True"; },
      seconds(30), "job no-list to fail");
  ASSERT_TRUE(failed);
  const json condition = ConditionOf(*failed, "Failed");
  EXPECT_EQ(condition.value("reason", ""), "InvalidSpec") << condition.dump();
  EXPECT_NE(condition.value("message", "")
                .find("spec.itemsFrom.configMap: ConfigMap " + ns_ +
                      "/nowhere does not exist (waited 3 s)"),
            std::string::npos)
      << condition.dump();
  EXPECT_TRUE(JobPods(never).empty());

  // A file is for `ballast run`: on Kubernetes the job fails, saying what to use.
  json file_job = job;
  file_job["metadata"]["name"] = "file-list";
  file_job["spec"]["itemsFrom"] = {{"file", "photos.txt"}};
  ASSERT_FALSE(CreateJob(file_job).is_null());
  auto file_failed = WaitForJob(
      "file-list",
      [](const json& j) { return ConditionOf(j, "Failed").value("status", "") == "True"; },
      seconds(30), "job file-list to fail");
  ASSERT_TRUE(file_failed);
  EXPECT_NE(ConditionOf(*file_failed, "Failed")
                .value("message", "")
                .find("spec.itemsFrom.file: a file is read by `ballast run`"),
            std::string::npos)
      << ConditionOf(*file_failed, "Failed").dump();
}

// A job's list is fixed at its start: its ConfigMap replaced by a shorter
// list mid-job and the operator restarted, the job fails saying so (issue
// 46: it resumed "at 30 of 20 items" and stayed Running forever).
TEST_F(OperatorTest, AListReplacedMidJobFailsTheJobAfterARestartInsteadOfHangingIt) {
  const std::string name = "swapped";
  std::string list;
  for (int i = 0; i < 60; ++i) list += "item-" + std::to_string(i) + "\n";
  ASSERT_TRUE(client_
                  ->Create(kListConfigMaps.In(ns_), {{"apiVersion", "v1"},
                                                     {"kind", "ConfigMap"},
                                                     {"metadata", {{"name", "swap"}}},
                                                     {"data", {{"list.txt", list}}}})
                  .ok());
  json job = PrimesJob(name, 1000);
  job["spec"].erase("items");
  job["spec"]["workload"] = {
      {"exec", {{"command", json::array({"sh", "-c", "sleep 0.3"})}, {"perItem", true}}}};
  job["spec"]["itemsFrom"] = {{"configMap", {{"name", "swap"}, {"key", "list.txt"}}}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto started = WaitForJob(
      name, [](const json& j) { return StatusOf(j).value("completedItems", 0) > 0; }, seconds(60),
      "job swapped to finish some items");
  ASSERT_TRUE(started) << Describe(name);
  EXPECT_FALSE(StatusOf(*started).value("itemsDigest", "").empty());
  std::string shorter;
  for (int i = 0; i < 20; ++i) shorter += "item-" + std::to_string(i) + "\n";
  ASSERT_TRUE(
      client_
          ->MergePatch(kListConfigMaps.In(ns_).Named("swap"), {{"data", {{"list.txt", shorter}}}})
          .ok());
  ASSERT_NO_FATAL_FAILURE(RestartWith({}));
  auto failed = WaitForJob(
      name, [](const json& j) { return ConditionOf(j, "Failed").value("status", "") == "True"; },
      seconds(60), "job swapped to fail");
  ASSERT_TRUE(failed) << Describe(name);
  const json condition = ConditionOf(*failed, "Failed");
  EXPECT_EQ(condition.value("reason", ""), "ItemsChanged") << condition.dump();
  EXPECT_NE(condition.value("message", "").find("(60 items then, 20 now)"), std::string::npos)
      << condition.dump();
}

}  // namespace
}  // namespace ballast::operator_e2e
