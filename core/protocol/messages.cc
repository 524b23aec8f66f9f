#include "core/protocol/messages.h"

#include <fmt/format.h>

#include <cmath>

#include "core/common/bounded_json.h"

namespace ballast::protocol {
namespace {

using balance::Reply;
using nlohmann::json;

Status FieldError(const std::string& field, const std::string& expected) {
  return Status::Invalid(fmt::format("{}: expected {}", field, expected));
}

StatusOr<uint64_t> GetUint(const json& object, const std::string& key, const std::string& path,
                           std::optional<uint64_t> fallback = std::nullopt) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return FieldError(path + key, "an integer >= 0 (missing)");
  }
  if (!it->is_number_unsigned()) return FieldError(path + key, "an integer >= 0");
  return it->get<uint64_t>();
}

StatusOr<double> GetSeconds(const json& object, const std::string& key, double fallback) {
  auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
    return FieldError(key, "a number of seconds >= 0");
  }
  return it->get<double>();
}

StatusOr<bool> GetBool(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end()) return false;
  if (!it->is_boolean()) return FieldError(key, "true or false");
  return it->get<bool>();
}

// An optional string; "" when missing.
StatusOr<std::string> GetString(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end()) return std::string();
  if (!it->is_string()) return FieldError(key, "a string");
  return it->get<std::string>();
}

StatusOr<balance::Range> ParseRange(const json& value, const std::string& path) {
  if (!value.is_object()) return FieldError(path, "an object {\"begin\": …, \"end\": …}");
  BALLAST_ASSIGN_OR_RETURN(uint64_t begin, GetUint(value, "begin", path + "."));
  BALLAST_ASSIGN_OR_RETURN(uint64_t end, GetUint(value, "end", path + "."));
  if (end < begin) return FieldError(path + ".end", "an integer >= begin");
  return balance::Range{begin, end};
}

json RangeJson(balance::Range range) { return {{"begin", range.begin}, {"end", range.end}}; }

StatusOr<Reply::Kind> ParseKind(const json& value) {
  if (value.is_string()) {
    for (auto kind :
         {Reply::Kind::kContinue, Reply::Kind::kLease, Reply::Kind::kWait, Reply::Kind::kDone}) {
      if (value.get<std::string>() == ReplyKindName(kind)) return kind;
    }
  }
  return FieldError("kind", "one of continue, lease, wait, done");
}

}  // namespace

const char* ReplyKindName(Reply::Kind kind) {
  switch (kind) {
    case Reply::Kind::kContinue:
      return "continue";
    case Reply::Kind::kLease:
      return "lease";
    case Reply::Kind::kWait:
      return "wait";
    case Reply::Kind::kDone:
      return "done";
  }
  return "wait";
}

json ToJson(const ReportMessage& message) {
  json completed = json::array();
  for (const Completion& c : message.completed) {
    completed.push_back({{"range", RangeJson(c.range)}, {"result", c.result}});
  }
  json out = {{"worker", message.worker},
              {"seq", message.seq},
              {"completed", completed},
              {"calcSeconds", message.calc_seconds},
              {"cpuSeconds", message.cpu_seconds},
              {"position", message.position},
              {"idle", message.idle},
              {"leaving", message.leaving}};
  if (!message.session.empty()) out["session"] = message.session;
  if (message.running_end > 0) out["runningEnd"] = message.running_end;
  return out;
}

json ToJson(const ReplyMessage& message) {
  json out = {{"kind", ReplyKindName(message.kind)},
              {"reportEverySeconds", message.report_every_s},
              {"heartbeatSeconds", message.heartbeat_s}};
  if (message.kind == Reply::Kind::kLease || message.kind == Reply::Kind::kContinue) {
    out["lease"] = RangeJson(message.lease);
  }
  if (!message.session.empty()) out["session"] = message.session;
  return out;
}

json ToJson(const JobDescription& message) {
  return {{"job", message.job}, {"workload", workload::WorkloadToJson(message.workload)}};
}

json ToJson(const SignalMessage& message) {
  json out = {{"signalled", message.signalled}};
  if (message.done) out["done"] = true;
  if (message.lease) out["lease"] = RangeJson(*message.lease);
  return out;
}

StatusOr<ReportMessage> ParseReport(const json& json) {
  if (!json.is_object()) return FieldError("report", "a JSON object");
  ReportMessage report;
  auto worker = json.find("worker");
  if (worker == json.end() || !worker->is_string() || worker->get<std::string>().empty()) {
    return FieldError("worker", "the worker's name (a non-empty string)");
  }
  report.worker = worker->get<std::string>();
  BALLAST_ASSIGN_OR_RETURN(report.seq, GetUint(json, "seq", "", 0));
  BALLAST_ASSIGN_OR_RETURN(report.calc_seconds, GetSeconds(json, "calcSeconds", 0));
  BALLAST_ASSIGN_OR_RETURN(report.cpu_seconds, GetSeconds(json, "cpuSeconds", 0));
  BALLAST_ASSIGN_OR_RETURN(report.position, GetUint(json, "position", "", 0));
  BALLAST_ASSIGN_OR_RETURN(report.running_end, GetUint(json, "runningEnd", "", 0));
  BALLAST_ASSIGN_OR_RETURN(report.idle, GetBool(json, "idle"));
  BALLAST_ASSIGN_OR_RETURN(report.leaving, GetBool(json, "leaving"));
  BALLAST_ASSIGN_OR_RETURN(report.session, GetString(json, "session"));
  auto completed = json.find("completed");
  if (completed != json.end()) {
    if (!completed->is_array()) return FieldError("completed", "an array");
    for (size_t i = 0; i < completed->size(); ++i) {
      const auto& entry = (*completed)[i];
      const std::string path = fmt::format("completed[{}]", i);
      if (!entry.is_object() || !entry.contains("range") || !entry.contains("result")) {
        return FieldError(path, "an object with range and result");
      }
      BALLAST_ASSIGN_OR_RETURN(balance::Range range, ParseRange(entry["range"], path + ".range"));
      if (range.empty()) return FieldError(path + ".range", "a non-empty range");
      report.completed.push_back({range, entry["result"]});
    }
  }
  return report;
}

StatusOr<ReplyMessage> ParseReply(const json& json) {
  if (!json.is_object() || !json.contains("kind"))
    return FieldError("reply", "an object with kind");
  ReplyMessage reply;
  BALLAST_ASSIGN_OR_RETURN(reply.kind, ParseKind(json["kind"]));
  if (reply.kind == Reply::Kind::kLease || reply.kind == Reply::Kind::kContinue) {
    if (!json.contains("lease")) return FieldError("lease", "a range (missing)");
    BALLAST_ASSIGN_OR_RETURN(reply.lease, ParseRange(json["lease"], "lease"));
  }
  BALLAST_ASSIGN_OR_RETURN(reply.report_every_s, GetSeconds(json, "reportEverySeconds", 0));
  BALLAST_ASSIGN_OR_RETURN(reply.heartbeat_s, GetSeconds(json, "heartbeatSeconds", 0));
  BALLAST_ASSIGN_OR_RETURN(reply.session, GetString(json, "session"));
  return reply;
}

StatusOr<JobDescription> ParseJobDescription(const json& json) {
  if (!json.is_object() || !json.contains("job") || !json["job"].is_string()) {
    return FieldError("job", "the job's name (a string)");
  }
  if (!json.contains("workload")) return FieldError("workload", "an object (missing)");
  JobDescription description;
  description.job = json["job"].get<std::string>();
  BALLAST_ASSIGN_OR_RETURN(description.workload, workload::WorkloadFromJson(json["workload"]));
  return description;
}

StatusOr<SignalMessage> ParseSignal(const json& json) {
  if (!json.is_object()) return FieldError("signal", "a JSON object");
  SignalMessage signal;
  BALLAST_ASSIGN_OR_RETURN(signal.signalled, GetBool(json, "signalled"));
  BALLAST_ASSIGN_OR_RETURN(signal.done, GetBool(json, "done"));
  if (auto lease = json.find("lease"); lease != json.end() && !lease->is_null()) {
    BALLAST_ASSIGN_OR_RETURN(signal.lease, ParseRange(*lease, "lease"));
  }
  return signal;
}

json RefusalJson(const std::string& reason, const std::string& message) {
  return {{"error", message}, {"reason", reason}};
}

Refusal ParseRefusal(const std::string& body) {
  const auto parsed_or = ParseBoundedJson(body, "the refusal");
  Refusal refusal{"", body};
  if (!parsed_or.ok() || !parsed_or->is_object()) return refusal;
  const json& parsed = *parsed_or;
  if (auto reason = parsed.find("reason"); reason != parsed.end() && reason->is_string()) {
    refusal.reason = reason->get<std::string>();
  }
  if (auto error = parsed.find("error"); error != parsed.end() && error->is_string()) {
    refusal.error = error->get<std::string>();
  }
  return refusal;
}

StatusOr<json> ParseJsonText(std::string_view text) {
  return ParseBoundedJson(text, "the body", {kMaxBodyBytes, kMaxBodyDepth});
}

}  // namespace ballast::protocol
