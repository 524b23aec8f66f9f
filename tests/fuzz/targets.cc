#include "targets.h"

#include <cstdlib>
#include <string>

#include "common/bounded_json.h"
#include "fuzzy/profile.h"
#include "fuzzy/profile_json.h"
#include "history/prometheus_history.h"
#include "history/speed_store.h"
#include "job/job_json.h"
#include "job/job_spec.h"
#include "protocol/messages.h"
#include "sim/scenario.h"
#include "workload/result.h"

namespace ballast::fuzz {
namespace {

// A broken promise of a reader: stop the program so the fuzzer reports the input.
[[noreturn]] void Violated() { std::abort(); }

template <typename Message>
void Reserialise(const StatusOr<Message>& message) {
  if (message.ok()) (void)protocol::ToJson(*message).dump();
}

}  // namespace

void JobFile(std::string_view text) { (void)job::ParseJob(text, "job.yaml"); }

void ClusterFile(std::string_view text) { (void)job::ParseCluster(text, "cluster.yaml"); }

void ScenarioFile(std::string_view text) { (void)sim::ParseScenario(text, "scenario.yaml"); }

void ProfileFile(std::string_view text) { (void)fuzzy::ParseProfile(text, "profile.yaml"); }

void NodesFile(std::string_view text) { (void)fuzzy::ParseNodes(text, "nodes.yaml"); }

void ProtocolBody(std::string_view text) {
  (void)protocol::ParseRefusal(std::string(text));
  auto json = ParseBoundedJson(text, "body");
  if (!json.ok()) return;
  auto report = protocol::ParseReport(*json);
  Reserialise(report);
  if (report.ok()) {
    // The coordinator reads each completion's result for the job's kind.
    for (const auto& completion : report->completed) {
      for (auto kind : {workload::WorkloadKind::kPrimes, workload::WorkloadKind::kMatmul,
                        workload::WorkloadKind::kExec}) {
        auto result = workload::Result::FromJson(kind, completion.result);
        if (result.ok()) (void)result->Summary();
      }
    }
  }
  Reserialise(protocol::ParseReply(*json));
  Reserialise(protocol::ParseJobDescription(*json));
}

void CrdObject(std::string_view text) {
  auto object = ParseBoundedJson(text, "object");
  if (!object.ok()) return;
  (void)fuzzy::ProfileFromJson(*object);
  if (!object->is_object()) return;
  const auto spec = object->find("spec");
  if (spec != object->end()) (void)job::JobSpecFromJson(*spec, "job");
}

void BoundedJson(std::string_view text) {
  JsonLimits limits;
  limits.max_depth = 16;
  auto json = ParseBoundedJson(text, "text", limits);
  if (!json.ok()) return;
  auto again = ParseBoundedJson(json->dump(), "dump", limits);
  if (!again.ok() || *again != *json) Violated();
}

void HistoryText(std::string_view text) {
  (void)history::ParseHistoryAnswer(text);
  history::StoreLimits limits;
  limits.max_bytes = 4096;
  auto store = history::StoreFromText(text, limits);
  if (!store.ok()) return;
  (void)history::LookupHistory(*store, "primes", {"a", "pi5-0"}, 1.8e9);
  const std::string written = history::StoreToText(*store, limits);
  if (written.size() > limits.max_bytes) Violated();
  auto again = history::StoreFromText(written, limits);
  if (!again.ok() || history::StoreToText(*again, limits) != written) Violated();
}

const std::vector<NamedTarget>& AllTargets() {
  static const std::vector<NamedTarget> targets = {
      {"job", JobFile},         {"cluster", ClusterFile}, {"scenario", ScenarioFile},
      {"profile", ProfileFile}, {"nodes", NodesFile},     {"protocol", ProtocolBody},
      {"crd", CrdObject},       {"json", BoundedJson},    {"history", HistoryText},
  };
  return targets;
}

}  // namespace ballast::fuzz
