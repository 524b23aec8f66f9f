// The failure policy as both drivers keep it (docs/crds.md, "Failed items"):
// `ballast run` stops a job where the operator fails a WeightedJob, with the
// operator's reason and message (RunLocal's PastFailurePolicy and
// RunFailure, cli/run/run_outcome.h, against Decide's status). Regression
// (issue 61): `ballast run` ran every item whatever maxFailedItems said.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "cli/run/run_outcome.h"
#include "core/job/job_json.h"
#include "operator/controller/decide.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::cli {
namespace {

using controller::decide_test::World;
using nlohmann::json;

// What the operator made of a job of 2000 exec items after `failed` of the
// first `completed` failed: its phase and its Failed condition's reason and
// message ("" when none).
struct OperatorVerdict {
  std::string phase;
  std::string reason;
  std::string message;
};

json Spec(std::optional<int> max_failed) {
  json spec = {{"workload", {{"exec", {{"command", {"true"}}, {"retries", 2}}}}},
               {"items", 2000},
               {"backoffLimit", 1}};
  if (max_failed) spec["failurePolicy"] = {{"maxFailedItems", *max_failed}};
  return spec;
}

// The coordinator's view: `completed` items done, items 7, 9, ... (`failed`
// of them) failed after 3 attempts with exit code 1.
coordinator::JobView ViewOf(uint64_t completed, uint64_t failed, bool done) {
  coordinator::JobView view = controller::decide_test::View(completed, done);
  view.result = workload::Result::ExecSucceeded(completed - failed);
  for (uint64_t i = 0; i < failed; ++i) {
    EXPECT_TRUE(view.result.Merge(workload::Result::ExecFailed({7 + 2 * i, 8 + 2 * i}, 1, 3)).ok());
  }
  return view;
}

OperatorVerdict OperatorSays(std::optional<int> max_failed, const coordinator::JobView& view) {
  World world;
  world.job["spec"] = Spec(max_failed);
  world.Pass();
  world.view = controller::decide_test::View(0);
  world.view->result = workload::Result::Empty(workload::WorkloadKind::kExec);
  world.Pass();
  for (size_t i = 0; i < controller::decide_test::kNodes.size(); ++i) {
    world.pods.push_back(controller::decide_test::Pod(controller::decide_test::kNodes[i], "Running",
                                                      "pod-uid-" + std::to_string(i)));
  }
  world.Pass();
  world.view = view;
  const json status = controller::decide_test::S(world.Pass());
  OperatorVerdict verdict{status.value("phase", ""), "", ""};
  for (const json& condition : status.value("conditions", json::array())) {
    if (condition["type"] != "Failed") continue;
    verdict.reason = condition.value("reason", "");
    verdict.message = condition.value("message", "");
  }
  return verdict;
}

struct Case {
  std::optional<int> max_failed;
  uint64_t completed;
  uint64_t failed;
  bool done;
  const char* phase;   // the operator's
  const char* reason;  // of both drivers' failure; "" for none
};

TEST(FailurePolicyAgreementTest, BothDriversFailAndStopAJobAtTheSameVerdict) {
  const Case cases[] = {
      {0, 600, 1, false, "Failed", "TooManyFailedItems"},  // the first failed item
      {2, 600, 2, false, "Running", ""},                   // within the policy
      {2, 600, 3, false, "Failed", "TooManyFailedItems"},  // one past it
      {std::nullopt, 600, 5, false, "Running", ""},        // unset: the rest runs
      {std::nullopt, 2000, 5, true, "Failed", "FailedItems"},
      {5, 2000, 5, true, "Succeeded", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "max " << (c.max_failed ? *c.max_failed : -1) << ", "
                                      << c.failed << " failed of " << c.completed);
    const coordinator::JobView view = ViewOf(c.completed, c.failed, c.done);
    const OperatorVerdict op = OperatorSays(c.max_failed, view);
    EXPECT_EQ(op.phase, c.phase);
    EXPECT_EQ(op.reason, c.reason);
    auto job = job::JobSpecFromJson(Spec(c.max_failed), "p");
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    // The local runner stops the run exactly where the operator fails a running job.
    EXPECT_EQ(PastFailurePolicy(view, *job), !c.done && op.phase == std::string("Failed"));
    LocalRunOutcome outcome;
    outcome.view = view;
    outcome.failed_items_stopped = PastFailurePolicy(view, *job);
    const auto local = RunFailure(*job, outcome);
    EXPECT_EQ(local.has_value(), op.reason != std::string());
    if (!local) continue;
    EXPECT_EQ(api::ReasonName(local->reason), op.reason);
    // The same words, but where the result is and, for a run stopped
    // early, how much it left.
    std::string expected = op.message;
    if (const size_t at = expected.find("in status.result"); at != std::string::npos) {
      expected.replace(at, std::string("in status.result").size(), "printed above");
    }
    EXPECT_EQ(local->message.substr(0, expected.size()), expected);
    if (outcome.failed_items_stopped) {
      EXPECT_EQ(local->message.substr(expected.size()),
                "; the job was stopped there, 1400 of 2000 items not computed");
    } else {
      EXPECT_EQ(local->message, expected);
    }
  }
}

}  // namespace
}  // namespace ballast::cli
