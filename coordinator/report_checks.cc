// The checks of a worker's report (report_checks.h).
#include "coordinator/report_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "coordinator/result_bounds.h"

namespace ballast::coordinator {

bool IsStale(uint64_t leases_granted, const std::string& session,
             const protocol::ReportMessage& report) {
  return leases_granted == 0 && !session.empty() && !report.session.empty() &&
         report.session != session;
}

Status CheckNumbers(const protocol::ReportMessage& report, uint64_t items) {
  for (const auto& [field, value] :
       {std::pair{"calcSeconds", report.calc_seconds}, {"cpuSeconds", report.cpu_seconds}}) {
    if (!std::isfinite(value) || value < 0) {
      return Status::Invalid(
          fmt::format("{}: expected a number of seconds >= 0, got {}", field, value));
    }
  }
  if (report.position > items) {
    return Status::Invalid(fmt::format("position: expected an item of the job (<= {}), got {}",
                                       items, report.position));
  }
  if (report.running_end > items) {
    return Status::Invalid(fmt::format("runningEnd: expected an item of the job (<= {}), got {}",
                                       items, report.running_end));
  }
  return Status::Ok();
}

Status CheckHandedBack(const workload::WorkloadSpec& workload, const workload::Result& result,
                       balance::Range range) {
  if (result.kind() != workload::WorkloadKind::kExec) return Status::Ok();
  const workload::UserFields& fields = result.exec().fields;
  BALLAST_RETURN_IF_ERROR(workload::CheckFields(fields, workload.exec.result));
  for (const auto& [name, total] : fields) {
    for (const workload::ListEntry& entry : total.kept) {
      if (entry.item < range.begin || entry.item >= range.end) {
        return Status::Invalid(fmt::format("fields.{}: an entry from item {}, outside {}", name,
                                           entry.item, range.ToString()));
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<workload::Result>> CheckCompletions(const workload::WorkloadSpec& workload,
                                                         const balance::IntervalSet& granted,
                                                         bool stale,
                                                         const protocol::ReportMessage& report) {
  std::vector<workload::Result> results;
  for (size_t i = 0; i < report.completed.size(); ++i) {
    const auto& completion = report.completed[i];
    const balance::Range range = completion.range;
    const bool inside = range.end <= workload.items;
    if (!inside || granted.CountIn(range) != range.size()) {
      if (inside && stale) {
        return Status::Conflict(
            fmt::format("this coordinator has not leased {} to worker '{}'; it restarted: drop "
                        "your lease and ask again",
                        range.ToString(), report.worker));
      }
      return Status::Invalid(fmt::format("completed[{}]: {} was never leased to worker '{}'", i,
                                         range.ToString(), report.worker));
    }
    auto result = workload::Result::FromJson(workload.kind, completion.result);
    if (!result.ok()) {
      return Status::Invalid(fmt::format("completed[{}].result: {}", i, result.status().message()));
    }
    if (Status possible = CheckResultPossible(workload, range, *result); !possible.ok()) {
      return Status::Invalid(fmt::format("completed[{}].{}", i, possible.message()));
    }
    if (Status fields = CheckHandedBack(workload, *result, range); !fields.ok()) {
      return Status::Invalid(fmt::format("completed[{}].result.exec.{}", i, fields.message()));
    }
    results.push_back(std::move(result).value());
  }
  return results;
}

}  // namespace ballast::coordinator
