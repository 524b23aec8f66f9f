// The worker pods' template (operator/api/pod_template.h) through the
// spec's reader and the pod builder: every field Ballast owns is refused
// naming its path, every field of the user's is in the pod as written, and
// the short forms (spec.worker, spec.nodeSelector, spec.tolerations,
// spec.workload.exec.image) give the same pods as the template written out.
#include "operator/api/pod_template.h"

#include <gtest/gtest.h>

#include "operator/api/weighted_job.h"
#include "operator/controller/node_selection.h"
#include "operator/controller/worker_objects.h"

// A namespace of its own: the unity build compiles this file with the other
// tests of the spec, whose helpers have the same names.
namespace ballast::api::pod_template_test {
namespace {

using nlohmann::json;

json PrimesSpec() { return {{"workload", {{"primes", {{"limit", 1000}}}}}}; }

json ExecSpec() {
  return {{"workload", {{"exec", {{"command", json::array({"sh", "-c", "true"})}}}}}, {"items", 4}};
}

// A spec whose template is `pod_spec` (and `metadata`, when given).
json WithTemplate(json spec, const json& pod_spec, const json& metadata = json()) {
  spec["template"] = {{"spec", pod_spec}};
  if (!metadata.is_null()) spec["template"]["metadata"] = metadata;
  return spec;
}

json Containers(json worker) { return json::array({std::move(worker)}); }

controller::WorkerPodSettings Settings() {
  controller::WorkerPodSettings settings;
  settings.coordinator_url = "http://coordinator:8080";
  settings.coordinator_job = "lab.p";
  settings.default_image = "ballast-worker:default";
  return settings;
}

ObjectMeta Meta() {
  return ReadMeta({{"metadata", {{"name", "p"}, {"namespace", "lab"}, {"uid", "u-1"}}}});
}

// The pod of `spec` on node pi4b-0; fails the test when the spec is refused.
json PodOf(const json& spec, const controller::WorkerPodSettings& settings = Settings()) {
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  EXPECT_TRUE(parsed.spec) << parsed.error.status.ToString();
  if (!parsed.spec) return json();
  return controller::BuildWorkerPod(Meta(), *parsed.spec, "pi4b-0", settings);
}

struct Refusal {
  const char* name;
  json spec;
  const char* message;  // how the message starts
};

template <size_t N>
void ExpectRefused(const Refusal (&cases)[N]) {
  for (const Refusal& refusal : cases) {
    SCOPED_TRACE(refusal.name);
    ParsedSpec parsed = ParseWeightedJobSpec(refusal.spec, "p");
    ASSERT_FALSE(parsed.spec);
    EXPECT_EQ(parsed.error.reason, Reason::kInvalidSpec);
    EXPECT_EQ(parsed.error.status.message().rfind(refusal.message, 0), 0u)
        << parsed.error.status.message();
  }
}

TEST(PodTemplateTest, EveryFieldBallastOwnsIsRefusedNamingItsPath) {
  const json worker = {{"name", "main"}};
  auto with_worker = [&](json patch) {
    json container = worker;
    container.merge_patch(patch);
    return WithTemplate(PrimesSpec(), {{"containers", Containers(container)}});
  };
  auto with_pod = [&](json patch) {
    json pod = {{"containers", Containers(worker)}};
    pod.merge_patch(patch);
    return WithTemplate(PrimesSpec(), pod);
  };
  const Refusal cases[] = {
      {"nodeName", with_pod({{"nodeName", "pi4b-0"}}), "spec.template.spec.nodeName: Ballast pins"},
      {"restartPolicy Always", with_pod({{"restartPolicy", "Always"}}),
       "spec.template.spec.restartPolicy: Ballast's worker pods are Never"},
      {"restartPolicy OnFailure", with_pod({{"restartPolicy", "OnFailure"}}),
       "spec.template.spec.restartPolicy: Ballast's worker pods are Never"},
      {"shareProcessNamespace false", with_pod({{"shareProcessNamespace", false}}),
       "spec.template.spec.shareProcessNamespace: Ballast's worker pods share"},
      {"the worker's command", with_worker({{"command", {"convert"}}}),
       "spec.template.spec.containers[0].command: Ballast runs its worker"},
      {"the worker's args", with_worker({{"args", {"-v"}}}),
       "spec.template.spec.containers[0].args: Ballast runs its worker"},
      {"Ballast's env", with_worker({{"env", {{{"name", "A"}}, {{"name", "BALLAST_TOKEN"}}}}}),
       "spec.template.spec.containers[0].env[1].name: Ballast sets BALLAST_TOKEN"},
      {"NODE_NAME otherwise", with_worker({{"env", {{{"name", "NODE_NAME"}, {"value", "x"}}}}}),
       "spec.template.spec.containers[0].env[0].name: Ballast sets NODE_NAME"},
      {"a mount at /ballast",
       with_worker({{"volumeMounts", {{{"name", "v"}, {"mountPath", "/ballast"}}}}}),
       "spec.template.spec.containers[0].volumeMounts[0].mountPath: \"/ballast\" is /ballast, "
       "where Ballast mounts its worker bundle"},
      {"the token file's variable",
       with_worker({{"env", {{{"name", "BALLAST_TOKEN_FILE"}, {"value", "/t"}}}}}),
       "spec.template.spec.containers[0].env[0].name: Ballast sets BALLAST_TOKEN_FILE"},
      {"a mount inside the token's",
       with_worker(
           {{"volumeMounts", {{{"name", "v"}, {"mountPath", "/var/run/secrets/ballast.io/x"}}}}}),
       "spec.template.spec.containers[0].volumeMounts[0].mountPath: "
       "\"/var/run/secrets/ballast.io/x\" is inside /var/run/secrets/ballast.io, where Ballast "
       "mounts the job's token"},
      {"a volume named as the token's",
       with_pod({{"volumes", {{{"name", "ballast-token"}, {"emptyDir", json::object()}}}}}),
       "spec.template.spec.volumes[0].name: \"ballast-token\" is the name of Ballast's"},
      {"an init container named as Ballast's",
       with_pod({{"initContainers", {{{"name", "ballast-bundle"}, {"image", "x"}}}}}),
       "spec.template.spec.initContainers[0].name: \"ballast-bundle\" is the name of Ballast's"},
      {"a container named as Ballast's",
       WithTemplate(PrimesSpec(),
                    {{"containers", {worker, {{"name", "ballast-bundle"}, {"image", "x"}}}}}),
       "spec.template.spec.containers[1].name: \"ballast-bundle\" is the name of Ballast's"},
      {"a volume named as Ballast's",
       with_pod({{"volumes", {{{"name", "ballast-tmp"}, {"emptyDir", json::object()}}}}}),
       "spec.template.spec.volumes[0].name: \"ballast-tmp\" is the name of Ballast's"},
      {"the job label",
       WithTemplate(PrimesSpec(), {{"containers", Containers(worker)}},
                    {{"labels", {{"ballast.io/job", "q"}}}}),
       "spec.template.metadata.labels.ballast.io/job: Ballast sets this label"},
      {"the node label",
       WithTemplate(PrimesSpec(), {{"containers", Containers(worker)}},
                    {{"labels", {{"ballast.io/node", "n"}}}}),
       "spec.template.metadata.labels.ballast.io/node: Ballast sets this label"},
      {"the managed-by label",
       WithTemplate(PrimesSpec(), {{"containers", Containers(worker)}},
                    {{"labels", {{"app.kubernetes.io/managed-by", "me"}}}}),
       "spec.template.metadata.labels.app.kubernetes.io/managed-by: Ballast sets this label"},
  };
  ExpectRefused(cases);
}

// A job in the operator's namespace whose pods carried the labels of the
// operator's pods would join the coordinator Service and receive the
// workers' requests and Bearer tokens.
TEST(PodTemplateTest, TheOperatorPodsLabelsAreRefusedSoNoJobJoinsTheCoordinatorService) {
  auto with_labels = [](json labels) {
    return WithTemplate(PrimesSpec(), {{"containers", Containers({{"name", "main"}})}},
                        {{"labels", labels}});
  };
  const Refusal cases[] = {
      {"the leader label", with_labels({{"ballast.io/coordinator", "leader"}}),
       "spec.template.metadata.labels.ballast.io/coordinator: ballast.io/coordinator marks the "
       "Ballast operator's pods, which the coordinator Service selects"},
      {"the leader label, any value", with_labels({{"ballast.io/coordinator", "x"}}),
       "spec.template.metadata.labels.ballast.io/coordinator: ballast.io/coordinator marks"},
      {"the operator's component",
       with_labels({{"app.kubernetes.io/name", "ballast"},
                    {"app.kubernetes.io/instance", "ballast"},
                    {"app.kubernetes.io/component", "operator"}}),
       "spec.template.metadata.labels.app.kubernetes.io/component: "
       "app.kubernetes.io/component=operator marks the Ballast operator's pods"},
  };
  ExpectRefused(cases);
  // The chart's other labels, and another component, are the user's.
  const json pod = PodOf(with_labels({{"app.kubernetes.io/name", "ballast"},
                                      {"app.kubernetes.io/instance", "ballast"},
                                      {"app.kubernetes.io/component", "worker"}}));
  EXPECT_EQ(pod["metadata"]["labels"]["app.kubernetes.io/component"], "worker");
}

// "/ballast/" passed an exact comparison and gave the worker container two
// mounts at /ballast ("ld.so: no such file"); "/tmp/../ballast" and
// "/ballast/lib" would shadow the bundle or part of it.
TEST(PodTemplateTest, AMountAtOrBelowBallastIsRefusedHoweverItsPathIsWritten) {
  auto with_mount = [](const char* path) {
    return WithTemplate(
        ExecSpec(),
        {{"containers", Containers({{"name", "main"},
                                    {"image", "py:3"},
                                    {"volumeMounts", {{{"name", "v"}, {"mountPath", path}}}}})},
         {"volumes", {{{"name", "v"}, {"emptyDir", json::object()}}}}});
  };
  const std::string at = "spec.template.spec.containers[0].volumeMounts[0].mountPath: ";
  const std::string messages[] = {
      at + "\"/ballast/\" is /ballast, where Ballast mounts its worker bundle; choose a path "
           "outside it",
      at + "\"/tmp/../ballast\" is /ballast, where",
      at + "\"//ballast/./\" is /ballast, where",
      at + "\"ballast\" is /ballast, where",
      at + "\"/ballast/lib\" is inside /ballast, where Ballast mounts its worker bundle",
      at + "\"/data/../ballast/lib/x\" is inside /ballast, where",
  };
  const Refusal cases[] = {
      {"a trailing slash", with_mount("/ballast/"), messages[0].c_str()},
      {"a dot-dot", with_mount("/tmp/../ballast"), messages[1].c_str()},
      {"doubled slashes and a dot", with_mount("//ballast/./"), messages[2].c_str()},
      {"a relative path", with_mount("ballast"), messages[3].c_str()},
      {"below it", with_mount("/ballast/lib"), messages[4].c_str()},
      {"below it, written around", with_mount("/data/../ballast/lib/x"), messages[5].c_str()},
  };
  ExpectRefused(cases);
  for (const char* path : {"/ballast-data", "/data/ballast", "/ballast/../data", "/"}) {
    SCOPED_TRACE(path);
    EXPECT_TRUE(ParseWeightedJobSpec(with_mount(path), "p").spec);
  }
}

TEST(NormalMountPath, IsThePathTheContainerSees) {
  const std::pair<const char*, const char*> cases[] = {
      {"/ballast", "/ballast"},
      {"/ballast/", "/ballast"},
      {"/tmp/../ballast", "/ballast"},
      {"//a//b/", "/a/b"},
      {"/a/./b/.", "/a/b"},
      {"/../../a", "/a"},
      {"a/b", "/a/b"},
      {"", "/"},
      {"/", "/"},
      {"/a/b/../../..", "/"},
      {"/a/..b/c", "/a/..b/c"},
      {"/a/.../c", "/a/.../c"},
  };
  for (const auto& [given, normal] : cases) EXPECT_EQ(NormalMountPath(given), normal) << given;
}

TEST(PodTemplateTest, AShortFormThatContradictsTheTemplateIsRefusedNamingBoth) {
  const json worker = {{"name", "worker"},
                       {"image", "mine:1"},
                       {"imagePullPolicy", "Never"},
                       {"resources", {{"limits", {{"cpu", "1"}}}}}};
  json exec = WithTemplate(ExecSpec(), {{"containers", Containers(worker)}});
  exec["workload"]["exec"]["image"] = "other:1";
  json primes = WithTemplate(PrimesSpec(), {{"containers", Containers(worker)}});
  auto primes_with = [&](json patch) {
    json spec = primes;
    spec.merge_patch(patch);
    return spec;
  };
  const Refusal cases[] = {
      {"exec image", exec,
       "spec.workload.exec.image and spec.template.spec.containers[0].image say different "
       "things (\"other:1\" and \"mine:1\")"},
      {"worker image", primes_with({{"worker", {{"image", "other:1"}}}}),
       "spec.worker.image and spec.template.spec.containers[0].image say different things"},
      {"pull policy", primes_with({{"worker", {{"imagePullPolicy", "Always"}}}}),
       "spec.worker.imagePullPolicy and spec.template.spec.containers[0].imagePullPolicy"},
      {"resources", primes_with({{"worker", {{"resources", {{"limits", {{"cpu", "2"}}}}}}}}),
       "spec.worker.resources and spec.template.spec.containers[0].resources"},
      {"node selector",
       primes_with({{"nodeSelector", {{"pool", "a"}}},
                    {"template", {{"spec", {{"nodeSelector", {{"pool", "b"}}}}}}}}),
       "spec.nodeSelector.pool and spec.template.spec.nodeSelector.pool say different things"},
  };
  ExpectRefused(cases);
  // Both forms saying the same is no contradiction.
  EXPECT_TRUE(ParseWeightedJobSpec(primes_with({{"worker", {{"image", "mine:1"}}}}), "p").spec);
}

TEST(PodTemplateTest, WhatBallastReadsOfTheTemplateMustHaveItsType) {
  const Refusal cases[] = {
      {"template", {{"template", "pod"}}, "spec.template: expected a PodTemplateSpec, got \"pod\""},
      {"containers",
       {{"template", {{"spec", {{"containers", "c"}}}}}},
       "spec.template.spec.containers: expected a list, got \"c\""},
      {"env entry",
       {{"template", {{"spec", {{"containers", {{{"name", "w"}, {"env", {1}}}}}}}}}},
       "spec.template.spec.containers[0].env[0]: expected an object, got 1"},
      {"image",
       {{"template", {{"spec", {{"containers", {{{"name", "w"}, {"image", 5}}}}}}}}},
       "spec.template.spec.containers[0].image: expected a string, got 5"},
      {"label",
       {{"template", {{"metadata", {{"labels", {{"team", 1}}}}}}}},
       "spec.template.metadata.labels.team: expected a string, got 1"},
      {"affinity",
       {{"template", {{"spec", {{"containers", json::array()}, {"affinity", "x"}}}}}},
       "spec.template.spec.affinity: expected an object, got \"x\""},
      {"toleration",
       {{"template", {{"spec", {{"containers", json::array()}, {"tolerations", {{{"key", 1}}}}}}}}},
       "spec.template.spec.tolerations[0].key: expected a string, got 1"},
  };
  for (const Refusal& refusal : cases) {
    SCOPED_TRACE(refusal.name);
    json spec = PrimesSpec();
    spec.merge_patch(refusal.spec);
    ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
    ASSERT_FALSE(parsed.spec);
    EXPECT_EQ(parsed.error.status.message().rfind(refusal.message, 0), 0u)
        << parsed.error.status.message();
  }
}

// A template with a field of every kind the user owns.
json UsersPodSpec() {
  return json::parse(R"({
    "containers": [
      {"name": "main", "image": "ballast-worker:default",
       "env": [{"name": "DATA", "value": "/data"},
               {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
       "envFrom": [{"secretRef": {"name": "store"}}, {"configMapRef": {"name": "settings"}}],
       "volumeMounts": [{"name": "data", "mountPath": "/data"}],
       "workingDir": "/data",
       "resources": {"requests": {"cpu": "250m"}},
       "securityContext": {"readOnlyRootFilesystem": false},
       "ports": [{"name": "http", "containerPort": 8000}]},
      {"name": "sidecar", "image": "busybox:1.35", "command": ["sleep", "1"]}],
    "initContainers": [{"name": "fetch", "image": "busybox:1.35", "command": ["true"]}],
    "volumes": [{"name": "data", "emptyDir": {}},
                {"name": "settings", "configMap": {"name": "settings"}}],
    "serviceAccountName": "reader",
    "automountServiceAccountToken": true,
    "securityContext": {"fsGroup": 2000, "runAsUser": 1000},
    "imagePullSecrets": [{"name": "registry"}],
    "priorityClassName": "batch-low",
    "nodeSelector": {"pool": "a"},
    "tolerations": [{"key": "slow", "operator": "Exists"}],
    "affinity": {
      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]}]}},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
    "dnsPolicy": "ClusterFirst",
    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["store"]}],
    "runtimeClassName": "fast",
    "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 90,
    "enableServiceLinks": true,
    "restartPolicy": "Never"
  })");
}

TEST(PodTemplateTest, EveryFieldOfTheUsersIsInThePodBesideBallastsParts) {
  const json user = UsersPodSpec();
  const json labels = {{"team", "imaging"}};
  const json annotations = {{"note", "thumbnails"}};
  const json pod =
      PodOf(WithTemplate(PrimesSpec(), user, {{"labels", labels}, {"annotations", annotations}}));
  const json& spec = pod["spec"];
  // Untouched pod fields, one by one.
  for (const char* key : {"initContainers", "serviceAccountName", "automountServiceAccountToken",
                          "imagePullSecrets", "priorityClassName", "nodeSelector", "tolerations",
                          "dnsPolicy", "hostAliases", "runtimeClassName", "schedulerName",
                          "terminationGracePeriodSeconds", "enableServiceLinks", "restartPolicy"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(spec[key], user[key]);
  }
  EXPECT_EQ(spec["containers"][1], user["containers"][1]);
  // The user's volumes, then the token's.
  json volumes = user["volumes"];
  volumes.push_back(spec["volumes"].back());
  EXPECT_EQ(spec["volumes"], volumes);
  EXPECT_EQ(spec["volumes"].back()["name"], "ballast-token");
  // The user's metadata beside Ballast's labels.
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "imaging");
  EXPECT_EQ(pod["metadata"]["labels"]["ballast.io/job"], "p");
  EXPECT_EQ(pod["metadata"]["annotations"], annotations);
  // Security contexts: the user's keys over Ballast's.
  EXPECT_EQ(spec["securityContext"]["runAsUser"], 1000);
  EXPECT_EQ(spec["securityContext"]["fsGroup"], 2000);
  EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(spec["shareProcessNamespace"], true);
  // Node affinity: the user's term, and the pin to the node, both required.
  const json terms = spec["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0]["matchExpressions"],
            user["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchExpressions"]);
  EXPECT_EQ(terms[0]["matchFields"][0]["values"], json::array({"pi4b-0"}));
  EXPECT_EQ(spec["affinity"]["podAntiAffinity"], user["affinity"]["podAntiAffinity"]);
  // The worker container: the user's, with Ballast's env first and its command.
  const json& worker = spec["containers"][0];
  const json& mine = user["containers"][0];
  for (const char* key : {"name", "image", "envFrom", "workingDir", "resources", "ports"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(worker[key], mine[key]);
  }
  json mounts = mine["volumeMounts"];
  mounts.push_back({{"name", "ballast-token"},
                    {"mountPath", "/var/run/secrets/ballast.io"},
                    {"readOnly", true}});
  EXPECT_EQ(worker["volumeMounts"], mounts);
  EXPECT_FALSE(worker["securityContext"]["readOnlyRootFilesystem"].get<bool>());
  EXPECT_FALSE(worker["securityContext"]["allowPrivilegeEscalation"].get<bool>());
  const json& env = worker["env"];
  EXPECT_EQ(env[0]["name"], "BALLAST_COORDINATOR");
  EXPECT_EQ(env[env.size() - 1], mine["env"][0]);  // the user's after Ballast's
  int node_names = 0;
  for (const json& entry : env) node_names += entry["name"] == "NODE_NAME";
  EXPECT_EQ(node_names, 1);  // Ballast's NODE_NAME, which the user repeated, once
  EXPECT_FALSE(spec.contains("nodeName"));
}

TEST(PodTemplateTest, BallastsDefaultsApplyWhereTheTemplateSaysNothing) {
  const json pod = PodOf(WithTemplate(PrimesSpec(), {{"containers", Containers({{"name", "w"}})}}));
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_EQ(spec["enableServiceLinks"], false);
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["securityContext"]["runAsUser"], 65532);
  EXPECT_EQ(spec["containers"][0]["image"], "ballast-worker:default");
  EXPECT_EQ(spec["containers"][0]["name"], "w");
  EXPECT_EQ(spec["containers"][0]["terminationMessagePolicy"], "FallbackToLogsOnError");
  EXPECT_TRUE(spec["containers"][0]["securityContext"]["readOnlyRootFilesystem"].get<bool>());
}

// Each job twice: in the short forms and as the template written out. The
// pods must be the same, byte for byte.
TEST(PodTemplateTest, ShortFormsGiveTheSamePodsAsTheTemplate) {
  const json tolerations = json::array({{{"key", "slow"}, {"operator", "Exists"}}});
  const json resources = {{"requests", {{"cpu", "500m"}}}, {"limits", {{"memory", "64Mi"}}}};
  json short_primes = PrimesSpec();
  short_primes["worker"] = {
      {"image", "w:1"}, {"imagePullPolicy", "IfNotPresent"}, {"resources", resources}};
  short_primes["nodeSelector"] = {{"pool", "a"}};
  short_primes["tolerations"] = tolerations;
  const json long_primes =
      WithTemplate(PrimesSpec(), {{"containers", Containers({
                                                     {"name", "worker"},
                                                     {"image", "w:1"},
                                                     {"imagePullPolicy", "IfNotPresent"},
                                                     {"resources", resources},
                                                 })},
                                  {"nodeSelector", {{"pool", "a"}}},
                                  {"tolerations", tolerations}});
  EXPECT_EQ(PodOf(short_primes).dump(), PodOf(long_primes).dump());

  json short_exec = ExecSpec();
  short_exec["workload"]["exec"]["image"] = "debian:12";
  short_exec["worker"] = {{"image", "w:1"}, {"resources", resources}};
  json long_exec = WithTemplate(
      ExecSpec(),
      {{"containers",
        Containers({{"name", "worker"}, {"image", "debian:12"}, {"resources", resources}})}});
  long_exec["worker"] = {{"image", "w:1"}};  // the image ballast-worker comes from
  const json pod = PodOf(short_exec);
  EXPECT_EQ(pod.dump(), PodOf(long_exec).dump());
  EXPECT_EQ(pod["spec"]["initContainers"][0]["image"], "w:1");
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "debian:12");
}

TEST(PodTemplateTest, AnExecJobRunsInTheWorkerContainersImageBundledOnlyWhenItIsAnother) {
  const json mine =
      WithTemplate(ExecSpec(), {{"containers", Containers({{"name", "main"}, {"image", "py:3"}})},
                                {"initContainers", {{{"name", "fetch"}, {"image", "busybox"}}}}});
  const json pod = PodOf(mine);
  const json& spec = pod["spec"];
  ASSERT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_EQ(spec["initContainers"][0]["name"], "ballast-bundle");  // first: before the user's
  EXPECT_EQ(spec["initContainers"][0]["image"], "ballast-worker:default");
  EXPECT_EQ(spec["initContainers"][1]["name"], "fetch");
  EXPECT_EQ(spec["containers"][0]["image"], "py:3");
  EXPECT_EQ(spec["containers"][0]["command"][0], "/ballast/ld.so");
  // The template's own /tmp is kept; Ballast's is not added.
  json own_tmp = mine;
  own_tmp["template"]["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "scratch"}, {"mountPath", "/tmp"}}};
  own_tmp["template"]["spec"]["volumes"] = {{{"name", "scratch"}, {"emptyDir", json::object()}}};
  const json with_tmp = PodOf(own_tmp)["spec"];
  EXPECT_EQ(with_tmp["volumes"].size(), 3u);  // scratch, the bundle and the token
  EXPECT_EQ(with_tmp["containers"][0]["volumeMounts"].size(), 3u);
  // The worker's own image needs no bundle.
  json plain = mine;
  plain["template"]["spec"]["containers"][0]["image"] = "ballast-worker:default";
  EXPECT_EQ(PodOf(plain)["spec"]["initContainers"].size(), 1u);  // the user's only
  EXPECT_FALSE(PodOf(plain)["spec"]["containers"][0].contains("command"));
}

TEST(PodTemplateTest, TheRequiredNodeAffinityChoosesTheNodes) {
  json spec = WithTemplate(PrimesSpec(), json::parse(R"({"containers": [{"name": "w"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
      "nodeSelectorTerms": [{"matchExpressions": [{"key": "arch", "operator": "In",
                                                   "values": ["arm64"]}]}]}}}})"));
  ParsedSpec parsed = ParseWeightedJobSpec(spec, "p");
  ASSERT_TRUE(parsed.spec) << parsed.error.status.ToString();
  const PodTemplate& pods = parsed.spec->pod_template;
  auto node = [](const char* arch) {
    return ReadNode({{"metadata", {{"name", "n"}, {"labels", {{"arch", arch}}}}},
                     {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  };
  EXPECT_EQ(controller::Ineligibility(node("arm64"), pods.node_selector, pods.tolerations,
                                      pods.node_affinity_terms),
            "");
  EXPECT_EQ(controller::Ineligibility(node("arm"), pods.node_selector, pods.tolerations,
                                      pods.node_affinity_terms),
            "node n: matches none of the required node affinity's terms "
            "(spec.template.spec.affinity.nodeAffinity)");
}

}  // namespace
}  // namespace ballast::api::pod_template_test
