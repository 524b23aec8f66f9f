// The ideal static packing of indivisible items onto nodes: a bound beside
// the physical limit that counts that items cannot be split. LPT (longest
// processing time first, for uniform machines): the items by decreasing
// cost, each to the node that would finish it earliest. It knows every
// item's true cost and every node's true speed, which no policy does, and
// sends no message; it is not an optimum (LPT is within 4/3 of the best
// packing on identical nodes, within 2 on uniform ones) but what a
// scheduler told everything in advance would do.
//
// Thread-safety: a pure function.
#pragma once

#include <vector>

namespace ballast::sim {

// The makespan of the LPT packing of items of `item_seconds` (seconds at
// speed 1, each >= 0) onto nodes of `speeds` (each > 0), each node computing
// one item at a time from time 0. Returns 0 when there are no items, and
// infinity when there are items and no node of positive speed.
double LptMakespan(std::vector<double> item_seconds, const std::vector<double>& speeds);

}  // namespace ballast::sim
