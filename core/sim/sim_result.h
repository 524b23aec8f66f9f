// What a simulation measures (Simulate, simulator.h): the makespan against
// the physical limit, the messages, and each worker's items, time and
// timeline.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/balance/efficiency.h"
#include "core/health/measurement_noise.h"

namespace ballast::sim {

// A stretch of one worker's time, for Gantt charts.
struct Segment {
  enum class Kind { kBusy, kTransfer, kIdle };
  double start = 0;
  double end = 0;
  Kind kind = Kind::kIdle;
};

struct WorkerResult {
  std::string name;
  double prior_speed = 0;  // what the policy was told (the fuzzy weight)
  double true_speed = 0;   // the node's initial true speed
  uint64_t items = 0;      // items it handed in first (a duplicate does not count)
  uint64_t leases = 0;
  // Reports that carried computing time (progress and lease ends): each is
  // one measurement of its speed, a history sample (docs/history.md).
  uint64_t reports = 0;
  double cost = 0;  // declared cost of the items it reported (an item of mean cost is 1)
  double busy_s = 0;
  double idle_s = 0;  // not computing, until the makespan (transfer included)
  bool failed = false;
  bool left = false;              // drained mid-job (EmulatedNode::leave_at)
  std::vector<Segment> timeline;  // filled when SimOptions::timeline
  // Its reports' speed samples, as the coordinator keeps them
  // (OutcomeLedger::speed_samples): what health::MeasurementNoise reads.
  std::vector<health::SpeedSample> speed_samples;
};

struct SimResult {
  std::string policy;  // the spec's display label
  double makespan_s = 0;
  double ideal_s = 0;
  // Which bound ideal_s is: the work over the nodes' speeds, or the largest
  // item on the fastest node (balance::PhysicalLimit).
  balance::LimitBound ideal_bound = balance::LimitBound::kWork;
  double efficiency = 0;
  uint64_t messages = 0;  // every report, reply and signal
  uint64_t moved_items = 0;
  uint64_t steals = 0;
  uint64_t rebalances = 0;
  uint64_t duplicate_items = 0;
  // The start cost per item the policy learned and split by at the end
  // (PolicyStats::start_cost), in mean declared items; 0 for none.
  double start_cost = 0;
  uint64_t events = 0;  // simulator events processed
  // Failing items (Workload::failing_items) reported failed, and whether the
  // job fails for them at the end under the default failure policy
  // (job::FailsAtTheEnd, maxFailedItems unset: every other item computed).
  uint64_t failed_items = 0;
  bool job_failed = false;
  // The ideal static packing of the items by their true costs onto the
  // nodes there from the start (LptMakespan, packing.h); 0 when not computed
  // (more than ScenarioBounds::kMaxItemCosts items).
  double packing_s = 0;
  std::vector<WorkerResult> workers;
};

}  // namespace ballast::sim
