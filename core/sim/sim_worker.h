// SimWorker: one simulated worker, the node's side of the protocol. It
// behaves as the real one does: it asks, receives a lease (and its inputs
// over its link, InputLink), computes the lease's items in order at the
// node's true speed (changing when the scenario says; items it runs at once
// share that speed, ItemsAtOnceModel), reports progress at the cadence the
// lease asks for, applies a shrunk end at the first reply that carries it
// (never giving up an item it has begun), stops at an item boundary when
// signalled, dies at failAt losing what it had not reported, and, drained,
// hands in what it finished. Failing items take their attempts' time and are
// named failed in the report that hands them in (FailingItems).
//
// It sends nothing itself: each transition returns what the worker does next
// (WorkerStep), a report to send and a wake-up to schedule, and the
// simulation carries them (latency, the coordinator, the event queue). A
// computing worker wakes at its next decision point only (the lease done, a
// report due, a signalled stop reached); every wake-up it schedules carries
// its epoch, and a transition that changes its plans moves the epoch on, so
// an older wake-up is stale (the caller drops it: epoch()).
//
// Thread-safety: none; a simulation owns its workers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/sim/failing_items.h"
#include "core/sim/input_link.h"
#include "core/sim/scenario.h"
#include "core/sim/sim_result.h"
#include "core/sim/true_cost.h"

namespace ballast::sim {

// What the workers of one simulation share. The pointees outlive them.
struct WorkerModel {
  const TrueCost* cost = nullptr;  // the items' true costs, in mean items
  const FailingItems* failing = nullptr;
  bool timeline = false;  // record each worker's Segments (SimOptions::timeline)
};

// What a worker does after a transition, in this order: sends `report` now
// (its `now` and `worker` are the sender's to fill: when it arrives, the
// worker's policy id), then wakes at `wake` in its current epoch.
struct WorkerStep {
  std::optional<balance::Report> report;
  std::optional<double> wake;
};

class SimWorker {
 public:
  // kAbsent: not in the job (before Join); kDead: failed, refused, or left
  // the job (drained).
  enum class Phase { kAbsent, kAsking, kWaiting, kReceiving, kComputing, kPaused, kDone, kDead };

  // The worker of `node` under `workload`; `local`: the items whose inputs
  // are on the node; `prior_speed`: what the policy is told of it (for the
  // result). It starts absent.
  SimWorker(const EmulatedNode& node, const Workload& workload, const WorkerModel& model,
            balance::Range local, double prior_speed);

  const EmulatedNode& node() const { return *node_; }
  const InputLink& link() const { return link_; }
  balance::WorkerId id() const { return id_; }  // its id in the policy, once it joined
  Phase phase() const { return phase_; }
  // The epoch of the worker's latest wake-up; a wake-up of another is stale.
  uint64_t epoch() const { return epoch_; }

  // It enters the job as worker `id` of the policy and asks for work (an
  // idle report). Requires phase() == kAbsent.
  WorkerStep Join(balance::WorkerId id, double now);
  // The policy did not take it in: it never computes.
  void Refuse(double now);

  // Its wake-up of the current epoch: a lease whose inputs arrived starts
  // computing; a computing worker does what is due (finishes the lease, stops
  // at a signalled boundary, or reports progress) and plans its next wake-up.
  WorkerStep Wake(double now);
  // The node's true speed changed: a computing worker replans at the new rate.
  WorkerStep SpeedChanged(double now);
  // A reply reaches it: prefetches start; a lease starts arriving; a
  // continue applies the lease's new end and cadence; wait and done stop it
  // (a wait answering an older report leaves a computing worker be).
  // Nothing once it is dead.
  WorkerStep Deliver(const balance::Reply& reply, double now);
  // The coordinator's signal: a waiting worker asks again; a computing or
  // receiving one stops at its next item boundary and reports there.
  WorkerStep Signal(double now);
  // The node dies: what the worker had not reported is lost. Returns false
  // when it was dead already (it had left the job).
  bool Fail(double now);
  // The node is drained: the worker hands in the items it finished (the
  // item it was computing is lost) and stops. Returns its last report, or
  // none when it was not in the job (absent, done or dead).
  std::optional<balance::Report> Leave(double now);

  // Its result at the job's end `end`: its busy time and timeline brought up
  // to then, idle_s the rest of its time in the job (from joining to
  // failing, leaving or the end); items and cost are the coordinator's to
  // fill (OutcomeLedger). Call once, last.
  WorkerResult Finish(double end);

 private:
  // When a computing worker reaches each of its next decision points, as
  // ScheduleNext computed them (kNever for one it does not have); its
  // wake-up is the earliest of them.
  //
  // The wake-up acts on what these say is due at its time, whatever
  // Integrate then finds in cost_done_ and busy_since_report_. The clock is
  // a double: an instant far from 0 is a multiple of its resolution (2^-39 s
  // near 10^4 s, 2^-26 s near 10^8 s), so the wake-up falls up to half of it
  // before or after the exact instant, and the progress integrated to it may
  // fall short of the point by up to the rate times that. A test of the
  // progress against a tolerance alone then misses the point whenever the
  // shortfall exceeds the tolerance, and the next wake-up, now + shortfall /
  // rate, rounds to now itself: the worker wakes at one instant for ever.
  // Acting on the due times makes every wake-up finish the lease, stop the
  // worker or send a report.
  struct Due {
    double finish = balance::kNever;  // the lease's last item is done
    double report = balance::kNever;  // report_every seconds of computing since the last report
    double stop = balance::kNever;    // a signalled worker reaches the item boundary stop_at
    uint64_t stop_at = 0;
    double Earliest() const { return std::min({finish, report, stop}); }
  };

  void SetPhase(Phase phase, double now);
  void Integrate(double now);
  double Cost(balance::Range range) const { return model_.cost->Cost(range); }
  double LeaseCost() const { return Cost(lease_); }
  uint64_t Position() const;
  double Rate(double now) const;
  std::optional<double> ScheduleNext(double now);
  WorkerStep StartLease(const balance::Reply& reply, double now);
  WorkerStep ApplyEnd(const balance::Reply& reply, double now);
  WorkerStep FinishLease(double now);
  WorkerStep Stop(uint64_t stop_at, double now);
  balance::Report Progress(uint64_t position);

  const EmulatedNode* node_;
  WorkerModel model_;
  ItemsAtOnceModel at_once_;  // how many items it runs at once, and at what cost
  double item_seconds_;       // seconds of a mean item at speed 1
  InputLink link_;
  balance::WorkerId id_ = 0;
  Phase phase_ = Phase::kAbsent;
  double phase_since_ = 0;
  balance::Range lease_;
  double cost_done_ = 0;   // true cost finished within the lease
  uint64_t reported_ = 0;  // items of the lease before this one are reported
  double report_every_ = 0;
  double busy_since_report_ = 0;
  double rate_ = 0;           // cost units per second while computing
  double segment_start_ = 0;  // when cost_done_ was last brought up to date
  Due due_;                   // of the wake-up of the current epoch, while computing
  bool signal_pending_ = false;
  uint64_t epoch_ = 0;
  WorkerResult result_;
};

}  // namespace ballast::sim
