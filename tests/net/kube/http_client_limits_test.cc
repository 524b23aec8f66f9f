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

#include "net/kube/http_client.h"
#include "tests/support/loopback_server.h"

namespace ballast::kube {
namespace {

// Answers each connection on a loopback port with 200 and `body`.
class CannedServer : public testing_support::LoopbackServer {
 public:
  explicit CannedServer(const std::string& body) : LoopbackServer(testing_support::HttpOk(body)) {}
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
