#include "core/sim/input_link.h"

#include <algorithm>
#include <limits>

namespace ballast::sim {

using balance::Range;

InputLink::InputLink(const EmulatedNode& node, const Workload& workload, Range local)
    : bandwidth_(node.bandwidth),
      bytes_per_item_(node.bytes_per_item.value_or(workload.bytes_per_item)),
      transfer_(workload.transfer),
      local_(local) {}

double InputLink::TransferSeconds(uint64_t items) const {
  if (bytes_per_item_ <= 0 || bandwidth_ <= 0) return 0;
  return static_cast<double>(items) * bytes_per_item_ / bandwidth_;
}

void InputLink::Prefetch(Range range, double now) {
  const uint64_t remote = range.size() - local_.CountIn(range);
  if (remote == 0 || TransferSeconds(remote) <= 0) return;
  link_free_ = std::max(now, link_free_) + TransferSeconds(remote);
  in_flight_.emplace_back(range, link_free_);
}

double InputLink::InputsReady(Range lease, double now) {
  double ready = now;
  balance::IntervalSet coming;  // items of the lease in blocks still crossing
  std::erase_if(in_flight_, [&](const std::pair<Range, double>& flight) {
    const Range overlap{std::max(flight.first.begin, lease.begin),
                        std::min(flight.first.end, lease.end)};
    if (flight.second <= now) {
      local_.Add(flight.first);
      return true;
    }
    if (!overlap.empty()) {
      ready = std::max(ready, flight.second);
      coming.Add(overlap);
    }
    return false;
  });
  uint64_t here = local_.CountIn(lease);
  for (const Range& range : coming.Ranges()) here += range.size() - local_.CountIn(range);
  const uint64_t remote = lease.size() - here;
  if (remote == 0) return ready;
  if (transfer_ == Transfer::kStream) return std::max(ready, now + TransferSeconds(1));
  link_free_ = std::max(now, link_free_) + TransferSeconds(remote);
  return std::max(ready, link_free_);
}

double InputLink::StreamCap(Range lease, double lease_cost) const {
  constexpr double kNoCap = std::numeric_limits<double>::infinity();
  if (transfer_ != Transfer::kStream || !carries() || lease.empty()) return kNoCap;
  const double remote = static_cast<double>(lease.size() - local_.CountIn(lease));
  if (remote <= 0) return kNoCap;
  const double items_per_s = bandwidth_ / bytes_per_item_ * lease.size() / remote;
  return items_per_s * lease_cost / lease.size();
}

}  // namespace ballast::sim
