// The figures of a local run (`ballast run`, RunLocal): from what the
// coordinator saw of the job and what the run's supervision recorded of each
// node, the measured work, the physical limit, the efficiency and each
// node's row of the table (docs/efficiency.md). Arithmetic alone: no
// process, file or clock, so its tests run in milliseconds.
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/run/local_runner.h"
#include "coordinator/job_types.h"
#include "core/fuzzy/model.h"
#include "core/job/job_spec.h"
#include "core/workload/workload.h"
#include "operator/controller/job_failures.h"

namespace ballast::cli {

// What the supervision of a run recorded of one node.
struct NodeRecord {
  job::EmulatedNode node;  // its name, emulated cores and joinAt
  std::string log_file;    // its worker's log in the run's log folder
  uint32_t restarts = 0;
  bool joined = false;  // its worker was in the job (from the start, or since joinAt)
  double joined_s = 0;  // when it joined, in seconds from the job's start (0: from the start)
  std::optional<double> left_s;  // when it was drained
};

// The outcome of a run whose job ended in `view`, with `weights` (the fuzzy
// weights of the nodes) and `nodes` in node order (one each), and
// `workload`, the job's. Fills view, weights, nodes, makespan_s, work_s,
// total_speed, ideal_s, ideal_bound, efficiency and efficiency_capped:
//  - work_s, W: the CPU seconds the workers used on the job's items (what
//    they did twice and verification's recomputations left out);
//  - ideal_s: balance::JobLimit of W over each node's emulated cores while
//    it was in the job, the largest item (its share of the declared cost)
//    on the node that runs one fastest (its cores over the items it runs at
//    once: exec.concurrency, else one per started core);
//  - a node's measured speed: the seconds of W its items' declared cost
//    stands for, over the seconds it computed them; its idle time: its time
//    in the job (until the makespan or its drain) not computing.
// The coordinator numbers workers in the order they joined, by name; a node
// that never joined (the job ended first) has a row of its weights alone,
// joined_s -1 when it had a joinAt. The rest of LocalRunOutcome
// (speed_method, log_dir, stopped, elapsed_s, containment) is the caller's.
LocalRunOutcome RunOutcome(coordinator::JobView view, fuzzy::WeightResult weights,
                           const workload::WorkloadSpec& workload,
                           const std::vector<NodeRecord>& nodes);

// Whether a running job whose coordinator sees `view` is past its failure
// policy: more items failed than job.max_failed_items tolerates
// (job::JudgeFailedItems kFailNow), where the operator fails a WeightedJob at
// once (TooManyFailedItems) and RunLocal stops the run.
bool PastFailurePolicy(const coordinator::JobView& view, const job::JobSpec& job);

// The failure policy's verdict on a run that ended with `outcome`, as the
// operator's on a WeightedJob (controller::FailureByItems, the other items'
// result "printed above"): TooManyFailedItems for a run stopped past
// maxFailedItems (its message then says how many items were not computed),
// FailedItems for one that attempted every item with maxFailedItems unset
// and had some fail; nullopt when the job succeeded.
std::optional<controller::FailedItemsFailure> RunFailure(const job::JobSpec& job,
                                                         const LocalRunOutcome& outcome);

}  // namespace ballast::cli
