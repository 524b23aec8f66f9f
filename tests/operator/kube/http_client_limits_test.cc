// HttpKubeClient against a loopback server that answers every request with one
// canned body: what the API server (or anything posing as it) sends is parsed
// within ParseBoundedJson's limits, and a hostile body is an error, not a crash.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "operator/kube/http_client.h"

namespace ballast::kube {
namespace {

// Answers each connection on a loopback port with 200 and `body`.
class CannedServer {
 public:
  explicit CannedServer(std::string body) : body_(std::move(body)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
        listen(fd_, 8) == 0) {
      port_ = ntohs(address.sin_port);
    }
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    while (!stop_) {
      const int client = accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(client, buffer, sizeof(buffer));
        if (n <= 0) break;
        request.append(buffer, n);
      }
      const std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
          "Content-Length: " +
          std::to_string(body_.size()) + "\r\n\r\n" + body_;
      for (size_t sent = 0; sent < response.size();) {
        const ssize_t n = write(client, response.data() + sent, response.size() - sent);
        if (n <= 0) break;
        sent += n;
      }
      close(client);
    }
  }

  std::string body_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::unique_ptr<HttpKubeClient> ClientOf(const CannedServer& server) {
  ClusterConfig config;
  config.server = server.url();
  config.token = TokenSource::Fixed("");
  config.source = "test";
  auto client = HttpKubeClient::Create(config);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(*client) : nullptr;
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(HttpKubeClientLimits, ObjectWithinTheLimitsIsRead) {
  CannedServer server(R"({"kind": "ConfigMap", "metadata": {"name": "x"}})");
  auto client = ClientOf(server);
  ASSERT_TRUE(client);
  auto object = client->Get(ConfigMaps().In("default").Named("x"));
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  EXPECT_EQ((*object)["metadata"]["name"], "x");
}

TEST(HttpKubeClientLimits, ApiServerBodyNestedSixtyThousandDeepIsUnavailableNotACrash) {
  CannedServer server(R"({"kind": "ConfigMap", "data": )" + Nested(60000) + "}");
  auto client = ClientOf(server);
  ASSERT_TRUE(client);
  auto object = client->Get(ConfigMaps().In("default").Named("x"));
  ASSERT_FALSE(object.ok());
  EXPECT_EQ(object.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(object.status().message().find("nested deeper than 128"), std::string::npos)
      << object.status().message();
}

// Watches config maps on a server that sends `body`; expects the watch to end
// Unavailable, with `message` in its error, before any event.
void ExpectWatchRefused(const std::string& body, const std::string& message) {
  CannedServer server(body);
  auto client = ClientOf(server);
  ASSERT_TRUE(client);
  int events = 0;
  Status status = client->Watch(ConfigMaps().In("default"), WatchOptions{},
                                [&](const WatchEvent&) { return ++events > 0; });
  EXPECT_EQ(events, 0);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(message), std::string::npos) << status.message();
}

TEST(HttpKubeClientLimits, WatchEventNestedSixtyThousandDeepEndsTheWatchNotTheProcess) {
  ExpectWatchRefused(R"({"type": "ADDED", "object": )" + Nested(60000) + "}\n",
                     "watch event: nested deeper than 128");
}

TEST(HttpKubeClientLimits, WatchLineWithoutEndPastSixteenMiBEndsTheWatchBounded) {
  ExpectWatchRefused(
      R"({"type": "ADDED", "object": {"data": ")" + std::string((size_t{16} << 20) + 1, 'x'),
      "a line longer than 16777216 bytes");
}

TEST(HttpKubeClientLimits, WatchEventsSplitAcrossReadsAndALastLineWithoutNewlineAreAllRead) {
  std::string body;
  for (int i = 0; i < 3; ++i) {
    body += R"({"type": "ADDED", "object": {"metadata": {"name": "cm-)" + std::to_string(i) +
            R"(", "annotations": {"pad": ")" + std::string(100000, 'p') + R"("}}}})";
    if (i < 2) body += "\n";
  }
  CannedServer server(body);
  auto client = ClientOf(server);
  ASSERT_TRUE(client);
  std::vector<std::string> names;
  Status status =
      client->Watch(ConfigMaps().In("default"), WatchOptions{}, [&](const WatchEvent& event) {
        names.push_back(event.object["metadata"]["name"]);
        return true;
      });
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"cm-0", "cm-1", "cm-2"}));
}

}  // namespace
}  // namespace ballast::kube
