// A GoogleTest suite that shares one real Prometheus (real_prometheus.h)
// between its tests: the suite's SetUpTestSuite builds the history as
// OpenMetrics text and calls StartPrometheus; every test then fails at once,
// with the reason, when the server could not start. CRTP, so that each suite
// has its own server.
//
// Thread-safety: GoogleTest runs a suite's set-up and tests on one thread.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "testbed/real_prometheus.h"

namespace ballast::testing {

template <class Suite>
class SharedPrometheusSuite : public ::testing::Test {
 protected:
  // Starts the suite's Prometheus holding `samples`; a failure is kept for SetUp.
  static void StartPrometheus(const std::string& samples) {
    std::string why;
    server_ = RealPrometheus::Start(samples, &why).release();
    if (!server_) why_ = new std::string(why);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr) << *why_; }

  static inline double now_ = 0;  // the suite's clock: when its history ends
  static inline RealPrometheus* server_ = nullptr;
  static inline std::string* why_ = nullptr;
};

}  // namespace ballast::testing
