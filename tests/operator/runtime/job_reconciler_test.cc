// The reconciler's names of a job (operator/runtime/job_reconciler.h): the
// coordinator's job id and the work queue's key, each from the other.
#include "operator/runtime/job_reconciler.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace ballast::runtime {
namespace {

// The coordinator names a job "namespace.name"; the operator's work queue
// "namespace/name". A name may hold dots, a namespace may not.
TEST(CoordinatorJobIdTest, TheQueueKeyComesBackFromTheId) {
  for (const auto& [ns, name] :
       {std::pair{"lab", "primes"}, std::pair{"lab", "thumbs.v2.run"}, std::pair{"a-b", "x"}}) {
    EXPECT_EQ(JobReconciler::KeyOfCoordinatorJobId(JobReconciler::CoordinatorJobId(ns, name)),
              std::string(ns) + "/" + name);
  }
}

}  // namespace
}  // namespace ballast::runtime
