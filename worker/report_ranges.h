// How a progress report hands in the steps a worker finished of one lease
// since its last report.
//
// The coordinator merges each handed-in range's result whole or not at all:
// a range that overlaps items someone else handed in first is dropped, since
// a result is a sum that cannot be split by item. That happens when the
// coordinator moved the far end of this worker's lease to another (a steal)
// and this worker computed past the cut before its next reply told it so.
// Handed in as one range, the worker's whole interval since its last report
// was lost with the overlap: on a Pi 3B under a CPU quota, 265 items, the
// last 0.4 s of its work, given to the pool to be done again.
//
// Cuts fall at the far end, so the newest steps are the ones at risk: the
// newest kSingleSteps steps are handed in one range each, so that a worker
// that ran past a cut loses at most the step holding the cut; steps older
// than those (a report that covers more than kSingleSteps steps, about 2.4 s
// of 50 ms steps) go in ranges that double in length going back (2, 4, 8, …
// steps). A report carries at most kSingleSteps + O(log steps) ranges. An
// earlier form doubled from the newest step on (1, 1, 2, 4, …): a worker
// whose overrun reached into its newest groups lost up to as many steps as
// it had run past, and those items went back to the pool as slivers that
// each cost a lease.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ballast::worker {

inline constexpr size_t kSingleSteps = 48;

// The groups [first, last) of step indices 0 … steps - 1 (oldest first) that a
// report hands in as one range each, in order; empty for no steps. The newest
// kSingleSteps steps are alone; each group further back is twice the length
// of the one after it, starting from 2; the oldest group holds what is left.
std::vector<std::pair<size_t, size_t>> ReportGroups(size_t steps);

}  // namespace ballast::worker
