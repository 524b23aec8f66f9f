// Leader election on a real coordination.k8s.io/v1 Lease: one leader among
// two electors, hand-over on release, and the Lease's record.
#include <gtest/gtest.h>

#include <atomic>

#include "net/kube/leader_election.h"
#include "tests/net/kube/e2e_support.h"

namespace ballast::kube {
namespace {

using testing::ClientFor;
using testing::KubeE2eTest;
using testing::WaitUntil;

LeaderElectionConfig Config(const std::string& ns, const std::string& identity,
                            std::atomic<int>* started, std::atomic<int>* stopped) {
  LeaderElectionConfig config;
  config.lease_namespace = ns;
  config.lease_name = "ballast-operator";
  config.identity = identity;
  config.lease_duration = std::chrono::seconds(3);
  config.renew_deadline = std::chrono::seconds(2);
  config.retry_period = std::chrono::milliseconds(200);
  config.on_started_leading = [started] { ++*started; };
  config.on_stopped_leading = [stopped] { ++*stopped; };
  return config;
}

TEST_F(KubeE2eTest, LeaderElectionOneLeaderThenHandOverOnRelease) {
  auto other_client = ClientFor("kubeconfig");  // a second replica, its own connections
  ASSERT_TRUE(other_client);
  std::atomic<int> a_started{0}, a_stopped{0}, b_started{0}, b_stopped{0};
  LeaderElector a(*client_, Config(ns_, "replica-a", &a_started, &a_stopped));
  LeaderElector b(*other_client, Config(ns_, "replica-b", &b_started, &b_stopped));
  a.Start();
  ASSERT_TRUE(WaitUntil([&] { return a.IsLeader(); }));
  b.Start();
  // Longer than the lease duration: a keeps renewing, b never leads.
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(a.IsLeader());
    ASSERT_FALSE(b.IsLeader());
  }
  EXPECT_EQ(b.Leader(), "replica-a");
  auto lease = client_->Get(Leases().In(ns_).Named("ballast-operator"));
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->at("spec").at("holderIdentity"), "replica-a");
  EXPECT_EQ(lease->at("spec").at("leaseDurationSeconds"), 3);
  EXPECT_TRUE(lease->at("spec").contains("renewTime"));
  EXPECT_TRUE(lease->at("spec").contains("acquireTime"));

  const auto released = std::chrono::steady_clock::now();
  a.Stop();  // graceful: releases the Lease
  EXPECT_FALSE(a.IsLeader());
  EXPECT_EQ(a_stopped.load(), 1);
  ASSERT_TRUE(WaitUntil([&] { return b.IsLeader(); }));
  // Released, so b does not wait out the 3 s lease.
  EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::milliseconds(1500));
  lease = client_->Get(Leases().In(ns_).Named("ballast-operator"));
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->at("spec").at("holderIdentity"), "replica-b");
  EXPECT_EQ(lease->at("spec").at("leaseTransitions"), 1);
  b.Stop();
  EXPECT_EQ(a_started.load(), 1);
  EXPECT_EQ(b_started.load(), 1);
  EXPECT_EQ(b_stopped.load(), 1);
}

TEST_F(KubeE2eTest, LeaderElectionTakesOverAnExpiredLease) {
  // A holder that vanished without releasing: the Lease expires by the
  // elector's own clock, then the elector takes it.
  auto created = client_->Create(Leases().In(ns_), {{"apiVersion", "coordination.k8s.io/v1"},
                                                    {"kind", "Lease"},
                                                    {"metadata", {{"name", "ballast-operator"}}},
                                                    {"spec",
                                                     {{"holderIdentity", "crashed"},
                                                      {"leaseDurationSeconds", 2},
                                                      {"renewTime", MicroTimeNow()}}}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::atomic<int> started{0}, stopped{0};
  LeaderElector elector(*client_, Config(ns_, "replica-c", &started, &stopped));
  const auto start = std::chrono::steady_clock::now();
  elector.Start();
  ASSERT_TRUE(WaitUntil([&] { return elector.IsLeader(); }, std::chrono::seconds(10)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  elector.Stop();
}

}  // namespace
}  // namespace ballast::kube
