// ReleaseIdle: when a worker that asks for work in a job's tail is let go
// instead of told to wait (JobConfig::release_idle; docs/operator.md, "Kueue").
//
// Ballast's workers stay until the last item is done, so that an idle one can
// steal from or back up a slow one, take over a lost one's items, or
// recompute a sampled range. Under a shared quota (Kueue) an idle worker's
// pod holds quota another job could use. A worker is released — told "done",
// the reply every worker already obeys at the job's end, so it exits 0 and
// its pod Succeeds — only when all of these hold:
//
//   on            the job asked for it (JobConfig::release_idle);
//   told to wait  the policy has nothing for it now: it asked idle and the
//                 answer would be "wait" (no lease from the pool or a planned
//                 share, no steal, no backup, no check to recompute);
//   tail          every unfinished item is in some worker's lease: none in
//                 the pool or set aside in a planned share (a policy may also
//                 say "wait" while items are unassigned, e.g. adaptive keeps a
//                 worker too slow for the common end out of the pool);
//   not checking  verification is off: a sampled range must be recomputed by
//                 a worker other than the one that computed it, and a check
//                 may still come from any range merged until the last one, so
//                 every worker may be needed for it;
//   spares        at least kReleaseKeepsLive other live workers (heard from,
//                 not lost, not left, not released) stay: when any one of
//                 them is lost, another still takes over its items, so the
//                 release strands no work. A job of two workers never
//                 releases one; the last live workers are never released.
//
// What a release forfeits: the released worker cannot steal from, back up or
// take over from a worker that turns slow later; those that stay still can.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ballast::coordinator {

// Other live workers a release leaves at least.
inline constexpr size_t kReleaseKeepsLive = 2;

// What JobSession knows when a worker asked for work, for ReleaseIdle.
struct IdleFacts {
  bool enabled = false;     // JobConfig::release_idle
  bool verifying = false;   // JobConfig::verify is on
  bool idle = false;        // the worker asked for work (an idle report)
  bool told_wait = false;   // the answer it would get is "wait"
  uint64_t unassigned = 0;  // unfinished items in no worker's lease
  // Workers other than this one that may still compute: heard from, and not
  // lost, left or released since.
  size_t other_live = 0;
};

// True when the worker is released: told "done" instead of "wait".
bool ReleaseIdle(const IdleFacts& facts);

}  // namespace ballast::coordinator
