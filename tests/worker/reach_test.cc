// Why the coordinator cannot be reached (worker/reach.h), told apart for a
// person: a refused connection, a DNS failure and a connection that times
// out, through the real network stack on loopback; and ballast-worker's log
// and exit when it gives up on such a coordinator.
#include "worker/reach.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace ballast::worker {
namespace {

using std::chrono::milliseconds;

// A loopback socket bound to a free port; listening with `backlog` when >= 0.
struct Socket {
  explicit Socket(int backlog) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
    if (backlog >= 0) listen(fd, backlog);
  }
  ~Socket() { close(fd); }
  int fd = -1;
  uint16_t port = 0;
};

std::string Url(uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

TEST(ReachTest, ARefusedConnectionIsNamedWithItsAddress) {
  Socket bound_not_listening(-1);  // holds the port: nobody else listens there
  const std::string cause = DiagnoseReach(Url(bound_not_listening.port), milliseconds(2000));
  EXPECT_NE(cause.find("connection to 127.0.0.1:" + std::to_string(bound_not_listening.port) +
                       " refused"),
            std::string::npos)
      << cause;
}

TEST(ReachTest, AFailedDnsLookupNamesTheHost) {
  // .invalid never resolves (RFC 2606).
  const std::string cause =
      DiagnoseReach("http://ballast-coordinator.invalid:8080/x", milliseconds(2000));
  EXPECT_EQ(cause.rfind("DNS lookup of 'ballast-coordinator.invalid' failed: ", 0), 0u) << cause;
}

TEST(ReachTest, AConnectionWhoseSynIsDroppedTimesOut) {
  // A listener whose backlog is full and that never accepts: Linux drops
  // further SYNs (tcp_abort_on_overflow is 0), as a firewall that drops
  // packets does.
  Socket full(0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(full.port);
    connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    fillers.push_back(fd);
  }
  usleep(100000);
  const std::string cause = DiagnoseReach(Url(full.port), milliseconds(300));
  for (int fd : fillers) close(fd);
  EXPECT_NE(cause.find("timed out after 0.3 s"), std::string::npos) << cause;
}

TEST(ReachTest, AnOpenConnectionIsNoCause) {
  Socket listening(8);
  EXPECT_EQ(DiagnoseReach(Url(listening.port) + "/v1/jobs", milliseconds(2000)), "");
}

// ballast-worker gives up on a coordinator nobody listens for after
// --give-up-seconds, exits 1, and its log's last line (a pod's termination
// message) names the URL and the cause.
TEST(ReachTest, WorkerThatCannotReachTheCoordinatorSaysWhereAndWhy) {
  Socket bound_not_listening(-1);
  const std::string url = Url(bound_not_listening.port);
  const std::string log = ::testing::TempDir() + "unreachable.log";
  const pid_t pid = fork();
  if (pid == 0) {
    freopen(log.c_str(), "w", stderr);
    freopen(log.c_str(), "a", stdout);
    execl(BALLAST_WORKER_BINARY, BALLAST_WORKER_BINARY, "--coordinator", url.c_str(), "--job", "j",
          "--token", "t", "--name", "w0", "--give-up-seconds", "0.5", nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("cannot reach the coordinator, retrying url=" + url), std::string::npos)
      << text;
  EXPECT_NE(text.find("cannot reach the coordinator at " + url +
                      " for 0.5 s: connection to "
                      "127.0.0.1:" +
                      std::to_string(bound_not_listening.port) + " refused"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace ballast::worker
