// LeaseCut: which cuts heard outside the loop the step being computed obeys.
#include "worker/lease_cut.h"

#include <gtest/gtest.h>

namespace ballast::worker {
namespace {

using balance::Range;

TEST(LeaseCutTest, TheNearestCutOfTheLeaseBeingComputedCounts) {
  LeaseCut cut;
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
  cut.Begin({100, 200});
  EXPECT_TRUE(cut.Offer({100, 180}));
  EXPECT_EQ(cut.end(), 180u);
  // A later word of a farther end (a reply sent before the steal) keeps the cut.
  EXPECT_TRUE(cut.Offer({100, 200}));
  EXPECT_EQ(cut.end(), 180u);
  EXPECT_TRUE(cut.Offer({100, 150}));
  EXPECT_EQ(cut.end(), 150u);
  EXPECT_EQ(cut.end_flag().load(), 150u);
}

TEST(LeaseCutTest, ACutOfAnotherLeaseOrOfNoneIsIgnored) {
  LeaseCut cut;
  EXPECT_FALSE(cut.Offer({0, 10}));  // nothing held yet
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
  cut.Begin({100, 200});
  EXPECT_FALSE(cut.Offer({0, 150}));  // the lease before this one
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
  EXPECT_TRUE(cut.Offer({100, 120}));
  // A new lease forgets the old one's cut, and a late cut of the old one.
  cut.Begin({300, 400});
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
  EXPECT_FALSE(cut.Offer({100, 110}));
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
  cut.Clear();
  EXPECT_FALSE(cut.Offer({300, 310}));
  EXPECT_EQ(cut.end(), LeaseCut::kNoEnd);
}

}  // namespace
}  // namespace ballast::worker
