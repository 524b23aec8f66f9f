// ReleaseIdle and JobSession's release of idle workers in a job's tail
// (coordinator/idle_release.h; JobConfig::release_idle): the decision's table,
// then jobs driven through JobSession with no network and no clock.
#include "coordinator/idle_release.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "coordinator/job_session.h"
#include "tests/coordinator/session_reports.h"
#include "tests/support/policy_spec.h"
#include "tests/support/primes_workload.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/reference.h"

// A namespace of its own: the unity build compiles this file with the other
// coordinator tests, whose helpers have the same names.
namespace ballast::coordinator::release_test {
namespace {

using balance::Range;
using balance::Reply;
using protocol::ReportMessage;
using session_reports::Finished;
using session_reports::Idle;
using session_reports::NewSession;
using session_reports::Reference;

// The facts of a worker that may be released: every condition holds.
IdleFacts Releasable() {
  IdleFacts facts;
  facts.enabled = true;
  facts.idle = true;
  facts.told_wait = true;
  facts.other_live = 2;
  return facts;
}

TEST(ReleaseIdleTest, ReleasedOnlyWhenEveryConditionHolds) {
  EXPECT_TRUE(ReleaseIdle(Releasable()));
  struct Case {
    const char* what;
    void (*change)(IdleFacts&);
  };
  const Case cases[] = {
      {"off", [](IdleFacts& f) { f.enabled = false; }},
      {"verifying", [](IdleFacts& f) { f.verifying = true; }},
      {"computing, not asking", [](IdleFacts& f) { f.idle = false; }},
      {"given work", [](IdleFacts& f) { f.told_wait = false; }},
      {"an item unassigned", [](IdleFacts& f) { f.unassigned = 1; }},
      {"one other live worker", [](IdleFacts& f) { f.other_live = 1; }},
      {"the last live worker", [](IdleFacts& f) { f.other_live = 0; }},
  };
  for (const Case& c : cases) {
    IdleFacts facts = Releasable();
    c.change(facts);
    EXPECT_FALSE(ReleaseIdle(facts)) << c.what;
  }
  IdleFacts many = Releasable();
  many.other_live = 40;
  EXPECT_TRUE(ReleaseIdle(many));
}

// A primes job of `limit` on `workers` (prior 1 each), idle workers released.
JobConfig PrimesJob(uint64_t limit, std::vector<std::string> workers,
                    const std::string& policy = "equal") {
  JobConfig config;
  config.id = "job-1";
  config.token = "secret";
  config.workload = testing::PrimesWorkload(limit);
  config.policy = testing_support::PolicyNamed(policy);
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  config.lease_seconds = 10;
  config.release_idle = true;
  return config;
}

// Asks for `worker` and returns its lease; a test failure when it gets none.
Range LeaseOf(JobSession& session, const std::string& worker, double now) {
  auto reply = session.HandleReport(Idle(worker), now);
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->kind, Reply::Kind::kLease) << worker;
  return reply->lease;
}

// `worker` hands `range` in; returns the kind of the answer.
Reply::Kind HandIn(JobSession& session, const std::string& worker, Range range, double now) {
  auto reply = session.HandleReport(Finished(session, worker, range), now);
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
  return reply.ok() ? reply->kind : Reply::Kind::kWait;
}

bool Released(const JobSession& session, size_t worker) {
  return session.View().workers.at(worker).released;
}

TEST(JobSessionReleaseTest, AnIdleWorkerInTheTailIsToldDoneWhileTwoOthersCompute) {
  auto session = NewSession(PrimesJob(6000, {"a", "b", "c"}));
  const Range a = LeaseOf(*session, "a", 1);
  const Range b = LeaseOf(*session, "b", 1);
  const Range c = LeaseOf(*session, "c", 1);
  // Every item is leased: a, done with its share, has nothing left to do.
  EXPECT_EQ(HandIn(*session, "a", a, 2), Reply::Kind::kDone);
  EXPECT_TRUE(Released(*session, 0));
  EXPECT_FALSE(session->Finished());
  EXPECT_TRUE(session->View().workers[0].left_at.has_value());
  EXPECT_EQ(session->View().workers[0].lost, 0u);
  // b is next, but only c would stay: b waits, ready to take over from c.
  EXPECT_EQ(HandIn(*session, "b", b, 3), Reply::Kind::kWait);
  EXPECT_FALSE(Released(*session, 1));
  EXPECT_EQ(HandIn(*session, "c", c, 4), Reply::Kind::kDone);
  EXPECT_TRUE(session->Finished());
  EXPECT_EQ(session->View().result, Reference(session->config().workload));
  EXPECT_EQ(session->View().completed, session->config().workload.items);
}

TEST(JobSessionReleaseTest, NeverWhileWorkIsUnassigned) {
  auto session = NewSession(PrimesJob(6000, {"a", "b", "c", "d"}));
  const Range a = LeaseOf(*session, "a", 1);
  LeaseOf(*session, "b", 1);
  LeaseOf(*session, "c", 1);
  // d has not asked yet: its share is planned, unassigned. a waits.
  EXPECT_EQ(HandIn(*session, "a", a, 2), Reply::Kind::kWait);
  EXPECT_FALSE(Released(*session, 0));
  LeaseOf(*session, "d", 3);
  // Now every item is leased and three others compute: a goes.
  auto again = session->HandleReport(Idle("a"), 4);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, Reply::Kind::kDone);
  EXPECT_TRUE(Released(*session, 0));
}

TEST(JobSessionReleaseTest, NeverTheLastTwoLiveWorkers) {
  auto session = NewSession(PrimesJob(4000, {"a", "b"}));
  const Range a = LeaseOf(*session, "a", 1);
  const Range b = LeaseOf(*session, "b", 1);
  EXPECT_EQ(HandIn(*session, "a", a, 2), Reply::Kind::kWait);
  EXPECT_FALSE(Released(*session, 0));
  EXPECT_EQ(HandIn(*session, "b", b, 3), Reply::Kind::kDone);
  EXPECT_TRUE(session->Finished());
  EXPECT_EQ(session->View().result, Reference(session->config().workload));

  // A lost worker does not count as one that stays: with c lost, a and b
  // are the last two.
  auto three = NewSession(PrimesJob(6000, {"a", "b", "c"}));
  const Range first = LeaseOf(*three, "a", 1);
  const Range second = LeaseOf(*three, "b", 1);
  LeaseOf(*three, "c", 1);
  ASSERT_TRUE(three->WorkerLost("c", 2).ok());
  auto taken = three->HandleReport(Finished(*three, "b", second), 3);
  ASSERT_TRUE(taken.ok());
  ASSERT_EQ(taken->kind, Reply::Kind::kLease) << "c's items, from the pool";
  EXPECT_EQ(HandIn(*three, "a", first, 4), Reply::Kind::kWait);
  EXPECT_FALSE(Released(*three, 0));
  EXPECT_EQ(HandIn(*three, "b", taken->lease, 5), Reply::Kind::kDone);
  EXPECT_TRUE(three->Finished());
  EXPECT_EQ(three->View().result, Reference(three->config().workload));
}

TEST(JobSessionReleaseTest, ALostWorkersItemsAreTakenOverByOneThatStayed) {
  auto session = NewSession(PrimesJob(6000, {"a", "b", "c"}));
  const Range a = LeaseOf(*session, "a", 1);
  const Range b = LeaseOf(*session, "b", 1);
  LeaseOf(*session, "c", 1);
  ASSERT_EQ(HandIn(*session, "a", a, 2), Reply::Kind::kDone);
  // c's pod dies: its items go back, and b, which stayed, takes them.
  ASSERT_TRUE(session->WorkerLost("c", 3).ok());
  auto taken = session->HandleReport(Finished(*session, "b", b), 4);
  ASSERT_TRUE(taken.ok());
  ASSERT_EQ(taken->kind, Reply::Kind::kLease);
  Range lease = taken->lease;
  for (double now = 5; lease.size() > 0 && now < 100; ++now) {
    auto next = session->HandleReport(Finished(*session, "b", lease), now);
    ASSERT_TRUE(next.ok());
    lease = next->kind == Reply::Kind::kLease ? next->lease : Range{};
  }
  EXPECT_TRUE(session->Finished());
  EXPECT_EQ(session->View().result, Reference(session->config().workload));
  // a was released, not lost: losing it afterwards changes nothing.
  ASSERT_TRUE(session->WorkerLost("a", 101).ok());
  EXPECT_EQ(session->View().workers[0].lost, 0u);
  EXPECT_EQ(session->View().workers[2].lost, 1u);
}

TEST(JobSessionReleaseTest, AReleasedWorkerAskingAgainHearsDoneAndChangesNothing) {
  auto session = NewSession(PrimesJob(6000, {"a", "b", "c"}));
  const Range a = LeaseOf(*session, "a", 1);
  LeaseOf(*session, "b", 1);
  LeaseOf(*session, "c", 1);
  ASSERT_EQ(HandIn(*session, "a", a, 2), Reply::Kind::kDone);
  const JobView before = session->View();
  auto again = session->HandleReport(Idle("a"), 3);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, Reply::Kind::kDone);
  const JobView after = session->View();
  EXPECT_EQ(after.workers[0].reports, before.workers[0].reports);
  EXPECT_EQ(after.workers[0].left_at, before.workers[0].left_at);
  EXPECT_EQ(after.completed, before.completed);
}

TEST(JobSessionReleaseTest, OffByDefaultAndWithVerification) {
  for (const bool verify : {false, true}) {
    JobConfig config = PrimesJob(6000, {"a", "b", "c"});
    config.release_idle = verify;  // on only with verification
    if (verify) config.verify = {1.0, 7};
    auto session = NewSession(config);
    const Range a = LeaseOf(*session, "a", 1);
    LeaseOf(*session, "b", 1);
    LeaseOf(*session, "c", 1);
    auto reply = session->HandleReport(Finished(*session, "a", a), 2);
    ASSERT_TRUE(reply.ok());
    EXPECT_NE(reply->kind, Reply::Kind::kDone) << "verify " << verify;
    EXPECT_FALSE(Released(*session, 0)) << "verify " << verify;
  }
}

// Adaptive on a job where one worker reports once while the others report
// eight times: idle workers steal and back up, then in the tail some are
// released, never more than leaves two; the result is exact.
TEST(JobSessionReleaseTest, AdaptiveReleasesIdleWorkersInTheTailAndTheResultIsExact) {
  auto session = NewSession(PrimesJob(12000, {"a", "b", "c", "d", "slow"}, "adaptive"));
  std::map<std::string, Range> leases;
  std::set<std::string> gone;
  double now = 0;
  for (int turn = 0; turn < 100000 && !session->Finished(); ++turn) {
    for (const auto& prior : session->config().workers) {
      const std::string& name = prior.name;
      if (gone.contains(name) || (name == "slow" && turn % 8 != 0)) continue;
      auto it = leases.find(name);
      const ReportMessage report =
          it == leases.end() ? Idle(name) : Finished(*session, name, it->second);
      leases.erase(name);
      auto reply = session->HandleReport(report, now += 0.01);
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      if (reply->kind == Reply::Kind::kLease) leases[name] = reply->lease;
      if (reply->kind == Reply::Kind::kDone && !session->Finished()) gone.insert(name);
    }
  }
  ASSERT_TRUE(session->Finished());
  EXPECT_EQ(session->View().result, Reference(session->config().workload));
  size_t released = 0;
  for (const WorkerView& worker : session->View().workers) released += worker.released ? 1 : 0;
  EXPECT_EQ(released, gone.size());
  EXPECT_GE(released, 1u);
  EXPECT_LE(released, 3u);  // five workers, two stay
}

}  // namespace
}  // namespace ballast::coordinator::release_test
