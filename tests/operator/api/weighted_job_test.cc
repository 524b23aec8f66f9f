// The typed WeightedJob spec (operator/api/weighted_job.h) and the
// JSON readers under it (core/job/job_json.h): what the operator reads from
// the API server must mean what `ballast run` reads from the same YAML, and
// every refusal names the field's path and what was there.
#include "operator/api/weighted_job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/job/job_json.h"
#include "tests/support/yaml_to_json.h"

namespace ballast::api {
namespace {

using nlohmann::json;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json PrimesSpec() { return {{"workload", {{"primes", {{"limit", 300000}}}}}}; }

TEST(WeightedJobSpecTest, EveryExampleJobReadsAsBallastRunReadsIt) {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(BALLAST_SOURCE_DIR) + "/examples/jobs")) {
    const std::string text = ReadFile(entry.path());
    auto from_yaml = job::ParseJob(text, entry.path().filename().string());
    ASSERT_TRUE(from_yaml.ok()) << from_yaml.status().ToString();
    const json manifest = testing::YamlToJson(text);
    // A job file is a whole manifest or its bare spec.
    const json& spec = manifest.contains("spec") ? manifest["spec"] : manifest;
    ParsedSpec parsed = ParseWeightedJobSpec(spec, from_yaml->name);
    ASSERT_TRUE(parsed.spec) << entry.path() << ": " << parsed.error.status.ToString();
    const job::JobSpec& from_json = parsed.spec->job;
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(from_json.workload, from_yaml->workload);
    EXPECT_EQ(from_json.policy, from_yaml->policy);
    EXPECT_EQ(from_json.profile, from_yaml->profile);
    EXPECT_EQ(from_json.lease_seconds, from_yaml->lease_seconds);
    EXPECT_EQ(from_json.backoff_limit, from_yaml->backoff_limit);
    EXPECT_EQ(from_json.active_deadline_s, from_yaml->active_deadline_s);
    ++files;
  }
  EXPECT_GE(files, 4);
}

TEST(WeightedJobSpecTest, DefaultsAreThoseOfTheJobFile) {
  ParsedSpec parsed = ParseWeightedJobSpec(PrimesSpec(), "p");
  ASSERT_TRUE(parsed.spec);
  EXPECT_EQ(parsed.spec->job.workload.items, 150000u);  // trial: limit / 2
  EXPECT_EQ(parsed.spec->job.policy.name(), "adaptive");
  EXPECT_EQ(parsed.spec->job.profile, "raspberry-pi");
  EXPECT_EQ(parsed.spec->job.backoff_limit, 3u);
  EXPECT_FALSE(parsed.spec->suspend);
  EXPECT_FALSE(parsed.ttl_seconds_after_finished);
  EXPECT_FALSE(parsed.pod_ttl_seconds_after_finished);
  EXPECT_TRUE(parsed.spec->pod_template.node_selector.empty());
}

// History is kept by workload kind, and an exec job's by its image without
// tag or digest: two scripts on the same boards do not share a baseline.
TEST(WeightedJobSpecTest, TheHistoryKeyIsTheKindAndForExecTheImagesRepository) {
  EXPECT_EQ(HistoryKey(*ParseWeightedJobSpec(PrimesSpec(), "p").spec).text(), "primes");
  const auto exec_key = [](const json& image) {
    json exec = {{"command", {"run"}}};
    if (!image.is_null()) exec["image"] = image;
    const json spec = {{"items", 3}, {"workload", {{"exec", exec}}}};
    ParsedSpec parsed = ParseWeightedJobSpec(spec, "e");
    EXPECT_TRUE(parsed.spec) << parsed.error.status.message();
    return parsed.spec ? HistoryKey(*parsed.spec).text() : std::string();
  };
  EXPECT_EQ(exec_key("localhost/recompress:1"), "exec:localhost/recompress");
  EXPECT_EQ(exec_key("localhost/recompress:2"), "exec:localhost/recompress");
  EXPECT_EQ(exec_key("registry.lan:5000/team/anomalies"), "exec:registry.lan:5000/team/anomalies");
  EXPECT_EQ(exec_key("registry.lan:5000/py:3.13@sha256:0123"), "exec:registry.lan:5000/py");
  EXPECT_EQ(exec_key(nullptr), "exec");
}

TEST(WeightedJobSpecTest, KubernetesKeysAreTyped) {
  json spec = PrimesSpec();
  spec["suspend"] = true;
  spec["ttlSecondsAfterFinished"] = 60;
  spec["nodeSelector"] = {{"ballast.io/pool", "a"}};
  spec["tolerations"] = json::array({{{"key", "k"}, {"operator", "Exists"}}});
  spec["worker"] = {{"image", "w:1"}, {"resources", {{"limits", {{"cpu", "1"}}}}}};
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_TRUE(parsed.spec) << parsed.error.status.ToString();
  EXPECT_TRUE(parsed.spec->suspend);
  EXPECT_EQ(parsed.ttl_seconds_after_finished, 60);
  EXPECT_EQ(parsed.spec->pod_template.node_selector.at("ballast.io/pool"), "a");
  EXPECT_EQ(parsed.spec->pod_template.tolerations, spec["tolerations"]);
}

struct Refusal {
  const char* name;
  json change;  // merged into a valid primes spec (null deletes a key)
  const char* reason;
  const char* message;
};

TEST(WeightedJobSpecTest, RefusalsNameTheFieldPathAndWhatWasThere) {
  const Refusal cases[] = {
      {"limit as text",
       {{"workload", {{"primes", {{"limit", "abc"}}}}}},
       "InvalidSpec",
       "spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got \"abc\""},
      {"limit too small",
       {{"workload", {{"primes", {{"limit", 1}}}}}},
       "InvalidSpec",
       "spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got 1"},
      {"unknown method",
       {{"workload", {{"primes", {{"limit", 10}, {"method", "magic"}}}}}},
       "InvalidSpec",
       "spec.workload.primes.method: expected \"trial\" or \"sieve\", got \"magic\""},
      {"two workloads",
       {{"workload", {{"matmul", {{"size", 4}, {"block", 2}}}}}},
       "InvalidSpec",
       "spec.workload.matmul: expected exactly one of primes, matmul, exec, got primes and matmul"},
      {"block not a divisor",
       {{"workload", {{"primes", nullptr}, {"matmul", {{"size", 10}, {"block", 3}}}}}},
       "InvalidSpec",
       "spec.workload.matmul.block: expected a divisor of size = 10, got 3"},
      {"exec word not a string",
       {{"items", 3}, {"workload", {{"primes", nullptr}, {"exec", {{"command", {"sh", 7}}}}}}},
       "InvalidSpec",
       "spec.workload.exec.command[1]: expected a string, got 7"},
      {"unknown key",
       {{"replicas", 3}},
       "InvalidSpec",
       "spec.replicas: unknown field \"replicas\""},
      {"backoffLimit negative",
       {{"backoffLimit", -1}},
       "InvalidSpec",
       "spec.backoffLimit: expected an integer in [0, 1000], got -1"},
      {"lease not a number",
       {{"leaseSeconds", "30s"}},
       "InvalidSpec",
       "spec.leaseSeconds: expected a number > 0, got \"30s\""},
      {"suspend as text",
       {{"suspend", "yes"}},
       "InvalidSpec",
       "spec.suspend: expected true or false, got \"yes\""},
      {"selector value a number",
       {{"nodeSelector", {{"pool", 1}}}},
       "InvalidSpec",
       "spec.nodeSelector.pool: expected a string, got 1"},
      {"toleration key a list",
       {{"tolerations", {{{"key", json::array()}}}}},
       "InvalidSpec",
       "spec.tolerations[0].key: expected a string, got []"},
      {"unknown policy",
       {{"policy", "fastest"}},
       "InvalidPolicy",
       "spec.policy: expected a policy: equal, weighted, selfsched, guided, factoring, mms, "
       "adaptive, got \"fastest\""},
      {"option of another policy",
       {{"policy", {{"name", "adaptive"}, {"chunk", 8}}}},
       "InvalidPolicy",
       "spec.policy.chunk: policy adaptive has no option \"chunk\""},
      {"policy a list",
       {{"policy", json::array()}},
       "InvalidPolicy",
       "spec.policy: expected a policy name or an object with name and options, got []"},
  };
  for (const Refusal& refusal : cases) {
    SCOPED_TRACE(refusal.name);
    json spec = PrimesSpec();
    spec.merge_patch(refusal.change);
    ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
    ASSERT_FALSE(parsed.spec);
    EXPECT_EQ(ReasonName(parsed.error.reason), std::string(refusal.reason));
    EXPECT_EQ(parsed.error.status.code(), StatusCode::kInvalid);
    EXPECT_EQ(parsed.error.status.message().substr(0, std::string(refusal.message).size()),
              refusal.message)
        << parsed.error.status.message();
    // The path is data: the message is formed from it.
    const Status& error = parsed.error.status;
    EXPECT_FALSE(error.path().empty()) << error.message();
    EXPECT_EQ(error.message(), error.path() + ": " + std::string(error.detail()));
  }
}

// The reason is read from the path of the field the error is about, not from
// its text: an unknown key whose name starts with "policy" is not the policy.
TEST(WeightedJobSpecTest, TheReasonFollowsTheErrorsPathNotItsText) {
  json spec = PrimesSpec();
  spec["policyTimeout"] = 30;
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.status.path(), "spec.policyTimeout");
  EXPECT_EQ(parsed.error.status.message().rfind("spec.policy", 0), 0u);
  EXPECT_EQ(parsed.error.reason, Reason::kInvalidSpec);
  // A spec wrong in its policy and in its workload is refused for its policy.
  spec = PrimesSpec();
  spec["workload"]["primes"]["limit"] = "abc";
  spec["policy"] = {{"name", "guided"}, {"chunk", -1}};
  parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.status.path(), "spec.policy.chunk");
  EXPECT_EQ(parsed.error.reason, Reason::kInvalidPolicy);
}

// A refusal of the template, and of a listed item, carries its path.
TEST(WeightedJobSpecTest, TemplateAndItemRefusalsCarryTheirPath) {
  json spec = PrimesSpec();
  spec["template"] = {{"spec", {{"nodeName", "pi-1"}}}};
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.status.path(), "spec.template.spec.nodeName");
  json exec = {{"workload", {{"exec", {{"command", {"true"}}}}}},
               {"itemsFrom", {{"list", {"a", std::string("b\x01")}}}}};
  parsed = ParseWeightedJobSpec(exec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.status.path(), "spec.itemsFrom.list[1]");
  EXPECT_EQ(parsed.error.reason, Reason::kInvalidSpec);
  EXPECT_EQ(parsed.error.status.message(),
            parsed.error.status.path() + ": " + std::string(parsed.error.status.detail()));
}

TEST(WeightedJobSpecTest, PolicyOptionsOfAnyJsonTypeReachThePolicyTyped) {
  json spec = PrimesSpec();
  spec["policy"] = {{"name", "adaptive"}, {"stealing", false}, {"minReportSeconds", 0.5}};
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_TRUE(parsed.spec) << parsed.error.status.ToString();
  const auto& options = std::get<balance::AdaptiveOptions>(parsed.spec->job.policy.options);
  EXPECT_FALSE(options.stealing);
  EXPECT_EQ(options.min_report_seconds, 0.5);
  spec["policy"] = {{"name", "selfsched"}, {"chunk", 0}};
  parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.reason, Reason::kInvalidPolicy);
  EXPECT_EQ(parsed.error.status.message(),
            "spec.policy.chunk: expected an integer in [1, 1000000000000000], got 0");
}

// spec.worker is the short form of the template's worker container.
TEST(WeightedJobSpecTest, SpecWorkerIsKeptTypedInTheTemplatesWorkerContainer) {
  json spec = PrimesSpec();
  spec["worker"] = {{"image", "w:1"},
                    {"imagePullPolicy", "Never"},
                    {"resources", {{"limits", {{"cpu", "500m"}}}}}};
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_TRUE(parsed.spec) << parsed.error.status.ToString();
  EXPECT_EQ(parsed.spec->worker_image, "w:1");
  const json& worker = parsed.spec->pod_template.spec["containers"][0];
  EXPECT_EQ(worker, (json{{"name", "worker"},
                          {"image", "w:1"},
                          {"imagePullPolicy", "Never"},
                          {"resources", {{"limits", {{"cpu", "500m"}}}}}}));
  spec["worker"] = {{"image", 3}};
  parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.status.message(), "spec.worker.image: expected a string, got 3");
}

// Both TTLs are read first and kept when the rest of the spec is invalid: a
// job failed for its spec is deleted after it too. A TTL out of range is
// the spec's error, naming the field.
TEST(WeightedJobSpecTest, TtlsAreReadEvenWhenTheRestIsInvalid) {
  json spec = PrimesSpec();
  spec["ttlSecondsAfterFinished"] = 60;
  spec["podTTLSecondsAfterFinished"] = -1;
  spec["workload"]["primes"]["limit"] = "not a number";
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  EXPECT_FALSE(parsed.spec);
  EXPECT_EQ(parsed.error.reason, Reason::kInvalidSpec);
  EXPECT_EQ(parsed.ttl_seconds_after_finished, 60);
  EXPECT_EQ(parsed.pod_ttl_seconds_after_finished, -1) << "-1 keeps the pods";
  for (const json& ttl : {json(-1), json("60"), json(1.5), json(int64_t{1} << 40)}) {
    json bad = PrimesSpec();
    bad["ttlSecondsAfterFinished"] = ttl;
    parsed = ParseWeightedJobSpec(bad, "p");
    EXPECT_FALSE(parsed.spec) << ttl.dump();
    EXPECT_FALSE(parsed.ttl_seconds_after_finished) << ttl.dump();
    EXPECT_EQ(parsed.error.status.message().rfind("spec.ttlSecondsAfterFinished: ", 0), 0u)
        << parsed.error.status.message();
  }
  for (const json& ttl : {json(-2), json("60"), json(int64_t{1} << 40)}) {
    json bad = PrimesSpec();
    bad["podTTLSecondsAfterFinished"] = ttl;
    parsed = ParseWeightedJobSpec(bad, "p");
    EXPECT_FALSE(parsed.spec) << ttl.dump();
    EXPECT_EQ(parsed.error.status.message().rfind("spec.podTTLSecondsAfterFinished: ", 0), 0u)
        << parsed.error.status.message();
  }
}

// spec.workerStartTimeoutSeconds: whole seconds from 1 to a day; anything
// else is the spec's error, naming the field.
TEST(WeightedJobSpecTest, AWorkerStartTimeoutIsWholeSecondsUpToADay) {
  json spec = PrimesSpec();
  EXPECT_FALSE(ParseWeightedJobSpec(spec, "p").spec->worker_start_timeout_s);
  spec["workerStartTimeoutSeconds"] = 20;
  EXPECT_EQ(ParseWeightedJobSpec(spec, "p").spec->worker_start_timeout_s, 20);
  for (const json& bad : {json(0), json(86401), json("20"), json(2.5)}) {
    spec["workerStartTimeoutSeconds"] = bad;
    const ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
    EXPECT_FALSE(parsed.spec) << bad.dump();
    EXPECT_EQ(parsed.error.status.message().rfind("spec.workerStartTimeoutSeconds: ", 0), 0u)
        << parsed.error.status.message();
  }
}

}  // namespace
}  // namespace ballast::api
