#include "operator/api/pod_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "core/common/json_read.h"
#include "operator/api/labels.h"

namespace ballast::api {
namespace {

using nlohmann::json;
namespace jr = json_read;

constexpr std::string_view kPath = "spec.template";
constexpr std::string_view kSpecPath = "spec.template.spec";
constexpr std::string_view kWorkerPath = "spec.template.spec.containers[0]";

// The env the worker container gets from Ballast (worker_objects.cc).
constexpr std::array<std::string_view, 9> kOwnedEnv = {"BALLAST_COORDINATOR",
                                                       "BALLAST_JOB",
                                                       "BALLAST_WORKER_NAME",
                                                       "BALLAST_JOB_NAME",
                                                       "BALLAST_NAMESPACE",
                                                       "BALLAST_TOKEN",
                                                       "BALLAST_TOKEN_FILE",
                                                       "BALLAST_METRICS_LISTEN",
                                                       "NODE_NAME"};

// Invalid "<path>: <why>", about the field at `path`.
Status Owned(std::string_view path, std::string_view why) {
  return Status::InvalidAt(std::string(path), why);
}

bool Contains(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view owned : names) {
    if (name == owned) return true;
  }
  return false;
}

// The list at `key` of `node` (absent: empty), checked to hold objects.
StatusOr<json> ObjectList(const json& node, std::string_view path, std::string_view key) {
  const json* list = jr::Find(node, key);
  if (!list) return json::array();
  const std::string list_path = jr::Field(path, key);
  if (!list->is_array()) return jr::Expected(list_path, "a list", *list);
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_object()) {
      return jr::Expected(jr::Element(list_path, i), "an object", (*list)[i]);
    }
  }
  return *list;
}

// The string map at `key` of `node` (absent: empty).
StatusOr<std::map<std::string, std::string>> StringMap(const json& node, std::string_view path,
                                                       std::string_view key) {
  std::map<std::string, std::string> out;
  const json* map = jr::Find(node, key);
  if (!map) return out;
  const std::string map_path = jr::Field(path, key);
  if (!map->is_object()) return jr::Expected(map_path, "a map of strings", *map);
  for (const auto& [name, value] : map->items()) {
    BALLAST_ASSIGN_OR_RETURN(out[name], jr::String(value, jr::Field(map_path, name)));
  }
  return out;
}

// The member `key` of `node` at `path` when it is an object; nullptr when
// absent; Invalid when it is something else.
StatusOr<const json*> OptionalObject(const json& node, const std::string& path,
                                     std::string_view key) {
  const json* member = jr::Find(node, key);
  if (member && !member->is_object()) {
    return jr::Expected(jr::Field(path, key), "an object", *member);
  }
  return member;
}

// The names of a list of objects are Ballast's or not.
Status CheckNames(const json& list, const std::string& path,
                  std::initializer_list<std::string_view> owned, std::string_view what) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string name_path = jr::Field(jr::Element(path, i), "name");
    const json* name = jr::Find(list[i], "name");
    if (!name) continue;  // the API server requires it; nothing of Ballast's
    BALLAST_ASSIGN_OR_RETURN(std::string text, jr::String(*name, name_path));
    if (Contains(text, owned)) {
      return Owned(name_path,
                   fmt::format("\"{}\" is the name of Ballast's {}; choose another", text, what));
    }
  }
  return Status::Ok();
}

Status CheckLabels(const json& metadata) {
  const std::string path = jr::Field(kPath, "metadata");
  if (!metadata.is_null() && !metadata.is_object()) {
    return jr::Expected(path, "an object", metadata);
  }
  BALLAST_ASSIGN_OR_RETURN(auto labels, StringMap(metadata, path, "labels"));
  for (const auto& [key, value] : labels) {
    const std::string label_path = jr::Field(jr::Field(path, "labels"), key);
    if (Contains(key, {kJobLabel, kNodeLabel, kManagedByLabel})) {
      return Owned(label_path, "Ballast sets this label on its worker pods; choose another");
    }
    // The coordinator Service selects the operator's pods by these (the
    // chart's service-coordinator.yaml): a worker pod carrying them would
    // receive the workers' requests and their tokens.
    if (key == kCoordinatorLabel || (key == kComponentLabel && value == kOperatorComponent)) {
      return Owned(label_path,
                   fmt::format("{} marks the Ballast operator's pods, which the coordinator "
                               "Service selects; a worker pod may not carry it",
                               key == kCoordinatorLabel ? key : fmt::format("{}={}", key, value)));
    }
  }
  return StringMap(metadata, path, "annotations").status();
}

Status CheckWorkerEnv(const json& container) {
  BALLAST_ASSIGN_OR_RETURN(json env, ObjectList(container, kWorkerPath, "env"));
  const std::string path = jr::Field(kWorkerPath, "env");
  for (size_t i = 0; i < env.size(); ++i) {
    const json* name = jr::Find(env[i], "name");
    if (!name) continue;
    const std::string name_path = jr::Field(jr::Element(path, i), "name");
    BALLAST_ASSIGN_OR_RETURN(std::string text, jr::String(*name, name_path));
    const bool owned = std::find(kOwnedEnv.begin(), kOwnedEnv.end(), text) != kOwnedEnv.end();
    if (owned && env[i] != NodeNameEnv()) {
      return Owned(
          name_path,
          fmt::format("Ballast sets {} in the worker container; choose another name", text));
    }
  }
  return Status::Ok();
}

Status CheckWorkerMounts(const json& container) {
  BALLAST_ASSIGN_OR_RETURN(json mounts, ObjectList(container, kWorkerPath, "volumeMounts"));
  const std::string path = jr::Field(kWorkerPath, "volumeMounts");
  for (size_t i = 0; i < mounts.size(); ++i) {
    const json* given = jr::Find(mounts[i], "mountPath");
    if (!given) continue;  // the API server requires it
    const std::string mount_path_path = jr::Field(jr::Element(path, i), "mountPath");
    BALLAST_ASSIGN_OR_RETURN(std::string text, jr::String(*given, mount_path_path));
    const std::string normal = NormalMountPath(text);
    // At Ballast's mount it hides it; below it, it hides part of it.
    for (const auto& [owned, what] :
         {std::pair<std::string, const char*>{kBundleMountPath, "its worker bundle"},
          {kTokenMountPath, "the job's token"}}) {
      if (normal == owned || normal.starts_with(owned + "/")) {
        return Owned(mount_path_path,
                     fmt::format("{} is {}{}, where Ballast mounts {}; choose a path outside it",
                                 jr::Shown(*given), normal == owned ? "" : "inside ", owned, what));
      }
    }
  }
  return Status::Ok();
}

// The worker container (containers[0]): Ballast runs its worker there.
Status CheckWorkerContainer(const json& container) {
  const std::string path(kWorkerPath);
  for (const char* key : {"securityContext", "resources"}) {
    BALLAST_RETURN_IF_ERROR(OptionalObject(container, path, key).status());
  }
  BALLAST_RETURN_IF_ERROR(ObjectList(container, path, "ports").status());
  for (const char* key : {"name", "image", "imagePullPolicy"}) {
    if (const json* value = jr::Find(container, key)) {
      BALLAST_RETURN_IF_ERROR(jr::String(*value, jr::Field(path, key)).status());
    }
  }
  for (const char* key : {"command", "args"}) {
    if (jr::Find(container, key)) {
      return Owned(jr::Field(kWorkerPath, key),
                   "Ballast runs its worker in the first container (an exec job's command is "
                   "spec.workload.exec.command); put other programs in a container of their own");
    }
  }
  BALLAST_RETURN_IF_ERROR(CheckWorkerEnv(container));
  return CheckWorkerMounts(container);
}

// What the PodSpec may not say, and the containers' and volumes' names.
Status CheckPodSpec(const json& spec) {
  if (jr::Find(spec, "nodeName")) {
    return Owned(jr::Field(kSpecPath, "nodeName"),
                 "Ballast pins each worker pod to its node; select nodes with nodeSelector, "
                 "affinity or tolerations");
  }
  if (const json* policy = jr::Find(spec, "restartPolicy"); policy && *policy != "Never") {
    return Owned(jr::Field(kSpecPath, "restartPolicy"),
                 fmt::format("Ballast's worker pods are Never (a failed pod is replaced, counted "
                             "against backoffLimit), got {}",
                             jr::Shown(*policy)));
  }
  if (const json* share = jr::Find(spec, "shareProcessNamespace"); share && *share != true) {
    return Owned(jr::Field(kSpecPath, "shareProcessNamespace"),
                 "Ballast's worker pods share one process namespace (the sandbox reaps what exec "
                 "commands leave), got " +
                     jr::Shown(*share));
  }
  BALLAST_RETURN_IF_ERROR(OptionalObject(spec, std::string(kSpecPath), "securityContext").status());
  BALLAST_ASSIGN_OR_RETURN(json containers, ObjectList(spec, kSpecPath, "containers"));
  BALLAST_ASSIGN_OR_RETURN(json init, ObjectList(spec, kSpecPath, "initContainers"));
  BALLAST_ASSIGN_OR_RETURN(json volumes, ObjectList(spec, kSpecPath, "volumes"));
  BALLAST_RETURN_IF_ERROR(CheckNames(containers, jr::Field(kSpecPath, "containers"),
                                     {kBundleContainer}, "init container"));
  BALLAST_RETURN_IF_ERROR(CheckNames(init, jr::Field(kSpecPath, "initContainers"),
                                     {kBundleContainer}, "init container"));
  BALLAST_RETURN_IF_ERROR(CheckNames(volumes, jr::Field(kSpecPath, "volumes"),
                                     {kBundleVolume, kTmpVolume, kTokenVolume}, "volumes"));
  return containers.empty() ? Status::Ok() : CheckWorkerContainer(containers[0]);
}

// `short_value` (at `short_path`) into `target[key]` (at `path`): refused
// when both are given and differ.
Status WriteShortForm(json& target, std::string_view key, const std::string& path,
                      const std::optional<json>& short_value, std::string_view short_path) {
  if (!short_value) return Status::Ok();
  const json* given = jr::Find(target, key);
  if (given && *given != *short_value) {
    // About two fields at once: the message names both, and no one path.
    return Status::Invalid(
        fmt::format("{} and {} say different things ({} and {}): give one of them", short_path,
                    jr::Field(path, key), jr::Shown(*short_value), jr::Shown(*given)));
  }
  target[std::string(key)] = *short_value;
  return Status::Ok();
}

Status WriteWorkerShortForms(json& worker, const ShortForms& forms) {
  const std::optional<json> image = forms.image ? std::optional<json>(*forms.image) : std::nullopt;
  const std::optional<json> policy =
      forms.image_pull_policy ? std::optional<json>(*forms.image_pull_policy) : std::nullopt;
  BALLAST_RETURN_IF_ERROR(
      WriteShortForm(worker, "image", std::string(kWorkerPath), image, forms.image_path));
  BALLAST_RETURN_IF_ERROR(WriteShortForm(worker, "imagePullPolicy", std::string(kWorkerPath),
                                         policy, "spec.worker.imagePullPolicy"));
  return WriteShortForm(worker, "resources", std::string(kWorkerPath), forms.resources,
                        "spec.worker.resources");
}

Status WriteNodeShortForms(json& spec, const ShortForms& forms) {
  // Both checked before anything is written into them.
  BALLAST_RETURN_IF_ERROR(StringMap(spec, kSpecPath, "nodeSelector").status());
  if (const json* tolerations = jr::Find(spec, "tolerations")) {
    BALLAST_RETURN_IF_ERROR(CheckTolerations(*tolerations, jr::Field(kSpecPath, "tolerations")));
  }
  const std::string path = jr::Field(kSpecPath, "nodeSelector");
  for (const auto& [key, value] : forms.node_selector) {
    BALLAST_RETURN_IF_ERROR(WriteShortForm(spec["nodeSelector"], key, path, json(value),
                                           jr::Field("spec.nodeSelector", key)));
  }
  if (forms.tolerations.empty()) return Status::Ok();
  json& tolerations = spec["tolerations"];
  if (tolerations.is_null()) tolerations = json::array();
  for (const json& toleration : forms.tolerations) tolerations.push_back(toleration);
  return Status::Ok();
}

// The required nodeSelectorTerms of spec.affinity.nodeAffinity (none: []),
// each a list of requirements Ballast can evaluate (node_selection.h).
StatusOr<json> NodeAffinityTerms(const json& spec) {
  std::string path(kSpecPath);
  BALLAST_ASSIGN_OR_RETURN(const json* affinity, OptionalObject(spec, path, "affinity"));
  if (!affinity) return json::array();
  path += ".affinity";
  BALLAST_ASSIGN_OR_RETURN(const json* node, OptionalObject(*affinity, path, "nodeAffinity"));
  if (!node) return json::array();
  path += ".nodeAffinity";
  BALLAST_ASSIGN_OR_RETURN(
      const json* required,
      OptionalObject(*node, path, "requiredDuringSchedulingIgnoredDuringExecution"));
  if (!required) return json::array();
  path += ".requiredDuringSchedulingIgnoredDuringExecution";
  BALLAST_ASSIGN_OR_RETURN(json terms, ObjectList(*required, path, "nodeSelectorTerms"));
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string term_path = jr::Element(jr::Field(path, "nodeSelectorTerms"), i);
    for (const char* key : {"matchExpressions", "matchFields"}) {
      BALLAST_RETURN_IF_ERROR(ObjectList(terms[i], term_path, key).status());
    }
  }
  return terms;
}

// The fields Ballast reads to choose nodes, into `out`.
Status ReadNodeChoice(PodTemplate& out) {
  BALLAST_ASSIGN_OR_RETURN(out.node_selector, StringMap(out.spec, kSpecPath, "nodeSelector"));
  if (const json* tolerations = jr::Find(out.spec, "tolerations")) out.tolerations = *tolerations;
  BALLAST_ASSIGN_OR_RETURN(out.node_affinity_terms, NodeAffinityTerms(out.spec));
  return Status::Ok();
}

}  // namespace

std::string NormalMountPath(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

json NodeNameEnv() {
  return {{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}};
}

Status CheckTolerations(const json& tolerations, const std::string& path) {
  if (!tolerations.is_array()) return jr::Expected(path, "a list of tolerations", tolerations);
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const std::string element = jr::Element(path, i);
    const json& toleration = tolerations[i];
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
        toleration, element, {"key", "operator", "value", "effect", "tolerationSeconds"}));
    for (const char* key : {"key", "operator", "value", "effect"}) {
      if (const json* value = jr::Find(toleration, key)) {
        BALLAST_RETURN_IF_ERROR(jr::String(*value, jr::Field(element, key)).status());
      }
    }
    if (const json* seconds = jr::Find(toleration, "tolerationSeconds")) {
      BALLAST_RETURN_IF_ERROR(
          jr::Int(*seconds, jr::Field(element, "tolerationSeconds"), INT64_MIN).status());
    }
  }
  return Status::Ok();
}

StatusOr<PodTemplate> ReadPodTemplate(const json& given, const ShortForms& short_forms) {
  if (!given.is_null() && !given.is_object()) {
    return jr::Expected(kPath, "a PodTemplateSpec", given);
  }
  const json* metadata = jr::Find(given, "metadata");
  BALLAST_RETURN_IF_ERROR(CheckLabels(metadata ? *metadata : json()));
  PodTemplate out;
  const json* spec = jr::Find(given, "spec");
  out.spec = spec ? *spec : json::object();
  if (!out.spec.is_object()) return jr::Expected(kSpecPath, "a PodSpec", out.spec);
  BALLAST_RETURN_IF_ERROR(CheckPodSpec(out.spec));
  if (metadata) {
    if (const json* labels = jr::Find(*metadata, "labels")) out.labels = *labels;
    if (const json* annotations = jr::Find(*metadata, "annotations")) {
      out.annotations = *annotations;
    }
  }
  json& containers = out.spec["containers"];
  if (!containers.is_array() || containers.empty()) {
    containers = json::array({{{"name", kWorkerContainer}}});
  }
  BALLAST_RETURN_IF_ERROR(WriteWorkerShortForms(containers[0], short_forms));
  BALLAST_RETURN_IF_ERROR(WriteNodeShortForms(out.spec, short_forms));
  BALLAST_RETURN_IF_ERROR(ReadNodeChoice(out));
  return out;
}

const json& WorkerContainerOf(const PodTemplate& pod_template) {
  static const json kNone = {{"name", kWorkerContainer}};
  const json& containers = jr::At(pod_template.spec, "containers");
  if (!containers.is_array() || containers.empty() || !containers[0].is_object()) return kNone;
  return containers[0];
}

}  // namespace ballast::api
