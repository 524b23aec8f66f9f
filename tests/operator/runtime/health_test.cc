// The operator's probes (operator/runtime/health.h): what /healthz and
// /readyz answer for each state of the loops, as a table; and the server
// answering them over a real loopback connection.
#include "operator/runtime/health.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace ballast::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Role = HealthInputs::Role;

const HealthClock::time_point kNow = HealthClock::time_point{} + std::chrono::hours(10);
constexpr milliseconds kBound{120000};

InformerHealth Synced(const std::string& resource) { return {resource, true, std::nullopt, ""}; }

HealthInputs Leader() {
  HealthInputs inputs;
  inputs.role = Role::kLeader;
  inputs.informers = {Synced("weightedjobs"), Synced("pods"), Synced("nodes")};
  return inputs;
}

TEST(HealthTest, ProbesAnswerForEachStateOfTheLoops) {
  struct Case {
    std::string name;
    HealthInputs inputs;
    bool live, ready;
    std::string live_message, ready_message;
  };
  HealthInputs starting;
  HealthInputs standby;
  standby.role = Role::kStandby;
  HealthInputs stopping = Leader();
  stopping.role = Role::kStopping;
  HealthInputs syncing = Leader();
  syncing.informers[1].synced = false;
  HealthInputs no_informers;
  no_informers.role = Role::kLeader;
  HealthInputs briefly_failing = Leader();
  briefly_failing.informers[1].failing_since = kNow - seconds(119);
  briefly_failing.informers[1].last_error = "Unavailable: connection refused";
  HealthInputs dead_watch = briefly_failing;
  dead_watch.informers[1].failing_since = kNow - seconds(121);
  HealthInputs busy = Leader();
  busy.reconciles_running = {kNow - seconds(1), kNow - seconds(120)};
  HealthInputs stuck = Leader();
  stuck.reconciles_running = {kNow - seconds(1), kNow - seconds(300)};
  const Case cases[] = {
      {"starting", starting, true, false, "ok", "starting"},
      {"standby", standby, true, true, "ok", "ok (standby: waiting for the leader Lease)"},
      {"stopping", stopping, true, false, "ok", "stopping"},
      {"leader syncing", syncing, true, false, "ok", "informer caches not synced yet: pods"},
      {"leader before its informers", no_informers, true, false, "ok",
       "informer caches not synced yet: not started"},
      {"leader synced", Leader(), true, true, "ok", "ok"},
      {"a watch failing within the bound", briefly_failing, true, true, "ok", "ok"},
      {"a dead watch", dead_watch, false, true,
       "stalled longer than 120 s: the pods informer has failed for 121 s (last error: "
       "Unavailable: connection refused)",
       "ok"},
      {"reconciles within the bound", busy, true, true, "ok", "ok"},
      {"a stuck reconcile", stuck, false, true,
       "stalled longer than 120 s: a reconcile has run for 300 s", "ok"},
  };
  for (const auto& c : cases) {
    const HealthVerdict verdict = EvaluateHealth(c.inputs, kNow, kBound);
    EXPECT_EQ(verdict.live, c.live) << c.name;
    EXPECT_EQ(verdict.ready, c.ready) << c.name;
    EXPECT_EQ(verdict.live_message, c.live_message) << c.name;
    EXPECT_EQ(verdict.ready_message, c.ready_message) << c.name;
  }
}

// One HTTP/1.0 GET over loopback; the whole answer.
std::string Get(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)write(fd, request.data(), request.size());
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) answer.append(buffer, n);
  close(fd);
  return answer;
}

TEST(HealthTest, TheServerAnswersEachProbeWithItsVerdict) {
  std::atomic<bool> ready{false};
  auto server = HealthServer::Start("127.0.0.1", 0, [&] {
    HealthVerdict verdict;
    verdict.ready = ready.load();
    verdict.ready_message = ready ? "ok" : "informer caches not synced yet: pods";
    return verdict;
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  std::string answer = Get(port, "/readyz");
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  EXPECT_NE(answer.find("informer caches not synced yet: pods"), std::string::npos) << answer;
  ready = true;
  answer = Get(port, "/readyz");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  answer = Get(port, "/healthz?verbose");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_EQ(Get(port, "/metrics").rfind("HTTP/1.1 404", 0), 0u);
}

TEST(HealthTest, APortInUseIsRefusedNamingTheFlag) {
  auto first = HealthServer::Start("127.0.0.1", 0, [] { return HealthVerdict{}; });
  ASSERT_TRUE(first.ok());
  auto second = HealthServer::Start("127.0.0.1", (*first)->port(), [] { return HealthVerdict{}; });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("--health-listen 127.0.0.1:"), std::string::npos)
      << second.status().message();
}

}  // namespace
}  // namespace ballast::runtime
