// What GET /v1/jobs/{job}/progress answers (core/protocol/progress.h): a
// job's progress from its view at the moment of the request, in the job's own
// cost units, with at most kMaxProgressNodes node rows. The rows and their
// figures are those the operator writes into status.nodes (the items' count
// and declared cost, per second of computing on merged items, lease cuts as
// steals), so `kubectl ballast top` lays them over the status as they are.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstddef>

#include "coordinator/job_types.h"
#include "core/protocol/progress.h"

namespace ballast::coordinator {

// The progress of the job `view` shows, whose mean item's declared cost is
// `unit` (workload::MeanItemCost of its workload; the view counts costs in
// mean items). With more than `max_nodes` workers, the rows are those
// departing most from their prior, as status.nodes keeps them
// (operator/api/weighted_job.h, NotableRows): first the workers that have
// not measured a speed yet, then by |log(speed share / prior share)|; kept
// in the job's worker order. Requires unit > 0.
protocol::JobProgress ProgressOf(const JobView& view, double unit,
                                 size_t max_nodes = protocol::kMaxProgressNodes);

}  // namespace ballast::coordinator
