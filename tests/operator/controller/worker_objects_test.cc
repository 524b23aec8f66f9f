#include "operator/controller/worker_objects.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace ballast::controller {
namespace {

using nlohmann::json;

json Job(json spec = json::object()) {
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", "primes"}, {"namespace", "lab"}, {"uid", "u-1"}}},
          {"spec", spec}};
}

// The spec of `job` as the operator reads it; a primes workload when the
// test names none, and items for an exec one.
api::WeightedJobSpec SpecOf(const json& job) {
  json spec = job["spec"];
  if (!spec.contains("workload")) spec["workload"] = {{"primes", {{"limit", 1000}}}};
  if (spec["workload"].contains("exec") && !spec.contains("items")) spec["items"] = 4;
  api::ParsedSpec parsed = api::ParseWeightedJobSpec(spec, job["metadata"]["name"]);
  EXPECT_TRUE(parsed.spec) << parsed.error.status.ToString();
  return parsed.spec.value_or(api::WeightedJobSpec{});
}

// The worker pod of `job` on `node`, its spec read as the operator reads it.
json WorkerPodOf(const json& job, const std::string& node, const WorkerPodSettings& settings) {
  return BuildWorkerPod(api::ReadMeta(job), SpecOf(job), node, settings);
}

bool IsDnsLabel(const std::string& name) {
  static const std::regex kLabel("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return name.size() <= 63 && std::regex_match(name, kLabel);
}

TEST(WorkerPodName, IsJobDashNodeWhenThatIsAValidName) {
  EXPECT_EQ(WorkerPodName("primes", "pi4b-0"), "primes-pi4b-0");
  EXPECT_EQ(TokenSecretName("primes"), "primes-token");
}

TEST(WorkerPodName, LongOrOddNamesBecomeDistinctValidLabels) {
  const std::string job(60, 'j');
  const std::string a = WorkerPodName(job, "node-a");
  const std::string b = WorkerPodName(job, "node-b");
  EXPECT_TRUE(IsDnsLabel(a)) << a;
  EXPECT_TRUE(IsDnsLabel(b)) << b;
  EXPECT_NE(a, b);
  // Node names may hold dots and capitals; a pod name may not.
  const std::string dotted = WorkerPodName("primes", "Node.Example.COM");
  EXPECT_TRUE(IsDnsLabel(dotted)) << dotted;
  EXPECT_NE(dotted, WorkerPodName("primes", "node-example-com"));
  // Deterministic: the same inputs give the same name in every process.
  EXPECT_EQ(a, WorkerPodName(job, "node-a"));
}

TEST(BuildWorkerPod, PinsTheNodeOwnsThePodAndTakesTheTokenFromTheSecret) {
  WorkerPodSettings settings;
  settings.coordinator_url = "http://coordinator:8080";
  settings.coordinator_job = "lab.primes";
  const json pod =
      WorkerPodOf(Job({{"tolerations", json::array({{{"key", "pi"}, {"operator", "Exists"}}})},
                       {"worker",
                        {{"image", "registry/ballast-worker:1"},
                         {"resources", {{"limits", {{"cpu", "1"}}}}}}}}),
                  "pi3b-0", settings);
  EXPECT_EQ(pod["metadata"]["name"], "primes-pi3b-0");
  EXPECT_EQ(pod["metadata"]["namespace"], "lab");
  EXPECT_EQ(pod["metadata"]["labels"]["ballast.io/job"], "primes");
  EXPECT_EQ(pod["metadata"]["labels"]["ballast.io/node"], "pi3b-0");
  const json owner = pod["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["uid"], "u-1");
  EXPECT_EQ(owner["kind"], "WeightedJob");
  EXPECT_TRUE(owner["controller"].get<bool>());
  const json term = pod["spec"]["affinity"]["nodeAffinity"]
                       ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0];
  EXPECT_EQ(term["matchFields"][0]["key"], "metadata.name");
  EXPECT_EQ(term["matchFields"][0]["values"], json::array({"pi3b-0"}));
  EXPECT_EQ(pod["spec"]["tolerations"][0]["key"], "pi");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  // Orphans of exec commands are reaped by the sandbox, not left as zombies
  // of a worker running as PID 1.
  EXPECT_TRUE(pod["spec"]["shareProcessNamespace"].get<bool>());
  EXPECT_TRUE(pod["spec"]["securityContext"]["runAsNonRoot"].get<bool>());
  const json container = pod["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "registry/ballast-worker:1");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "1");
  EXPECT_TRUE(container["securityContext"]["readOnlyRootFilesystem"].get<bool>());
  EXPECT_FALSE(container["securityContext"]["allowPrivilegeEscalation"].get<bool>());
  std::map<std::string, json> env;
  for (const auto& var : container["env"]) env[var["name"]] = var;
  EXPECT_EQ(env["BALLAST_COORDINATOR"]["value"], "http://coordinator:8080");
  EXPECT_EQ(env["BALLAST_JOB"]["value"], "lab.primes");
  EXPECT_EQ(env["BALLAST_WORKER_NAME"]["value"], "pi3b-0");
  // The worker's metrics' job and namespace labels (docs/metrics.md).
  EXPECT_EQ(env["BALLAST_JOB_NAME"]["value"], "primes");
  EXPECT_EQ(env["BALLAST_NAMESPACE"]["value"], "lab");
  // The token is a file of a Secret volume, not a variable from the Secret:
  // a kubelet refused the Secret at first mounts a volume again within a
  // second, where a variable fails the pod's sync for 10 s.
  EXPECT_FALSE(env.count("BALLAST_TOKEN"));
  EXPECT_EQ(env["BALLAST_TOKEN_FILE"]["value"], "/var/run/secrets/ballast.io/token");
  EXPECT_EQ(container["volumeMounts"], json::parse(R"([{"name": "ballast-token",
      "mountPath": "/var/run/secrets/ballast.io", "readOnly": true}])"));
  EXPECT_EQ(pod["spec"]["volumes"], json::parse(R"([{"name": "ballast-token", "secret": {
      "secretName": "primes-token", "items": [{"key": "token", "path": "token"}],
      "defaultMode": 292}}])"));
  EXPECT_FALSE(env.count("BALLAST_METRICS_LISTEN"));  // metrics_port 0
  EXPECT_FALSE(env.count("BALLAST_NODE_CPU"));        // the node declares no CPU
}

TEST(BuildWorkerPod, PassesTheCpuItsNodeDeclares) {
  WorkerPodSettings settings;
  settings.node_cpu = 0.5;
  const json pod = WorkerPodOf(Job(), "pi4b-0", settings);
  std::map<std::string, json> env;
  for (const auto& var : pod["spec"]["containers"][0]["env"]) env[var["name"]] = var;
  EXPECT_EQ(env["BALLAST_NODE_CPU"]["value"], "0.5");
}

TEST(BuildWorkerPod, UsesTheOperatorsImageWhenTheJobNamesNone) {
  WorkerPodSettings settings;
  settings.default_image = "ballast-worker:default";
  settings.metrics_port = 9090;
  const json pod = WorkerPodOf(Job(), "pi5-0", settings);
  const json container = pod["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "ballast-worker:default");
  EXPECT_EQ(container["ports"][0]["containerPort"], 9090);
  EXPECT_FALSE(pod["spec"].contains("tolerations"));
}

// Regression (issue 58): the default was the bare name ballast-worker:VERSION,
// which a node without the image pulls from Docker Hub, where there is none.
TEST(BuildWorkerPod, DefaultImageIsThePublishedOneWithItsRegistry) {
  const json pod = WorkerPodOf(Job(), "pi5-0", WorkerPodSettings{});
  EXPECT_EQ(pod["spec"]["containers"][0]["image"],
            "ghcr.io/ballast-io/ballast-worker:" + std::string(kVersion));
}

TEST(BuildWorkerPod, OnlyAnExecJobWithAnImageRunsInTheUsersImage) {
  struct Case {
    const char* name;
    json workload;
    bool in_user_image;
  };
  const json command = json::array({"sh", "-c", "true"});
  for (const Case& c : std::vector<Case>{
           {"primes", {{"primes", {{"limit", 1000}}}}, false},
           {"matmul", {{"matmul", {{"size", 64}, {"block", 16}}}}, false},
           {"exec without image", {{"exec", {{"command", command}}}}, false},
           {"exec with empty image", {{"exec", {{"command", command}, {"image", ""}}}}, false},
           {"exec with image", {{"exec", {{"command", command}, {"image", "busybox:1"}}}}, true},
       }) {
    SCOPED_TRACE(c.name);
    const json pod = WorkerPodOf(Job({{"workload", c.workload}}), "pi5-0", WorkerPodSettings{});
    const json& spec = pod["spec"];
    ASSERT_EQ(spec["containers"].size(), 1u);
    EXPECT_EQ(spec.contains("initContainers"), c.in_user_image);
    // The bundle's and /tmp's beside the token's.
    EXPECT_EQ(spec["volumes"].size(), c.in_user_image ? 3u : 1u);
    EXPECT_EQ(spec["containers"][0]["image"],
              c.in_user_image ? "busybox:1" : std::string(kDefaultWorkerImage));
    // The worker image's entrypoint is ballast-worker; only the user's image
    // needs a command.
    EXPECT_EQ(spec["containers"][0].contains("command"), c.in_user_image);
  }
}

TEST(BuildWorkerPod, ExecInTheUsersImageBundlesTheWorkerInAnInitContainer) {
  WorkerPodSettings settings;
  settings.coordinator_url = "http://coordinator:8080";
  settings.coordinator_job = "lab.primes";
  settings.metrics_port = 9090;
  const json resources = {{"limits", {{"cpu", "1"}, {"memory", "256Mi"}}}};
  const json job =
      Job({{"workload", {{"exec", {{"command", json::array({"sh"})}, {"image", "debian:12"}}}}},
           {"worker",
            {{"image", "registry/ballast-worker:1"},
             {"imagePullPolicy", "IfNotPresent"},
             {"resources", resources}}}});
  const json pod = WorkerPodOf(job, "pi4b-0", settings);
  const json plain = WorkerPodOf(Job({{"worker", job["spec"]["worker"]}}), "pi4b-0", settings);
  const json& spec = pod["spec"];
  // The pod around the containers is the same as any worker pod's.
  for (const char* key : {"securityContext", "affinity", "restartPolicy", "shareProcessNamespace",
                          "automountServiceAccountToken", "terminationGracePeriodSeconds"}) {
    EXPECT_EQ(spec[key], plain["spec"][key]) << key;
  }
  // It says where its bundle comes from.
  json metadata = pod["metadata"];
  EXPECT_EQ(metadata["annotations"], json({{"ballast.io/worker-bundle", "init-container"}}));
  metadata.erase("annotations");
  EXPECT_EQ(metadata, plain["metadata"]);
  EXPECT_FALSE(plain["metadata"].contains("annotations"));

  ASSERT_EQ(spec["initContainers"].size(), 1u);
  const json& bundle = spec["initContainers"][0];
  const json& worker = spec["containers"][0];
  const json& usual = plain["spec"]["containers"][0];
  EXPECT_EQ(bundle["name"], "ballast-bundle");
  EXPECT_EQ(bundle["image"], "registry/ballast-worker:1");
  EXPECT_FALSE(bundle.contains("command"));
  EXPECT_EQ(bundle["args"], json::array({"bundle", "--to", "/ballast"}));
  EXPECT_EQ(bundle["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(bundle["resources"], resources);
  EXPECT_EQ(bundle["securityContext"], json::parse(R"({
      "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true,
      "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}})"));
  EXPECT_FALSE(bundle.contains("env"));  // no token where it is not needed
  EXPECT_FALSE(bundle.contains("ports"));
  EXPECT_EQ(bundle["volumeMounts"],
            json::parse(R"([{"name": "ballast-bundle", "mountPath": "/ballast"}])"));

  EXPECT_EQ(worker["name"], "worker");
  EXPECT_EQ(worker["image"], "debian:12");
  EXPECT_EQ(worker["command"], json::array({"/ballast/ld.so", "--library-path", "/ballast/lib",
                                            "/ballast/ballast-worker"}));
  EXPECT_FALSE(worker.contains("args"));
  for (const char* key : {"env", "securityContext", "resources", "imagePullPolicy", "ports",
                          "terminationMessagePolicy"}) {
    EXPECT_EQ(worker[key], usual[key]) << key;
  }
  EXPECT_TRUE(worker["securityContext"]["readOnlyRootFilesystem"].get<bool>());
  EXPECT_EQ(worker["volumeMounts"], json::parse(R"([
      {"name": "ballast-bundle", "mountPath": "/ballast", "readOnly": true},
      {"name": "ballast-tmp", "mountPath": "/tmp"},
      {"name": "ballast-token", "mountPath": "/var/run/secrets/ballast.io", "readOnly": true}])"));
  EXPECT_EQ(spec["volumes"][0], json::parse(R"({"name": "ballast-bundle", "emptyDir": {}})"));
  EXPECT_EQ(spec["volumes"][1], json::parse(R"({"name": "ballast-tmp", "emptyDir": {}})"));
  EXPECT_EQ(spec["volumes"][2], plain["spec"]["volumes"][0]);  // the token's
}

// Where the node mounts image volumes: the ballast-worker image is the
// volume, its bundle directory the program; no init container, no copy.
TEST(BuildWorkerPod, ExecInTheUsersImageCanMountTheWorkerImageAsAnImageVolume) {
  WorkerPodSettings settings;
  settings.bundle = BundleSource::kImageVolume;
  const json worker_spec = {{"image", "registry/ballast-worker:1"}, {"imagePullPolicy", "Never"}};
  const json job =
      Job({{"workload", {{"exec", {{"command", json::array({"sh"})}, {"image", "debian:12"}}}}},
           {"worker", worker_spec}});
  const json pod = WorkerPodOf(job, "pi4b-0", settings);
  const json copied = WorkerPodOf(job, "pi4b-0", WorkerPodSettings{});
  const json& spec = pod["spec"];
  EXPECT_EQ(pod["metadata"]["annotations"], json({{"ballast.io/worker-bundle", "image-volume"}}));
  EXPECT_FALSE(spec.contains("initContainers"));
  const json& worker = spec["containers"][0];
  EXPECT_EQ(worker["command"],
            json::array({"/ballast/bundle/ld.so", "--library-path", "/ballast/bundle/lib",
                         "/ballast/bundle/ballast-worker"}));
  // The same mounts as with the copy; only the volume's source differs.
  EXPECT_EQ(worker["volumeMounts"], copied["spec"]["containers"][0]["volumeMounts"]);
  EXPECT_EQ(spec["volumes"][0], json::parse(R"({"name": "ballast-bundle",
      "image": {"reference": "registry/ballast-worker:1", "pullPolicy": "Never"}})"));
  EXPECT_EQ(spec["volumes"].size(), copied["spec"]["volumes"].size());
  for (size_t i = 1; i < spec["volumes"].size(); ++i) {
    EXPECT_EQ(spec["volumes"][i], copied["spec"]["volumes"][i]);
  }
  // Without a pull policy the kubelet's default applies, as for containers.
  json unpinned = job;
  unpinned["spec"]["worker"].erase("imagePullPolicy");
  EXPECT_EQ(WorkerPodOf(unpinned, "pi4b-0", settings)["spec"]["volumes"][0]["image"],
            json({{"reference", "registry/ballast-worker:1"}}));
  // The template's own init containers stay, alone.
  json with_init = job;
  with_init["spec"]["template"] = json::parse(R"({"spec": {"containers": [{"name": "main"}],
      "initContainers": [{"name": "fetch", "image": "busybox:1"}]}})");
  const json init = WorkerPodOf(with_init, "pi4b-0", settings)["spec"]["initContainers"];
  ASSERT_EQ(init.size(), 1u);
  EXPECT_EQ(init[0]["name"], "fetch");
}

// A worker in the ballast-worker image needs no bundle: no annotation, no
// volume, whatever the source.
TEST(BuildWorkerPod, AWorkerInItsOwnImageHasNoBundleWhateverTheSource) {
  WorkerPodSettings settings;
  settings.bundle = BundleSource::kImageVolume;
  const json pod = WorkerPodOf(Job(), "pi4b-0", settings);
  EXPECT_FALSE(pod["metadata"].contains("annotations"));
  EXPECT_EQ(pod, WorkerPodOf(Job(), "pi4b-0", WorkerPodSettings{}));
  EXPECT_FALSE(RunsInUserImage(SpecOf(Job()), settings));
}

// The template's container securityContext is the worker container's: it
// was copied onto the bundle init container, so `privileged: true` there ran
// Ballast's own container privileged.
TEST(BuildWorkerPod, TheBundleKeepsItsOwnSecurityContextWhateverTheTemplateGives) {
  const json job = Job(json::parse(R"({
      "workload": {"exec": {"command": ["sh"], "image": "debian:12"}},
      "template": {"spec": {
        "securityContext": {"runAsUser": 0, "runAsNonRoot": false,
                            "seccompProfile": {"type": "Unconfined"}},
        "containers": [{"name": "main", "securityContext": {
          "privileged": true, "allowPrivilegeEscalation": true, "readOnlyRootFilesystem": false,
          "runAsNonRoot": false, "runAsUser": 0, "capabilities": {"add": ["SYS_ADMIN"]}}}]}}})"));
  const json spec = WorkerPodOf(job, "pi4b-0", WorkerPodSettings{})["spec"];
  ASSERT_EQ(spec["initContainers"][0]["name"], "ballast-bundle");
  EXPECT_EQ(spec["initContainers"][0]["securityContext"], json::parse(R"({
      "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true,
      "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
      "runAsUser": 65532, "runAsGroup": 65532})"));
  // The worker container is the user's to loosen.
  EXPECT_TRUE(spec["containers"][0]["securityContext"]["privileged"].get<bool>());
  // A pod of another non-root user keeps it for the bundle (its files are that user's).
  json other = job;
  other["spec"]["template"]["spec"]["securityContext"] = {{"runAsUser", 1000}};
  const json bundle =
      WorkerPodOf(other, "pi4b-0", WorkerPodSettings{})["spec"]["initContainers"][0];
  EXPECT_FALSE(bundle["securityContext"].contains("runAsUser"));
  EXPECT_FALSE(bundle["securityContext"].contains("privileged"));
}

// A template's own /tmp, however written, is kept: Ballast adds no second
// mount there.
TEST(BuildWorkerPod, ATemplatesTmpWrittenWithASlashGetsNoSecondMount) {
  const json job = Job(json::parse(R"({
      "workload": {"exec": {"command": ["sh"], "image": "debian:12"}},
      "template": {"spec": {
        "containers": [{"name": "main", "volumeMounts": [{"name": "s", "mountPath": "/tmp/"}]}],
        "volumes": [{"name": "s", "emptyDir": {}}]}}})"));
  const json spec = WorkerPodOf(job, "pi4b-0", WorkerPodSettings{})["spec"];
  // /tmp/, the bundle and the token
  EXPECT_EQ(spec["containers"][0]["volumeMounts"].size(), 3u);
  EXPECT_EQ(spec["volumes"].size(), 3u);
}

TEST(BuildTokenSecret, HoldsTheTokenAndIsOwnedByTheJob) {
  const std::string token = NewToken();
  EXPECT_EQ(token.size(), 64u);
  EXPECT_NE(token, NewToken());
  const json secret = BuildTokenSecret(api::ReadMeta(Job()), token);
  EXPECT_EQ(secret["metadata"]["name"], "primes-token");
  EXPECT_EQ(secret["stringData"]["token"], token);
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "u-1");
}

// A worker under a CPU limit of L cores on a node of C computes L / C of
// each period on each of its C threads; without a limit, or on a node that
// states no cores, it computes steadily.
TEST(WorkerDuty, IsTheCpuLimitOverTheNodesCoresAtMostOne) {
  const api::NodeView node =
      api::ReadNode({{"metadata", {{"name", "pi3b"}}}, {"status", {{"capacity", {{"cpu", "4"}}}}}});
  WorkerPodSettings settings;
  EXPECT_EQ(WorkerDuty(SpecOf(Job()), node, settings), 1);  // no resources at all
  settings.default_resources = {{"requests", {{"cpu", "100m"}}}, {"limits", {{"memory", "128Mi"}}}};
  EXPECT_EQ(WorkerDuty(SpecOf(Job()), node, settings), 1);  // a request holds nothing back
  settings.default_resources["limits"]["cpu"] = "1";
  EXPECT_DOUBLE_EQ(WorkerDuty(SpecOf(Job()), node, settings), 0.25);
  // The job's resources win over the operator's defaults, as in the pod.
  const json job = Job({{"worker", {{"resources", {{"limits", {{"cpu", "500m"}}}}}}}});
  EXPECT_DOUBLE_EQ(WorkerDuty(SpecOf(job), node, settings), 0.125);
  EXPECT_EQ(
      WorkerPodOf(job, "pi3b", settings)["spec"]["containers"][0]["resources"]["limits"]["cpu"],
      "500m");
  const json generous = Job({{"worker", {{"resources", {{"limits", {{"cpu", "8"}}}}}}}});
  EXPECT_EQ(WorkerDuty(SpecOf(generous), node, settings), 1);
  const api::NodeView silent = api::ReadNode({{"metadata", {{"name", "pi3b"}}}});
  EXPECT_EQ(WorkerDuty(SpecOf(job), silent, settings), 1);
}

}  // namespace
}  // namespace ballast::controller
