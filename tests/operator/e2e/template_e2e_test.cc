// `ballast operator` end to end with spec.template (docs/crds.md,
// "spec.template"): a job whose template has volumes, env, envFrom a Secret,
// a service account, a security context, image pull secrets, a priority
// class and an init container gets pods that carry all of it beside
// Ballast's parts, and its command sees the env; a template that sets a
// field Ballast owns fails the job naming the field; the short forms and the
// template written out give equal pods. (The server's refusal of a misspelt
// field is operator_e2e_crds_template's.)
#include <fstream>
#include <string>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

// The names of the pod's list `key` (containers, volumes, ...).
std::vector<std::string> Names(const json& spec, const char* key) {
  std::vector<std::string> names;
  for (const json& item : spec.value(key, json::array())) names.push_back(item.value("name", ""));
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// `text` with every `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// What the template job needs in its namespace: a Secret for envFrom, a
// ConfigMap for a volume, a ServiceAccount, and (cluster-wide) a PriorityClass.
void CreateTheTemplatesObjects(const std::string& ns, const std::string& priority_class) {
  for (const std::string& command :
       {"kubectl create secret generic store -n " + ns + " --from-literal=FROM_SECRET=s3cr3t",
        "kubectl create configmap settings -n " + ns + " --from-literal=mode=fast",
        "kubectl create serviceaccount reader -n " + ns,
        "kubectl create priorityclass " + priority_class + " --value=100"}) {
    auto [code, output] = Shell(command);
    ASSERT_EQ(code, 0) << command << ": " << output;
  }
}

json TemplateJob(const std::string& name, const std::string& out,
                 const std::string& priority_class) {
  json job = PrimesJob(name, 1000);
  json& spec = job["spec"];
  spec.erase("nodeSelector");
  // Each item writes what its command sees of the template's env.
  spec["workload"] = {
      {"exec",
       {{"command", json::array({"sh", "-c", "echo \"$FROM_SECRET $MY_ENV\" > \"$1/$BALLAST_ITEM\"",
                                 "sh", out})},
        {"perItem", true},
        {"retries", 0}}}};
  spec["items"] = 6;
  spec["template"] = json::parse(R"({
    "metadata": {"labels": {"team": "imaging"}, "annotations": {"note": "thumbnails"}},
    "spec": {
      "serviceAccountName": "reader",
      "securityContext": {"fsGroup": 2000},
      "imagePullSecrets": [{"name": "registry"}],
      "initContainers": [{"name": "prepare", "image": "busybox:1.35",
                          "command": ["sh", "-c", "exit 0"]}],
      "containers": [{
        "name": "main",
        "image": "user-image:1",
        "env": [{"name": "MY_ENV", "value": "hello"}],
        "envFrom": [{"secretRef": {"name": "store"}}],
        "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"},
                         {"name": "settings", "mountPath": "/etc/settings"}]}],
      "volumes": [{"name": "scratch", "emptyDir": {}},
                  {"name": "settings", "configMap": {"name": "settings"}}],
      "nodeSelector": {"ballast.io/pool": "seed000"}
    }})");
  spec["template"]["spec"]["priorityClassName"] = priority_class;
  return job;
}

void ExpectTheTemplateAndBallastsParts(const json& pod, const std::string& priority_class) {
  const json& spec = pod["spec"];
  SCOPED_TRACE(pod["metadata"].value("name", ""));
  // The user's.
  EXPECT_EQ(pod.value("/metadata/labels/team"_json_pointer, ""), "imaging");
  EXPECT_EQ(pod.value("/metadata/annotations/note"_json_pointer, ""), "thumbnails");
  EXPECT_EQ(spec.value("serviceAccountName", ""), "reader");
  EXPECT_EQ(spec.value("priorityClassName", ""), priority_class);
  EXPECT_EQ(spec.value("priority", 0), 100);  // the admission plugin read the class
  EXPECT_EQ(spec["imagePullSecrets"], json::parse(R"([{"name": "registry"}])"));
  EXPECT_EQ(spec.value("/securityContext/fsGroup"_json_pointer, 0), 2000);
  EXPECT_EQ(Names(spec, "initContainers"), (std::vector<std::string>{"ballast-bundle", "prepare"}));
  const auto volumes = Names(spec, "volumes");
  for (const char* volume :
       {"scratch", "settings", "ballast-bundle", "ballast-tmp", "ballast-token"}) {
    EXPECT_TRUE(Has(volumes, volume)) << volume << " in " << spec["volumes"].dump();
  }
  const json& worker = spec["containers"][0];
  EXPECT_EQ(worker.value("name", ""), "main");
  EXPECT_EQ(worker.value("image", ""), "user-image:1");
  EXPECT_EQ(worker["envFrom"], json::parse(R"([{"secretRef": {"name": "store"}}])"));
  const auto env = Names(worker, "env");
  const auto mounts = worker.value("volumeMounts", json::array()).dump();
  EXPECT_NE(mounts.find("/scratch"), std::string::npos) << mounts;
  // Ballast's.
  EXPECT_TRUE(Has(env, "MY_ENV") && Has(env, "BALLAST_TOKEN_FILE") &&
              Has(env, "BALLAST_COORDINATOR"))
      << worker["env"].dump();
  EXPECT_NE(mounts.find("/ballast"), std::string::npos) << mounts;
  EXPECT_EQ(worker.value("/command/0"_json_pointer, ""), "/ballast/ld.so");
  EXPECT_EQ(pod.value("/metadata/labels/ballast.io~1job"_json_pointer, ""),
            pod.value("/metadata/ownerReferences/0/name"_json_pointer, "-"));
  EXPECT_EQ(spec.value("restartPolicy", ""), "Never");
  EXPECT_EQ(spec.value("/securityContext/runAsUser"_json_pointer, 0), 65532);
  EXPECT_EQ(spec.value("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
                       "nodeSelectorTerms/0/matchFields/0/values/0"_json_pointer,
                       ""),
            spec.value("nodeName", "-"));
}

TEST_F(OperatorTest, TemplateJobsPodsCarryTheUsersFieldsAndBallastsParts) {
  const std::string name = "thumbnails";
  const std::string priority_class = ns_ + "-low";
  const fs::path out = fs::temp_directory_path() / ("ballast-e2e-" + ns_ + "-" + name);
  fs::remove_all(out);
  fs::create_directories(out);
  ASSERT_NO_FATAL_FAILURE(CreateTheTemplatesObjects(ns_, priority_class));
  const json job = TemplateJob(name, out.string(), priority_class);
  ASSERT_FALSE(CreateJob(job).is_null());

  auto done = WaitSucceeded(name);
  Shell("kubectl delete priorityclass " + priority_class);
  ASSERT_TRUE(done) << Describe(name);
  const json result = StatusOf(*done).value("result", json::object());
  EXPECT_EQ(result.value("/exec/succeeded"_json_pointer, 0), 6) << result.dump();
  for (int item = 0; item < 6; ++item) {
    std::ifstream in(out / std::to_string(item));
    std::string seen;
    std::getline(in, seen);
    EXPECT_EQ(seen, "s3cr3t hello") << "item " << item << ": the command's env from the template";
  }
  const auto pods = JobPods(name);
  ASSERT_EQ(pods.size(), kSeed000Weights.size()) << Describe(name);
  for (const json& pod : pods) ExpectTheTemplateAndBallastsParts(pod, priority_class);
  RemoveCommandOutputs(out);
}

TEST_F(OperatorTest, ATemplateThatSetsAFieldBallastOwnsFailsTheJobNamingIt) {
  json job = PrimesJob("pinned", kSmallLimit);
  job["spec"]["template"] = {
      {"spec", {{"nodeName", "pi4b-0"}, {"containers", {{{"name", "worker"}}}}}}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto failed = WaitForJob(
      "pinned",
      [](const json& job) { return ConditionOf(job, "Failed").value("status", "") == "True"; },
      seconds(30), "job pinned to fail");
  ASSERT_TRUE(failed);
  const json condition = ConditionOf(*failed, "Failed");
  EXPECT_EQ(PhaseOf(*failed), "Failed");
  EXPECT_EQ(condition.value("reason", ""), "InvalidSpec") << condition.dump();
  EXPECT_EQ(condition.value("message", "").rfind("spec.template.spec.nodeName: ", 0), 0u)
      << condition.dump();
  EXPECT_TRUE(JobPods("pinned").empty());
}

// Issue 61, the last round's probe re-run against the API server: a job in
// the operator's namespace whose pods carried the label the coordinator
// Service selects (ballast.io/coordinator) would receive the workers'
// requests and Bearer tokens. The job fails naming the label, and no pod
// is made (the pure refusal: PodTemplateTest.TheOperatorPodsLabelsAreRefused
// SoNoJobJoinsTheCoordinatorService).
TEST_F(OperatorTest, ATemplateWithTheCoordinatorServicesLabelFailsTheJobAndMakesNoPod) {
  json job = PrimesJob("joiner", kSmallLimit);
  job["spec"]["template"] = {{"metadata", {{"labels", {{"ballast.io/coordinator", "leader"}}}}},
                             {"spec", {{"containers", {{{"name", "worker"}}}}}}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto failed = WaitForJob(
      "joiner",
      [](const json& job) { return ConditionOf(job, "Failed").value("status", "") == "True"; },
      seconds(30), "job joiner to fail");
  ASSERT_TRUE(failed);
  const json condition = ConditionOf(*failed, "Failed");
  EXPECT_EQ(PhaseOf(*failed), "Failed");
  EXPECT_EQ(condition.value("reason", ""), "InvalidSpec") << condition.dump();
  EXPECT_EQ(condition.value("message", "")
                .rfind("spec.template.metadata.labels.ballast.io/coordinator: ", 0),
            0u)
      << condition.dump();
  EXPECT_TRUE(JobPods("joiner").empty());
}

TEST_F(OperatorTest, ShortFormsAndTheTemplateGiveEqualPods) {
  const json resources = {{"requests", {{"cpu", "10m"}}}};
  const json tolerations = json::array({{{"key", "slow"}, {"operator", "Exists"}}});
  json short_form = PrimesJob("form-a", 20000);
  short_form["spec"]["worker"] = {{"image", "ballast-worker:test"},
                                  {"imagePullPolicy", "IfNotPresent"},
                                  {"resources", resources}};
  short_form["spec"]["tolerations"] = tolerations;
  json template_form = PrimesJob("form-b", 20000);
  template_form["spec"].erase("nodeSelector");
  template_form["spec"]["template"] = {{"spec",
                                        {{"containers",
                                          {{{"name", "worker"},
                                            {"image", "ballast-worker:test"},
                                            {"imagePullPolicy", "IfNotPresent"},
                                            {"resources", resources}}}},
                                         {"nodeSelector", {{"ballast.io/pool", "seed000"}}},
                                         {"tolerations", tolerations}}}};
  ASSERT_FALSE(CreateJob(short_form).is_null());
  ASSERT_FALSE(CreateJob(template_form).is_null());
  ASSERT_TRUE(WaitSucceeded("form-a"));
  ASSERT_TRUE(WaitSucceeded("form-b"));
  std::map<std::string, std::string> specs;  // node -> the pod's spec, the job's name made JOB
  for (const char* job : {"form-a", "form-b"}) {
    const auto pods = JobPods(job);
    ASSERT_EQ(pods.size(), kSeed000Weights.size()) << Describe(job);
    for (const json& pod : pods) {
      const std::string node = pod.value("/spec/nodeName"_json_pointer, "");
      json compared = {{"labels", pod["metadata"]["labels"]}, {"spec", pod["spec"]}};
      const std::string text = Replaced(compared.dump(), job, "JOB");
      if (job == std::string("form-a")) {
        specs[node] = text;
      } else {
        EXPECT_EQ(text, specs[node]) << "the pods on " << node << " differ";
      }
    }
  }
}

}  // namespace
}  // namespace ballast::operator_e2e
