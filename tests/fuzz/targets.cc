#include "tests/fuzz/targets.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "core/common/bounded_json.h"
#include "core/common/utf8.h"
#include "core/config/document.h"
#include "core/fuzzy/fit.h"
#include "core/fuzzy/model.h"
#include "core/fuzzy/profile.h"
#include "core/fuzzy/profile_json.h"
#include "core/history/history_file.h"
#include "core/history/prometheus_history.h"
#include "core/history/speed_store.h"
#include "core/job/job_json.h"
#include "core/job/job_spec.h"
#include "core/probe/board_conditions.h"
#include "core/probe/facts.h"
#include "core/probe/facts_json.h"
#include "core/probe/labels.h"
#include "core/probe/node_marks.h"
#include "core/probe/parse.h"
#include "core/protocol/messages.h"
#include "core/protocol/progress.h"
#include "core/sim/scenario.h"
#include "core/workload/item_list.h"
#include "core/workload/result.h"
#include "core/workload/user_result.h"
#include "core/workload/workload.h"
#include "fileio/bounded_file.h"
#include "worker/token_file.h"

namespace ballast::fuzz {
namespace {

// A broken promise of a reader: stop the program so the fuzzer reports the input.
[[noreturn]] void Violated() { std::abort(); }

// `json` as text the strict way (type_error.316 on a string that is not
// UTF-8), which must parse back to an equal value.
template <typename Json>
void CheckJsonOutput(const Json& json) {
  std::string text;
  try {
    text = json.dump();
  } catch (const nlohmann::json::exception&) {
    Violated();
  }
  const Json back = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (back.is_discarded() || back != json) Violated();
}

template <typename Message>
void Reserialise(const StatusOr<Message>& message) {
  if (message.ok()) CheckJsonOutput(protocol::ToJson(*message));
}

// A message that quotes what it read is bounded however long the input
// (common/names.h QuoteForMessage), and is UTF-8.
constexpr size_t kMaxMessageBytes = 2048;
void CheckMessage(const std::string& message) {
  if (message.size() > kMaxMessageBytes || !IsValidUtf8(message)) Violated();
}

// A speeds map as ParseSpeeds promises it: physical speed ratios (fit.h).
void CheckSpeeds(const std::map<std::string, double>& speeds) {
  if (speeds.empty()) Violated();
  double low = 0;
  double high = 0;
  for (const auto& [node, speed] : speeds) {
    if (!std::isnormal(speed) || speed <= 0) Violated();
    low = low == 0 ? speed : std::min(low, speed);
    high = std::max(high, speed);
  }
  if (high / low > fuzzy::kMaxSpeedRatio * (1 + 1e-9)) Violated();
}

// A profile that reads must format (`weights --fit` prints one) to a
// document that reads back.
void CheckProfileOutput(const StatusOr<fuzzy::Profile>& profile) {
  if (!profile.ok()) return;
  if (!fuzzy::ParseProfile(fuzzy::FormatProfileYaml(*profile), "formatted.yaml").ok()) Violated();
}

}  // namespace

// A YAML text's tree, when it reads, is JSON: it dumps (strictly, no
// replaced bytes) and reads back as the same tree.
void TreeIsJson(std::string_view text) {
  auto document = config::ParseYaml(text, "doc.yaml");
  if (!document.ok()) return;
  std::string dumped;
  try {
    dumped = document->tree.dump();
  } catch (const nlohmann::json::exception&) {
    Violated();
  }
  auto again = ParseBoundedJson(dumped, "tree");
  // NaN is the one value JSON cannot hold (it dumps as null).
  if (!again.ok() || (*again != document->tree && dumped.find("null") == std::string::npos)) {
    Violated();
  }
}

// Every error of a file reader names the file, and is bounded whatever the
// text held.
template <typename T>
void Bounded(const StatusOr<T>& parsed, std::string_view file) {
  if (parsed.ok()) return;
  const Status status = parsed.status();
  if (status.message().rfind(file, 0) != 0 || status.message().size() > 2048) Violated();
}

void JobFile(std::string_view text) {
  auto job = job::ParseJob(text, "job.yaml");
  Bounded(job, "job.yaml");
  TreeIsJson(text);
  // The coordinator hands the workload to workers as JSON, as it was
  // written: the job's reader refuses a text that is not UTF-8 (a finding
  // of this check), so what it accepts always dumps.
  if (job.ok()) CheckJsonOutput(workload::WorkloadToJson(job->workload));
}

void ClusterFile(std::string_view text) {
  Bounded(job::ParseCluster(text, "cluster.yaml"), "cluster.yaml");
}

void ScenarioFile(std::string_view text) {
  Bounded(sim::ParseScenario(text, "scenario.yaml"), "scenario.yaml");
}

void ProfileFile(std::string_view text) {
  const auto profile = fuzzy::ParseProfile(text, "profile.yaml");
  Bounded(profile, "profile.yaml");
  CheckProfileOutput(profile);
}

void NodesFile(std::string_view text) {
  auto nodes = fuzzy::ParseNodes(text, "nodes.yaml");
  Bounded(nodes, "nodes.yaml");
  if (nodes.ok()) {
    // `ballast weights` prints the weights' warnings, which quote the labels.
    static const fuzzy::Profile profile = *fuzzy::BuiltinProfile("raspberry-pi");
    auto weights = fuzzy::ComputeWeights(profile, *nodes);
    if (weights.ok()) {
      for (const std::string& warning : weights->warnings) CheckMessage(warning);
    }
  }
  // `ballast weights` reads the same text again for the probe's marks.
  Bounded(probe::ProbeLabelsOfNodes(text, "nodes.yaml"), "nodes.yaml");
}

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
  Reserialise(protocol::ParseSignal(*json));
}

void ProgressAnswer(std::string_view text) {
  auto json = protocol::ParseJsonText(text);
  if (!json.ok()) return;
  auto progress = protocol::ParseJobProgress(*json);
  if (!progress.ok()) {
    CheckMessage(progress.status().message());
    return;
  }
  if (progress->nodes.size() > protocol::kMaxProgressNodes ||
      progress->nodes.size() > progress->node_count || progress->completed > progress->items ||
      progress->reporting > progress->node_count) {
    Violated();
  }
  for (const auto& node : progress->nodes) {
    if (node.name.empty() || node.name.size() > protocol::kMaxProgressNameBytes) Violated();
  }
  Reserialise(progress);
  auto back = protocol::ParseJobProgress(protocol::ToJson(*progress));
  if (!back.ok() || *back != *progress) Violated();
}

void HistoryFileText(std::string_view text) {
  history::StoreLimits limits;
  limits.max_bytes = 4096;
  auto store = history::ReadHistoryFile(text, "history.json", limits);
  if (!store.ok()) return;
  (void)history::LookupHistory(*store, history::HistoryKey(workload::WorkloadKind::kPrimes),
                               {"a", "pi5-0"}, 1.8e9);
  // What reads (in either form) must write, within its bytes, a file in the
  // store's form that reads back and writes the same.
  const std::string written = history::StoreToText(*store, limits);
  if (written.size() > limits.max_bytes) Violated();
  auto again = history::ReadHistoryFile(written, "again.json", limits);
  if (!again.ok() || history::StoreToText(*again, limits) != written) Violated();
}

void SpeedsFile(std::string_view text) {
  auto speeds = fuzzy::ParseSpeeds(text, "speeds.yaml");
  if (speeds.ok()) CheckSpeeds(*speeds);
}

void CrdObject(std::string_view text) {
  auto object = ParseBoundedJson(text, "object");
  if (!object.ok()) return;
  CheckProfileOutput(fuzzy::ProfileFromJson(*object));
  (void)fuzzy::NodeFactsFromJson(*object);
  if (!object->is_object()) return;
  const auto spec = object->find("spec");
  if (spec == object->end()) return;
  auto job = job::JobSpecFromJson(*spec, "job");
  if (job.ok()) CheckJsonOutput(workload::WorkloadToJson(job->workload));
}

void BoundedJson(std::string_view text) {
  JsonLimits limits;
  limits.max_depth = 16;
  auto json = ParseBoundedJson(text, "text", limits);
  if (!json.ok()) return;
  auto again = ParseBoundedJson(json->dump(), "dump", limits);
  if (!again.ok() || *again != *json) Violated();
}

void ProbeFile(std::string_view text) {
  (void)probe::ParseRevisionText(text);
  (void)probe::ParseBigEndianCell(text);
  (void)probe::ParseDeviceTreeString(text);
  (void)probe::ParseCpuInfo(text);
  (void)probe::ParseMemTotalKb(text);
  (void)probe::ParseCpuListCount(text);
  (void)probe::ParseOsRelease(text);
  (void)probe::ParseRpiIssueDate(text);
  (void)probe::ParseElfHeader(text);
  (void)probe::ParseSmapsPageSize(text);
  (void)probe::ParseThrottled(text);
  (void)probe::ParseSdDate(text);
  (void)probe::ParseMilliCelsius(text);
  (void)probe::ParseFlag(text);
  (void)probe::ParseCgroupControllersMemory(text);
  (void)probe::ParseProcCgroupsMemory(text);
  (void)probe::MemoryCgroupDisabledBy(text);
  // A Node's status as the API server returns it: the board conditions
  // read from it, decided against, written back.
  if (auto node = ParseBoundedJson(text, "node", {}); node.ok()) {
    const auto on_node = probe::ReadBoardConditions(*node);
    const auto decision = probe::DecideBoardConditions(on_node, on_node, "now", "");
    if (!decision.write.empty() || !decision.events.empty()) Violated();
    CheckJsonOutput(probe::BoardConditionsApplyObject("n", on_node, "now"));
  }
  static const fuzzy::Profile profile = *fuzzy::BuiltinProfile("raspberry-pi");
  const auto check = [&](const probe::Snapshot& snapshot) {
    const probe::ProbeResult result = probe::DeriveFacts(snapshot);
    const probe::LabelResult labels = probe::ProbeLabels(result.facts, profile);
    for (const auto& [key, value] : labels.labels) {
      if (!probe::IsValidLabelValue(value) || value.empty()) Violated();
    }
    // The JSON `ballast-worker probe -o json` prints (worker/probe/report.cc).
    nlohmann::ordered_json json;
    json["facts"] = probe::FactsToJson(result.facts);
    json["labels"] = labels.labels;
    std::vector<probe::Warning> warnings = result.warnings;
    warnings.insert(warnings.end(), labels.warnings.begin(), labels.warnings.end());
    json["warnings"] = probe::WarningsToJson(warnings);
    // The Node conditions and the Events of their first transition.
    const auto conditions = probe::BoardConditions(result.facts);
    json["conditions"] = probe::BoardConditionsApplyObject("n", conditions, "now");
    for (const auto& event :
         probe::DecideBoardConditions({}, conditions, "now", probe::TemperatureNote(result.facts))
             .events) {
      json["events"].push_back(event.message);
    }
    CheckJsonOutput(json);
  };
  // The glob components name one entry, as a tree would have it.
  std::vector<std::string> paths;
  for (const probe::ProbeFile& file : probe::ProbeFiles()) {
    std::string path = file.pattern;
    for (size_t at; (at = path.find('*')) != std::string::npos;) path.replace(at, 1, "x0");
    paths.push_back(path);
  }
  probe::Snapshot all;
  probe::Snapshot split;
  std::string_view rest = text;
  for (const std::string& path : paths) {
    all.files[path] = {probe::FileRead::State::kOk, std::string(text), ""};
    const size_t nul = rest.find('\0');
    split.files[path] = {probe::FileRead::State::kOk, std::string(rest.substr(0, nul)), ""};
    rest.remove_prefix(nul == std::string_view::npos ? rest.size() : nul + 1);
  }
  check(all);
  check(split);
}

void SpeedStoreText(std::string_view text) {
  (void)history::ParseHistoryAnswer(text);
  history::StoreLimits limits;
  limits.max_bytes = 4096;
  auto store = history::StoreFromText(text, limits);
  if (!store.ok()) return;
  (void)history::LookupHistory(*store, history::HistoryKey(workload::WorkloadKind::kPrimes),
                               {"a", "pi5-0"}, 1.8e9);
  const std::string written = history::StoreToText(*store, limits);
  if (written.size() > limits.max_bytes) Violated();
  auto again = history::StoreFromText(written, limits);
  if (!again.ok() || history::StoreToText(*again, limits) != written) Violated();
}

void ItemListText(std::string_view text) {
  for (auto format : {workload::LineFormat::kValue, workload::LineFormat::kCostValue}) {
    auto list = workload::ParseItemLines(text, format, "items.txt");
    Bounded(list, "items.txt");
    if (!list.ok()) continue;
    workload::WorkloadSpec spec;
    spec.kind = workload::WorkloadKind::kExec;
    spec.exec.command = {"true"};
    if (!workload::AttachItems(&spec, *list, "items.txt").ok()) Violated();
    const nlohmann::json wire = workload::WorkloadToJson(spec);
    CheckJsonOutput(wire);
    auto back = workload::WorkloadFromJson(wire);
    if (!back.ok() || !(*back == spec)) Violated();
  }
}

void ResultFileText(std::string_view text) {
  workload::ResultSpec spec;
  spec.merge = {{"n", workload::MergeRule::kSum},
                {"lo", workload::MergeRule::kMin},
                {"hi", workload::MergeRule::kMax},
                {"names", workload::MergeRule::kList}};
  spec.list_limit = 4;
  auto handed = workload::ReadResultFile(text, spec, {7, 17}, "result file");
  Bounded(handed, "result file");
  if (!handed.ok()) return;
  for (const auto& [item, error] : handed->failed) {
    if (item < 7 || item >= 17 || error.size() > workload::kMaxItemErrorBytes) Violated();
  }
  const std::optional<workload::UserFields> fields = handed->fields;
  if (!workload::CheckFields(*fields, spec).ok()) Violated();
  workload::UserFields twice = *fields;
  workload::MergeFields(twice, *fields);
  if (!workload::CheckFields(twice, spec).ok()) Violated();
  const nlohmann::json wire = workload::FieldsToJson(twice);
  CheckJsonOutput(wire);
  auto back = workload::FieldsFromJson(wire, "fields");
  if (!back.ok() || !(*back == twice)) Violated();
  CheckMessage(workload::FieldsSummary(twice));
}

void TokenFileText(std::string_view text) {
  auto token = worker::ParseTokenFile(text);
  if (!token.ok()) {
    CheckMessage(token.status().message());
    return;
  }
  if (token->empty() || text.find(*token) == std::string_view::npos) Violated();
  for (char c : *token) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) Violated();
  }
}

void BoundedFileText(std::string_view text) {
  const int fd = memfd_create("ballast-fuzz-file", MFD_CLOEXEC);
  if (fd < 0) Violated();  // no file to read: the target cannot run at all
  for (size_t written = 0; written < text.size();) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n <= 0) Violated();
    written += static_cast<size_t>(n);
  }
  // A path that opens the same regular file afresh, as a user's path would.
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const size_t size = text.size();
  const size_t picked = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
  for (const size_t bound : {size == 0 ? 0 : size - 1, size, size + 1, picked}) {
    const auto read = fileio::ReadBoundedFile(path, bound);
    if (size <= bound) {
      if (!read.ok() || *read != text) Violated();
    } else if (read.status().code() != StatusCode::kInvalid ||
               read.status().message() !=
                   path + ": larger than " + std::to_string(bound) + " bytes") {
      Violated();
    }
  }
  close(fd);
}

const std::vector<NamedTarget>& AllTargets() {
  static const std::vector<NamedTarget> targets = {
      {"job", JobFile},
      {"cluster", ClusterFile},
      {"scenario", ScenarioFile},
      {"profile", ProfileFile},
      {"nodes", NodesFile},
      {"protocol", ProtocolBody},
      {"crd", CrdObject},
      {"json", BoundedJson},
      {"probe", ProbeFile},
      {"history", HistoryFileText},
      {"speeds", SpeedsFile},
      {"speedstore", SpeedStoreText},
      {"items", ItemListText},
      {"result", ResultFileText},
      {"token", TokenFileText},
      {"file", BoundedFileText},
      {"progress", ProgressAnswer},
  };
  return targets;
}

}  // namespace ballast::fuzz
