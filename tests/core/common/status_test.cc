// Status: an error's field path carried as data (Status::InvalidAt), and the
// message formed from it.
#include "core/common/status.h"

#include <gtest/gtest.h>

namespace ballast {
namespace {

TEST(StatusTest, InvalidAtFormsTheMessageFromThePath) {
  const Status status = Status::InvalidAt("spec.workload.primes.limit", "expected an integer");
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.message(), "spec.workload.primes.limit: expected an integer");
  EXPECT_EQ(status.path(), "spec.workload.primes.limit");
  EXPECT_EQ(status.detail(), "expected an integer");
  const Status whole = Status::InvalidAt("", "no path");
  EXPECT_EQ(whole.message(), "no path");
  EXPECT_EQ(whole.path(), "");
  EXPECT_EQ(whole.detail(), "no path");
}

TEST(StatusTest, APrefixKeepsThePathAndTheDetail) {
  const Status located = Status::InvalidAt("spec.items", "expected an integer >= 1, got 0")
                             .WithPrefix("job.yaml:3:8: ");
  EXPECT_EQ(located.message(), "job.yaml:3:8: spec.items: expected an integer >= 1, got 0");
  EXPECT_EQ(located.path(), "spec.items");
  EXPECT_EQ(located.detail(), "expected an integer >= 1, got 0");
  EXPECT_EQ(located.code(), StatusCode::kInvalid);
}

TEST(StatusTest, AMessageWithoutAPathIsAllDetail) {
  const Status status = Status::Invalid("spec.items: written by hand");
  EXPECT_EQ(status.path(), "");
  EXPECT_EQ(status.detail(), "spec.items: written by hand");
  EXPECT_EQ(status.WithPrefix("f: ").message(), "f: spec.items: written by hand");
}

TEST(StatusTest, IsAboutAFieldAndTheFieldsInsideIt) {
  const Status policy = Status::InvalidAt("spec.policy", "expected a policy");
  EXPECT_TRUE(policy.IsAbout("spec.policy"));
  EXPECT_TRUE(policy.IsAbout("spec"));
  EXPECT_TRUE(Status::InvalidAt("spec.policy.chunk", "x").IsAbout("spec.policy"));
  EXPECT_TRUE(Status::InvalidAt("spec.policy[0]", "x").IsAbout("spec.policy"));
  EXPECT_FALSE(Status::InvalidAt("spec.policyTimeout", "x").IsAbout("spec.policy"));
  EXPECT_FALSE(Status::InvalidAt("spec", "x").IsAbout("spec.policy"));
  EXPECT_FALSE(policy.IsAbout(""));
  // A message that starts with the path is not a path.
  EXPECT_FALSE(Status::Invalid("spec.policy: written by hand").IsAbout("spec.policy"));
  EXPECT_TRUE(policy.WithPrefix("job.yaml:3:8: ").IsAbout("spec.policy"));
}

}  // namespace
}  // namespace ballast
