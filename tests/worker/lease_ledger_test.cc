// The worker's account of its lease (worker/lease_ledger.h): where it is,
// what a reply's new lease or shrunk end does to it, and what each report
// carries of the steps finished since the last.
#include "worker/lease_ledger.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>

namespace ballast::worker {
namespace {

using balance::Range;
using balance::Reply;
using protocol::ReplyMessage;
using protocol::ReportMessage;
using workload::Result;

ReplyMessage Reply(Reply::Kind kind, Range lease, std::string session = "s1") {
  ReplyMessage reply;
  reply.kind = kind;
  reply.lease = lease;
  reply.report_every_s = 0.5;
  reply.session = std::move(session);
  return reply;
}

// A CPU clock the test moves by hand.
struct FakeCpu {
  double now = 100;
  LeaseLedger::CpuClock clock() {
    return [this] { return now; };
  }
};

TEST(LeaseLedgerTest, ANewLeaseStartsAtItsBeginWithItsSessionAndCadence) {
  FakeCpu cpu;
  LeaseLedger ledger(cpu.clock());
  ledger.Obey(Reply(Reply::Kind::kLease, {10, 20}, "abc"));
  EXPECT_EQ(ledger.lease(), (Range{10, 20}));
  EXPECT_EQ(ledger.position(), 10u);
  EXPECT_EQ(ledger.session(), "abc");
  EXPECT_EQ(ledger.report_every_s(), 0.5);
  EXPECT_FALSE(ledger.finished());
  EXPECT_EQ(ledger.cut().end(), LeaseCut::kNoEnd) << "a new lease forgets the old one's cut";
}

TEST(LeaseLedgerTest, AReportCarriesTheFinishedStepsTheirTimeAndCpuThenStartsAfresh) {
  FakeCpu cpu;
  LeaseLedger ledger(cpu.clock());
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 10}));
  ledger.StartUnreported();
  ledger.Finished({0, 3}, Result::Primes(2, 5), 0.25);
  ledger.Finished({3, 5}, Result::Primes(1, 3), 0.5);
  cpu.now += 0.7;
  EXPECT_EQ(ledger.position(), 5u);
  EXPECT_DOUBLE_EQ(ledger.unreported_calc(), 0.75);

  ReportMessage report;
  ledger.Fill(report);
  ASSERT_EQ(report.completed.size(), 2u) << "the newest steps go alone";
  EXPECT_EQ(report.completed[0].range, (Range{0, 3}));
  EXPECT_EQ(report.completed[0].result, Result::Primes(2, 5).ToJson());
  EXPECT_EQ(report.completed[1].range, (Range{3, 5}));
  EXPECT_DOUBLE_EQ(report.calc_seconds, 0.75);
  EXPECT_NEAR(report.cpu_seconds, 0.7, 1e-9);
  EXPECT_EQ(report.position, 5u);

  ReportMessage next;
  ledger.Fill(next);
  EXPECT_TRUE(next.completed.empty());
  EXPECT_EQ(next.calc_seconds, 0);
  EXPECT_EQ(next.cpu_seconds, 0);
  EXPECT_EQ(next.position, 5u);
}

TEST(LeaseLedgerTest, ANewLeaseClosesTheOldOnesStepsIntoTheNextReport) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 4}));
  ledger.Finished({0, 4}, Result::Primes(2, 5), 0.1);
  EXPECT_TRUE(ledger.finished());
  ledger.Obey(Reply(Reply::Kind::kLease, {40, 50}));
  ledger.Finished({40, 42}, Result::Primes(1, 41), 0.1);

  ReportMessage report;
  ledger.Fill(report);
  ASSERT_EQ(report.completed.size(), 2u);
  EXPECT_EQ(report.completed[0].range, (Range{0, 4}));
  EXPECT_EQ(report.completed[1].range, (Range{40, 42}));
  EXPECT_EQ(report.position, 42u);
}

TEST(LeaseLedgerTest, AShrunkEndNeverGoesBelowWhatIsFinished) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 100}));
  ledger.Finished({0, 30}, Result::Primes(0, 0), 0.1);
  ledger.Obey(Reply(Reply::Kind::kContinue, {0, 60}));
  EXPECT_EQ(ledger.lease(), (Range{0, 60}));
  ledger.Obey(Reply(Reply::Kind::kContinue, {0, 20}));
  EXPECT_EQ(ledger.lease(), (Range{0, 30})) << "items past the new end are finished already";
  EXPECT_TRUE(ledger.finished());
  ledger.Obey(Reply(Reply::Kind::kContinue, {0, 90}));
  EXPECT_EQ(ledger.lease().end, 30u) << "a continue never lengthens the lease";
}

TEST(LeaseLedgerTest, ACutHeardWhileComputingEndsTheLeaseThereOrWhereTheWorkerIs) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 100}));
  ASSERT_TRUE(ledger.cut().Offer({0, 70}));
  ledger.FoldCut();
  EXPECT_EQ(ledger.lease().end, 70u);
  ledger.Finished({0, 80}, Result::Primes(0, 0), 0.1);  // ran past the cut before hearing it
  EXPECT_EQ(ledger.lease().end, 80u);
  EXPECT_TRUE(ledger.finished());
  EXPECT_FALSE(ledger.cut().Offer({5, 6})) << "a cut of another lease";
}

TEST(LeaseLedgerTest, ARunOfSeveralItemsIsNamedInEveryReportUntilItFinishes) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {8, 20}));
  ReportMessage before;
  ledger.Fill(before);
  EXPECT_EQ(before.running_end, 0u) << "nothing under way";
  ledger.Running(10);  // one command for items 8 and 9
  ReportMessage heartbeat;
  ledger.Fill(heartbeat);
  EXPECT_EQ(heartbeat.position, 8u);
  EXPECT_EQ(heartbeat.running_end, 10u);
  ReportMessage again;
  ledger.Fill(again);
  EXPECT_EQ(again.running_end, 10u) << "each report while it runs";
  ledger.Finished({8, 10}, Result::Primes(0, 0), 24.5);
  ReportMessage after;
  ledger.Fill(after);
  EXPECT_EQ(after.position, 10u);
  EXPECT_EQ(after.running_end, 0u) << "the run is over";
  ledger.Running(14);
  ledger.Obey(Reply(Reply::Kind::kLease, {40, 50}));
  ReportMessage fresh;
  ledger.Fill(fresh);
  EXPECT_EQ(fresh.running_end, 0u) << "a new lease starts with nothing under way";
}

// A run no report has named yet is untold: the worker sends a report as it
// begins (worker_loop.cc), so that the coordinator never cuts inside it
// unknowing. Told once a report named it; a new run, or a new lease's
// first, is untold again.
TEST(LeaseLedgerTest, ARunIsUntoldUntilAReportNamesIt) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {8, 20}));
  EXPECT_FALSE(ledger.RunUntold()) << "nothing under way";
  ledger.Running(12);
  EXPECT_TRUE(ledger.RunUntold()) << "the lease's first run, items 8 to 11";
  ReportMessage naming;
  ledger.Fill(naming);
  EXPECT_EQ(naming.running_end, 12u);
  EXPECT_FALSE(ledger.RunUntold());
  ReportMessage heartbeat;
  ledger.Fill(heartbeat);
  EXPECT_FALSE(ledger.RunUntold()) << "still named";
  ledger.Finished({8, 12}, Result::Primes(0, 0), 1.0);
  EXPECT_FALSE(ledger.RunUntold()) << "the run is over";
  ledger.Running(16);
  EXPECT_TRUE(ledger.RunUntold()) << "the next run, not yet named";
  ReportMessage told;
  ledger.Fill(told);
  EXPECT_FALSE(ledger.RunUntold());
  ledger.Obey(Reply(Reply::Kind::kLease, {12, 30}));
  ledger.Running(16);
  EXPECT_TRUE(ledger.RunUntold()) << "the same end in a new lease is told again";
}

TEST(LeaseLedgerTest, EndHereGivesTheRestBack) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 100}));
  ledger.Finished({0, 12}, Result::Primes(0, 0), 0.1);
  ledger.EndHere();
  EXPECT_EQ(ledger.lease(), (Range{0, 12}));
  EXPECT_TRUE(ledger.finished());
}

TEST(LeaseLedgerTest, DropForgetsTheLeaseItsSessionAndWhatWasNotReported) {
  LeaseLedger ledger;
  ledger.Obey(Reply(Reply::Kind::kLease, {0, 100}, "old"));
  ledger.Finished({0, 12}, Result::Primes(3, 9), 0.1);
  ledger.Drop();
  EXPECT_EQ(ledger.lease(), (Range{}));
  EXPECT_EQ(ledger.position(), 0u);
  EXPECT_EQ(ledger.session(), "");
  EXPECT_FALSE(ledger.cut().Offer({0, 5})) << "no lease is held";
  ReportMessage report;
  ledger.Fill(report);
  EXPECT_TRUE(report.completed.empty());
  EXPECT_EQ(report.calc_seconds, 0);
}

// This thread's CPU seconds so far.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Spins until this thread has spent `seconds` of CPU: however loaded the
// machine (a spin for a span of wall time got 0.048 CPU s of 0.15 s when
// the test ran niced beside a full build).
void Spin(double seconds) {
  const double until = ThreadCpuSeconds() + seconds;
  volatile uint64_t sink = 0;
  while (ThreadCpuSeconds() < until) sink = sink + 1;
}

TEST(ProcessCpuTest, AReapedChildsCpuIsTheChildrensAndThisProcesssOwnIsApart) {
  const ProcessCpu before = ProcessCpuSplit();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Spin(0.15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const ProcessCpu reaped = ProcessCpuSplit();
  EXPECT_GE(reaped.children - before.children, 0.05);
  EXPECT_LT(reaped.own - before.own, 0.05);  // waiting costs this process nothing that shows
  Spin(0.15);
  const ProcessCpu spun = ProcessCpuSplit();
  EXPECT_GE(spun.own - reaped.own, 0.05);
  EXPECT_DOUBLE_EQ(spun.children, reaped.children);
  EXPECT_NEAR(ProcessCpuSeconds(), spun.own + spun.children, 0.05);
}

}  // namespace
}  // namespace ballast::worker
