// The checks JobSession makes of a worker's report before anything changes:
// its numbers are numbers, and each completion lies inside ranges leased to
// that worker, carries a result that parses and is possible for its range
// (result_bounds.h), and hands back only the fields the job declared
// (JobSession's class comment lists the rules; these are them, apart so
// that each reads alone).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::coordinator {

// True when a report comes from an earlier session of the job: it names
// another session than `session` (this one's; "" never stale), and this one
// has granted the worker no lease yet (`leases_granted` is 0).
bool IsStale(uint64_t leases_granted, const std::string& session,
             const protocol::ReportMessage& report);

// Ok, or Invalid naming the field when calcSeconds or cpuSeconds is negative
// or not finite, or the position lies past the job's `items`.
Status CheckNumbers(const protocol::ReportMessage& report, uint64_t items);

// Ok unless an exec result hands back fields `workload` did not declare, or
// list entries from items outside `range` (user_result.h CheckFields).
Status CheckHandedBack(const workload::WorkloadSpec& workload, const workload::Result& result,
                       balance::Range range);

// Each completion's result, parsed, in the report's order. Returns Invalid
// naming the completion when its range is not all in `granted` (every range
// leased to the worker), its result does not parse, is impossible for its
// range or hands back what the job did not declare; Conflict instead of
// Invalid for a range outside `granted` but inside the job when the report
// is `stale` (IsStale).
StatusOr<std::vector<workload::Result>> CheckCompletions(const workload::WorkloadSpec& workload,
                                                         const balance::IntervalSet& granted,
                                                         bool stale,
                                                         const protocol::ReportMessage& report);

}  // namespace ballast::coordinator
