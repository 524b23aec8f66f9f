// Tests of a simulated node's input link (core/sim/input_link.h): block
// transfers queue on the link, prefetched blocks land at their time, local
// inputs cross nothing, and a stream caps how fast a lease computes.
#include "core/sim/input_link.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ballast::sim {
namespace {

using balance::Range;

// 10 bytes an item over 20 bytes/s: half a second an item.
EmulatedNode LinkedNode() {
  EmulatedNode node;
  node.name = "linked";
  node.bandwidth = 20;
  return node;
}

Workload LinkWorkload(Transfer transfer) {
  Workload workload;
  workload.items = 100;
  workload.bytes_per_item = 10;
  workload.transfer = transfer;
  return workload;
}

TEST(InputLinkTest, ANodeWithoutBandwidthOrBytesCarriesNothing) {
  EmulatedNode node;
  node.name = "plain";
  const InputLink plain(node, LinkWorkload(Transfer::kBlock), {});
  EXPECT_FALSE(plain.carries());
  EXPECT_EQ(plain.TransferSeconds(10), 0);
  EmulatedNode own_bytes = LinkedNode();
  own_bytes.bytes_per_item = 0;  // the node's own figure wins over the workload's
  EXPECT_FALSE(InputLink(own_bytes, LinkWorkload(Transfer::kBlock), {}).carries());
  EXPECT_TRUE(InputLink(LinkedNode(), LinkWorkload(Transfer::kBlock), {}).carries());
}

TEST(InputLinkTest, BlocksQueueOnTheLinkAndLocalInputsCrossNothing) {
  InputLink link(LinkedNode(), LinkWorkload(Transfer::kBlock), Range{0, 2});
  EXPECT_DOUBLE_EQ(link.TransferSeconds(8), 4);
  // Items 0 and 1 are on the node: eight cross, from t = 1.
  EXPECT_DOUBLE_EQ(link.InputsReady({0, 10}, 1), 1 + 4);
  // The next block waits for the link.
  EXPECT_DOUBLE_EQ(link.InputsReady({10, 12}, 2), 5 + 1);
  // A lease of local items is ready at once.
  EXPECT_DOUBLE_EQ(link.InputsReady({0, 2}, 2), 2);
}

TEST(InputLinkTest, APrefetchedBlockLandsAtItsTime) {
  InputLink link(LinkedNode(), LinkWorkload(Transfer::kBlock), Range{});
  link.Prefetch({10, 20}, 0);  // arrives at 5
  EXPECT_DOUBLE_EQ(link.InputsReady({10, 20}, 2), 5);
  // Once it landed its items are local: a lease of them is ready at once.
  EXPECT_DOUBLE_EQ(link.InputsReady({12, 15}, 6), 6);
}

TEST(InputLinkTest, APrefetchOfLocalItemsTakesNoTimeOnTheLink) {
  InputLink link(LinkedNode(), LinkWorkload(Transfer::kBlock), Range{0, 10});
  link.Prefetch({0, 10}, 0);
  EXPECT_DOUBLE_EQ(link.InputsReady({20, 22}, 0), 1);  // the link was free
}

TEST(InputLinkTest, AStreamedLeaseStartsWhenItsFirstItemArrived) {
  InputLink link(LinkedNode(), LinkWorkload(Transfer::kStream), Range{});
  EXPECT_DOUBLE_EQ(link.InputsReady({0, 10}, 3), 3.5);
}

TEST(InputLinkTest, AStreamCapsTheRateByTheItemsThatCrossTheLink) {
  const InputLink remote(LinkedNode(), LinkWorkload(Transfer::kStream), Range{});
  // Two items a second; a lease of 10 items costing 20 computes at 4 cost/s.
  EXPECT_DOUBLE_EQ(remote.StreamCap({0, 10}, 20), 4);
  // Half of them local: the other half cross in the same time, twice as fast.
  const InputLink half(LinkedNode(), LinkWorkload(Transfer::kStream), Range{0, 5});
  EXPECT_DOUBLE_EQ(half.StreamCap({0, 10}, 20), 8);
  EXPECT_TRUE(std::isinf(half.StreamCap({0, 5}, 10)));  // all local
  EXPECT_TRUE(std::isinf(remote.StreamCap({}, 0)));
  const InputLink block(LinkedNode(), LinkWorkload(Transfer::kBlock), Range{});
  EXPECT_TRUE(std::isinf(block.StreamCap({0, 10}, 20)));
}

}  // namespace
}  // namespace ballast::sim
