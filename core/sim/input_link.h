// InputLink: a simulated node's link to the job's inputs. The inputs of some
// items sit on the node already (EmulatedNode::local_items); the others cross
// the link at its bandwidth. Streamed, a lease's items arrive one after
// another while it computes, and the link may cap how fast it computes;
// as a block, a lease computes once all its inputs are there, and the
// link carries one block at a time (prefetched blocks included: they queue
// behind one another and land on the node at their time).
//
// Thread-safety: none; a value owned by its simulated worker.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/balance/range.h"
#include "core/sim/scenario.h"

namespace ballast::sim {

class InputLink {
 public:
  // The link of `node` under `workload` (its bandwidth, the bytes per item
  // its own or the workload's, the workload's transfer); `local`: the items
  // whose inputs are on the node from the start.
  InputLink(const EmulatedNode& node, const Workload& workload, balance::Range local);

  // True when inputs cross this link at all: the node is shipped bytes per
  // item over a finite bandwidth.
  bool carries() const { return bytes_per_item_ > 0 && bandwidth_ > 0; }

  // Seconds the link takes to carry the inputs of `items` items (0 when it
  // carries none).
  double TransferSeconds(uint64_t items) const;

  // Starts fetching the inputs of `range` as a block at `now`, after
  // whatever the link carries already; nothing when they are all local.
  void Prefetch(balance::Range range, double now);

  // When the inputs of `lease`, starting at `now`, are all on the node (>=
  // now): prefetched blocks that carry some arrive at their time (blocks
  // already arrived become local), the rest cross the link as one block now
  // (block transfers) or only the first item does (streaming).
  double InputsReady(balance::Range lease, double now);

  // Streaming: the cost units per second at which the link feeds `lease`
  // (whose true cost is `lease_cost`), only its items not on the node
  // crossing it. Infinity when it does not cap the lease: block transfers,
  // no link, an empty lease or every input local.
  double StreamCap(balance::Range lease, double lease_cost) const;

 private:
  double bandwidth_;
  double bytes_per_item_;
  Transfer transfer_;
  balance::IntervalSet local_;  // items whose inputs are on this node
  double link_free_ = 0;        // when the link has carried every block it was given
  std::vector<std::pair<balance::Range, double>> in_flight_;  // blocks and their arrival
};

}  // namespace ballast::sim
