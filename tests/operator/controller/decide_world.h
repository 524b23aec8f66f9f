// The world a test of Decide (operator/controller/decide.h) builds for a
// pass: the job, its pods, the nodes (seed 000's boards), the profile, the
// coordinator's view, the writes in flight, the time and the options; and
// readers of a Decision. Shared by decide_test.cc and decide_faults_test.cc.
//
// Thread-safety: a World belongs to one test.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include "operator/api/job_status.h"
#include "operator/controller/decide.h"
#include "tests/support/yaml_to_json.h"

namespace ballast::controller::decide_test {

using nlohmann::json;
using std::chrono::milliseconds;

inline constexpr double kStart = 1'800'000'000;  // the wall clock of the first pass
// seed 000's boards (examples/nodes/seed000.yaml), in the order Decide sorts them.
inline const std::vector<std::string> kNodes = {"pi3b-worker", "pi4b-master", "pi4b-worker"};

inline json FromYamlFile(const std::string& path) {
  std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return testing::YamlToJson(text.str());
}

inline json ShippedProfile() { return FromYamlFile("crds/profiles/raspberry-pi.yaml"); }

// The Node `name` of seed 000 with every label the profile reads, and a
// declared speed of half a core.
inline json Node(const std::string& name, bool ready = true) {
  json labels = json::object();
  const json seed000 = FromYamlFile("examples/nodes/seed000.yaml");
  for (const auto& node : seed000["nodes"]) {
    if (node["name"] == name) labels = node["labels"];
  }
  for (auto& [key, value] : labels.items()) {
    if (!value.is_string()) value = value.dump();  // the API server holds strings
  }
  return {
      {"metadata",
       {{"name", name},
        {"labels", labels},
        {"annotations", {{"ballast.io/emulated-speed", "0.5"}}}}},
      {"status",
       {{"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

// "2027-01-15T08:00:00Z" for 1800000000.
inline std::string Rfc3339(double wall) {
  const std::time_t seconds = static_cast<std::time_t>(wall);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

inline json Pod(const std::string& node, const std::string& phase, const std::string& uid) {
  return {{"metadata",
           {{"name", "p-" + node},
            {"uid", uid},
            {"ownerReferences", json::array({{{"uid", "job-uid"}}})}}},
          {"status", {{"phase", phase}}}};
}

// A session of 2000 items on kNodes; `completed` of them done.
inline coordinator::JobView View(uint64_t completed, bool done = false) {
  coordinator::JobView view;
  view.items = 2000;
  view.completed = completed;
  view.done = done;
  view.started_at = 0;
  view.finished_at = done ? 10 : 0;
  for (size_t i = 0; i < kNodes.size(); ++i) {
    coordinator::WorkerView worker;
    worker.name = kNodes[i];
    // An equal share each, the remainder to the last.
    worker.items =
        completed / kNodes.size() + (i + 1 == kNodes.size() ? completed % kNodes.size() : 0);
    worker.cost = static_cast<double>(worker.items);
    worker.busy_s = done ? 8 : 1;
    worker.cpu_s = done ? 4 : 0;
    view.workers.push_back(worker);
  }
  return view;
}

// What one test's passes see; each field may be changed between passes. The
// job, pods and nodes are the API server's JSON, read into views
// (kube_views.h) each pass as the reconciler reads them.
struct World {
  json job = {
      {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "job-uid"}, {"generation", 1}}},
      {"spec", {{"workload", {{"primes", {{"limit", 4000}}}}}, {"backoffLimit", 1}}}};
  std::vector<json> pods;
  std::vector<json> nodes = {Node(kNodes[0]), Node(kNodes[1]), Node(kNodes[2])};
  std::optional<json> profile = ShippedProfile();
  std::optional<coordinator::JobView> view;
  std::optional<coordinator::Checkpoint> checkpoint;  // with a view: empty when unset
  WritesInFlight writes;
  std::optional<std::string> secret_token;
  api::Reason refusal_reason = api::Reason::kWorkerPodRefused;
  std::string refusal;
  std::optional<CreateRefusal> create_refusal;  // the last create task's, collected this pass
  std::optional<std::string> items_missing;     // the itemsFrom ConfigMap is not there
  double wall = kStart;
  SteadyTime steady = SteadyTime{} + std::chrono::hours(1);
  JobMemory memory;
  // Progress is written at the status interval, as every other change: the
  // tests of other behaviours see each pass's status 3 s apart; the pacing's
  // own tests (decide_test.cc, status_pacing_test.cc) set it back.
  DecideOptions options = [] {
    DecideOptions o;
    o.pacing.progress_interval = o.pacing.status_interval;
    return o;
  }();
  bool flush_status = false;
  std::optional<HistoryLookup> history;
  std::optional<QueueInput> queue;  // the job is queued in Kueue (decide_kueue_test.cc)

  // One pass: Decide on what is set, its memory kept for the next.
  Decision Pass() {
    const api::ParsedSpec spec = api::ParseWeightedJobSpec(job["spec"], "p");
    DecideInput input;
    input.ns = "ns";
    input.name = "p";
    input.id = "ns.p";
    input.job = api::ReadJob(job);
    input.spec = &spec;
    for (const json& pod : pods) input.pods.push_back(api::ReadPod(pod));
    for (const json& node : nodes) input.nodes.push_back(api::ReadNode(node));
    input.profile = profile;
    input.view = view;
    if (view) input.checkpoint = checkpoint.value_or(coordinator::Checkpoint{});
    input.writes = writes;
    input.secret_token = secret_token;
    input.fresh_token = "fresh";
    input.refusal_reason = refusal_reason;
    input.refusal = refusal;
    input.create_refusal = create_refusal;
    input.items_missing = items_missing;
    input.flush_status = flush_status;
    input.history = history;
    input.queue = queue;
    input.now = {wall, steady, Rfc3339(wall)};
    Decision decision = Decide(input, memory, options);
    memory = decision.memory;
    return decision;
  }
};

// The status a decision wants, as the API server gets it.
inline json S(const Decision& decision) { return api::StatusToJson(decision.status); }

// The weights of the session's workers (SessionMemory::nodes), in session order.
inline std::vector<fuzzy::NodeWeight> SessionWeights(const JobMemory& memory) {
  std::vector<fuzzy::NodeWeight> weights;
  for (const SessionNode& node : memory.session.nodes) {
    if (node.worker) weights.push_back(node.worker->weight);
  }
  return weights;
}

// The prior of the session's worker on `node`; a default row (source "")
// when the session has no worker there.
inline api::NodePriorRow SessionPrior(const JobMemory& memory, const std::string& node) {
  const SessionNode* record = memory.session.Find(node);
  return record && record->worker ? record->worker->prior : api::NodePriorRow{};
}

template <typename T>
std::vector<T> ActionsOf(const Decision& decision) {
  std::vector<T> out;
  for (const auto& action : decision.actions) {
    if (const auto* a = std::get_if<T>(&action)) out.push_back(*a);
  }
  return out;
}

inline std::vector<RecordEvent> Events(const Decision& decision) {
  return ActionsOf<RecordEvent>(decision);
}

inline std::vector<std::string> EventReasons(const Decision& decision) {
  std::vector<std::string> out;
  for (const auto& event : ActionsOf<RecordEvent>(decision)) {
    out.push_back(api::ReasonName(event.reason));
  }
  return out;
}

inline std::string ConditionReason(const json& status, const std::string& type) {
  for (const auto& condition : status.value("conditions", json::array())) {
    if (condition["type"] == type) return condition["reason"];
  }
  return "";
}

// A world whose job has been registered (its session's prior from
// `history`, when given) and whose pods run.
inline World Running(std::optional<HistoryLookup> history = std::nullopt) {
  World world;
  world.history = std::move(history);
  world.Pass();  // registers
  world.view = View(0);
  world.Pass();  // creates the pods
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods.push_back(Pod(kNodes[i], "Running", "pod-uid-" + std::to_string(i)));
  }
  world.Pass();
  return world;
}

}  // namespace ballast::controller::decide_test
