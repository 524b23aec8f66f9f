// LeaseLedger: the worker's account of the lease it holds — which lease,
// how far it has computed it, the nearest cut heard for it — and of what it
// finished since its last report. The worker's loop (worker_loop.h) moves
// it on as steps finish and replies come; it fills each report from it.
//
// A reply's new lease closes the old one's unreported steps into ranges
// (worker/report_ranges.h), which go with the next report. A shrunk end
// never goes below what is finished: items past it that a late reply finds
// finished are reported all the same (the coordinator merges each item once,
// whoever is first).
//
// Thread-safety: one thread (the loop's), except cut(), which a reply in
// flight and a signal offer cuts to from theirs (worker/lease_cut.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/balance/range.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"
#include "worker/lease_cut.h"

namespace ballast::worker {

// CPU seconds of this process (its own: leases, reports, the kernels that
// compute in it) and of its children (the exec workload's commands that
// have ended, a stopped backup copy among them, and its served commands
// while they live).
struct ProcessCpu {
  double own = 0;
  double children = 0;
};
ProcessCpu ProcessCpuSplit();

// ProcessCpuSplit's own and children's, summed.
double ProcessCpuSeconds();

class LeaseLedger {
 public:
  using CpuClock = std::function<double()>;

  explicit LeaseLedger(CpuClock cpu_seconds = ProcessCpuSeconds);

  const balance::Range& lease() const { return lease_; }
  uint64_t position() const { return position_; }
  bool finished() const { return position_ >= lease_.end; }
  // The session of the reply that granted the lease ("" when none).
  const std::string& session() const { return session_; }
  // The cadence of progress reports the policy asks (0: none).
  double report_every_s() const { return report_every_s_; }
  // Seconds spent computing the steps not yet reported.
  double unreported_calc() const { return calc_; }
  LeaseCut& cut() { return cut_; }

  // Takes up a reply's new lease (kLease), or its end of the current one.
  void Obey(const protocol::ReplyMessage& reply);
  // The rest of the lease went back to the pool: it ends where the worker is.
  void EndHere() { lease_.end = position_; }
  // Takes up a cut heard while computing: the lease ends there, or where the
  // worker is if it has passed it.
  void FoldCut();
  // A run of several items begins (an exec step's one command): it cannot
  // stop before `end`, and the reports say so until it finishes, so that the
  // coordinator cuts the lease no nearer (a cut inside it would have the
  // run's whole result dropped when another worker hands in an item past
  // the cut first).
  void Running(uint64_t end) { running_end_ = end; }
  // Whether a run of several items is under way that no report has named
  // yet: the first of a lease, or one that began while a report was in
  // flight. A report names it at once: a cut made without knowing it could
  // fall inside it, and its whole result be lost when another worker hands
  // in an item past the cut first (compile on the real-node bench: a Pi 4B's
  // first run of a lease, 14 sources in 22 s, unnamed until a heartbeat 10 s
  // on, was cut at its tenth source and lost).
  bool RunUntold() const { return running_end_ > position_ && running_end_ != told_end_; }
  // A step of the lease finished, from the position on.
  void Finished(balance::Range step, workload::Result result, double seconds);
  // Forgets what was finished and not reported; CPU counts from now.
  void StartUnreported();
  // Fills a report with what was finished since the last one, and the
  // position; the next report counts from here.
  void Fill(protocol::ReportMessage& report);
  // Forgets the lease, its session and its unreported progress.
  void Drop();

 private:
  // Moves this lease's unreported steps into completed_, grouped as
  // worker/report_ranges.h says.
  void CloseLeasePart();

  CpuClock cpu_seconds_;
  balance::Range lease_;
  uint64_t position_ = 0;
  uint64_t running_end_ = 0;  // Running's end; at or below position_ when none
  uint64_t told_end_ = 0;     // the run's end the last report named (0: none)
  std::string session_;
  double report_every_s_ = 0;
  LeaseCut cut_;
  // Finished since the last report: ranges of earlier leases, this lease's
  // steps in order, the seconds they took, and the CPU clock at the start.
  std::vector<protocol::Completion> completed_;
  std::vector<std::pair<balance::Range, workload::Result>> steps_;
  double calc_ = 0;
  double cpu_start_ = 0;
};

}  // namespace ballast::worker
