// Tests of CompensatingFactor (core/balance/compensation.h): Mirtaheri's
// Method 3 (seed 004, §3.6.3, eq. 3-45) for the first transfer,
//   k = (2 rl² + rl l) / D + (2 l² + rl l) / D · T / Δt,  D = 2 l² + 2 rl l + 2 rl².
#include "core/balance/compensation.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace ballast::balance {
namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();

struct Case {
  std::string title;
  double compute_rate;   // λl
  double transfer_rate;  // λrl
  double idle_in;        // T
  double transfer_time;  // Δt
  double k;
};

TEST(CompensatingFactorTest, HandComputedValues) {
  const std::vector<Case> cases = {
      // D = 8 + 4 + 2 = 14; k = 4/14 + 10/14 · 1/4 = 6.5/14.
      {"slow link", 2, 1, 1, 4, 6.5 / 14},
      // D = 2 + 4 + 8 = 14; k = 10/14 + 4/14 · 2/5 = 11.6/14.
      {"fast link", 1, 2, 2, 5, 11.6 / 14},
      // D = 18 + 6 + 2 = 26 (l = 3, rl = 1); k = 5/26 + 21/26 · 0 = 5/26.
      {"receiver idle now", 3, 1, 0, 2, 5.0 / 26},
      // Negative idle_in is treated as idle now.
      {"receiver already idle", 3, 1, -4, 2, 5.0 / 26},
      // Equal rates: 0.5 + 0.5 T/Δt.
      {"equal rates, T/dt = 1/4", 3, 3, 1, 4, 0.625},
      {"equal rates, T/dt = 0", 7, 7, 0, 9, 0.5},
      {"equal rates, T/dt = 0.9", 0.5, 0.5, 0.9, 1, 0.95},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.title);
    EXPECT_NEAR(CompensatingFactor(c.compute_rate, c.transfer_rate, c.idle_in, c.transfer_time),
                c.k, 1e-12);
  }
}

TEST(CompensatingFactorTest, EqualRatesGiveHalfPlusHalfTheIdleRatio) {
  for (double rate : {0.01, 1.0, 250.0}) {
    for (double ratio : {0.0, 0.1, 0.5, 0.99}) {
      SCOPED_TRACE("rate=" + std::to_string(rate) + " T/dt=" + std::to_string(ratio));
      EXPECT_NEAR(CompensatingFactor(rate, rate, ratio * 8, 8), 0.5 + 0.5 * ratio, 1e-12);
    }
  }
}

TEST(CompensatingFactorTest, FreeTransfersGiveOne) {
  EXPECT_EQ(CompensatingFactor(2, kInfinite, 1, 4), 1.0);
  // Approaching the limit from finite rates.
  EXPECT_NEAR(CompensatingFactor(2, 1e9, 1, 4), 1.0, 1e-8);
  EXPECT_GT(CompensatingFactor(2, 1e3, 1, 4), CompensatingFactor(2, 1e2, 1, 4));
}

TEST(CompensatingFactorTest, DataArrivingBeforeTheReceiverIdlesGivesOne) {
  EXPECT_EQ(CompensatingFactor(2, 1, 4, 4), 1.0);
  EXPECT_EQ(CompensatingFactor(2, 1, 10, 4), 1.0);
  EXPECT_EQ(CompensatingFactor(2, 1, 1, 0), 1.0);  // nothing to transfer
}

TEST(CompensatingFactorTest, SlowTransfersTendToTheIdleRatio) {
  // λrl -> 0: k -> T / Δt (eq. 3-45 and the text after it).
  for (double ratio : {0.0, 0.25, 0.6}) {
    SCOPED_TRACE("T/dt=" + std::to_string(ratio));
    EXPECT_NEAR(CompensatingFactor(3, 1e-9, ratio * 10, 10), ratio, 1e-8);
  }
}

TEST(CompensatingFactorTest, ZeroTransferRateIsTheSlowTransferLimit) {
  // Eq. 3-45 is defined at λrl = 0 and gives T/Δt, the limit of the test
  // above; a link that moves nothing must not make the policy send everything.
  EXPECT_NEAR(CompensatingFactor(3, 0, 2.5, 10), 0.25, 1e-12);
}

TEST(CompensatingFactorTest, StaysBetweenTheIdleRatioAndOne) {
  for (double l : {0.1, 1.0, 10.0}) {
    for (double rl : {0.1, 1.0, 10.0}) {
      for (double ratio : {0.0, 0.3, 0.7}) {
        SCOPED_TRACE("l=" + std::to_string(l) + " rl=" + std::to_string(rl) +
                     " T/dt=" + std::to_string(ratio));
        const double k = CompensatingFactor(l, rl, ratio * 5, 5);
        EXPECT_GE(k, ratio - 1e-12);
        EXPECT_LE(k, 1.0);
        // A faster link never lowers k.
        EXPECT_GE(CompensatingFactor(l, 2 * rl, ratio * 5, 5), k - 1e-12);
      }
    }
  }
}

}  // namespace
}  // namespace ballast::balance
