// Kubeconfig and in-cluster config parsing, the HTTP status mapping and
// resource paths: no network.
#include "net/kube/kubeconfig.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "net/kube/client.h"
#include "net/kube/http_client.h"

namespace ballast::kube {
namespace {

namespace fs = std::filesystem;

const char kCaPem[] = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
const char kCertPem[] = "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n";
const char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n";

std::string Base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(kAlphabet[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(kAlphabet[((val << 8) >> (bits + 8)) & 0x3F]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("kube-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string TwoContexts() {
  return "apiVersion: v1\nkind: Config\ncurrent-context: admin\n"
         "preferences: {}\n"
         "clusters:\n"
         "- name: lab\n  cluster:\n    server: https://10.0.0.1:6443/\n"
         "    certificate-authority-data: " +
         Base64(kCaPem) +
         "\n"
         "- name: other\n  cluster:\n    server: http://127.0.0.1:8080\n"
         "    insecure-skip-tls-verify: true\n"
         "users:\n"
         "- name: admin\n  user:\n    client-certificate-data: " +
         Base64(kCertPem) +
         "\n"
         "    client-key-data: " +
         Base64(kKeyPem) +
         "\n"
         "- name: bot\n  user:\n    token: abc.def\n"
         "contexts:\n"
         "- name: admin\n  context: {cluster: lab, user: admin}\n"
         "- name: bot\n  context: {cluster: other, user: bot, namespace: jobs}\n";
}

TEST(Kubeconfig, CurrentContextWithClientCertificateData) {
  auto config = ParseKubeconfig(TwoContexts(), "kc.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->cert_pem, kCertPem);
  EXPECT_EQ(config->key_pem, kKeyPem);
  EXPECT_EQ(config->token->Token(), "");
  EXPECT_EQ(config->default_namespace, "default");
  EXPECT_FALSE(config->insecure_skip_tls_verify);
}

TEST(Kubeconfig, NamedContextWithTokenAndNamespace) {
  auto config = ParseKubeconfig(TwoContexts(), "kc.yaml", "bot");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "http://127.0.0.1:8080");
  EXPECT_EQ(config->token->Token(), "abc.def");
  EXPECT_EQ(config->default_namespace, "jobs");
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  EXPECT_TRUE(config->cert_pem.empty());
}

TEST(Kubeconfig, FilesRelativeToTheKubeconfig) {
  TempDir dir;
  dir.Write("ca.crt", kCaPem);
  dir.Write("me.crt", kCertPem);
  dir.Write("me.key", kKeyPem);
  dir.Write("token", "tok-1\n");
  const std::string path = dir.Write("config",
                                     "current-context: c\n"
                                     "clusters: [{name: k, cluster: {server: 'https://h:1', "
                                     "certificate-authority: ca.crt}}]\n"
                                     "users: [{name: u, user: {client-certificate: me.crt, "
                                     "client-key: me.key, tokenFile: token}}]\n"
                                     "contexts: [{name: c, context: {cluster: k, user: u}}]\n");
  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->cert_pem, kCertPem);
  EXPECT_EQ(config->key_pem, kKeyPem);
  EXPECT_EQ(config->token->Token(), "tok-1");
}

struct BadCase {
  const char* name;
  std::string text;
  const char* context;
  int line;              // the line the message names
  std::string expected;  // a part of the message: the field's path and what is wrong
};

TEST(Kubeconfig, ErrorsNameTheFileTheLineAndTheField) {
  const std::string head = "clusters: [{name: k, cluster: {server: 'https://h:1'}}]\n";
  const std::string user_context = "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
  const std::vector<BadCase> cases = {
      {"no current context", head, "", 1, "current-context: missing"},
      {"unknown context", head + "contexts: [{name: c, context: {cluster: k}}]\n", "x", 2,
       "contexts: no entry named 'x'"},
      {"unknown current context",
       head + "current-context: x\ncontexts: [{name: c, context: {cluster: k}}]\n", "", 2,
       "current-context: no entry named 'x' in contexts"},
      {"unknown cluster", head + "contexts: [{name: c, context: {cluster: z}}]\n", "c", 2,
       "contexts[0].context.cluster: no entry named 'z' in clusters"},
      {"no server",
       "clusters: [{name: k, cluster: {}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "c", 1, "clusters[0].cluster.server: missing"},
      {"bad server",
       "clusters: [{name: k, cluster: {server: 'h:1'}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "c", 1, "clusters[0].cluster.server: expected an http:// or https:// URL, got \"h:1\""},
      {"insecure not a boolean",
       "clusters: [{name: k, cluster: {server: 'https://h:1', insecure-skip-tls-verify: 'yes'}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "c", 1, "clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got \"yes\""},
      {"bad base64",
       head +
           "users: [{name: u, user: {client-certificate-data: '!!', client-key-data: 'QQ=='}}]\n" +
           user_context,
       "c", 2, "users[0].user.client-certificate-data: not valid base64"},
      {"cert without key",
       head + "users: [{name: u, user: {client-certificate-data: '" + Base64(kCertPem) + "'}}]\n" +
           user_context,
       "c", 2, "users[0].user: a client certificate needs a client key"},
      {"token not a string", head + "users: [{name: u, user: {token: [a]}}]\n" + user_context, "c",
       2, "users[0].user.token: expected a string, got [\"a\"]"},
      {"unknown user", head + "users: [{name: v, user: {}}]\n" + user_context, "c", 3,
       "contexts[0].context.user: no entry named 'u' in users"},
      {"missing CA file",
       "clusters: [{name: k, cluster: {server: 'https://h:1', certificate-authority: /nope.crt}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "c", 1, "clusters[0].cluster.certificate-authority: cannot read '/nope.crt'"},
      {"exec plugin", head + "users: [{name: u, user: {exec: {command: aws}}}]\n" + user_context,
       "c", 2, "users[0].user.exec: exec and auth-provider credential plugins are not supported"},
      {"not a map", "- a\n- b\n", "", 1, "document: expected a kubeconfig"},
      {"not YAML", head + "contexts: [a\n", "c", 3, "not valid YAML"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto config = ParseKubeconfig(c.text, "bad.yaml", c.context);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), StatusCode::kInvalid);
    const std::string where = "bad.yaml:" + std::to_string(c.line) + ":";
    EXPECT_EQ(config.status().message().rfind(where, 0), 0u)
        << "does not start with " << where << ": " << config.status().message();
    EXPECT_NE(config.status().message().find(c.expected), std::string::npos)
        << config.status().message();
  }
}

TEST(Kubeconfig, MissingFileIsNotFound) {
  auto config = LoadKubeconfig("/no/such/kubeconfig");
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find("/no/such/kubeconfig"), std::string::npos);
}

TEST(Kubeconfig, DefaultPathPrefersKubeconfigVariable) {
  const char* saved = std::getenv("KUBECONFIG");
  const std::string saved_value = saved ? saved : "";
  const std::string saved_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("KUBECONFIG", "/a/config:/b/config", 1);
  EXPECT_EQ(DefaultKubeconfigPath().value(), "/a/config");
  ::unsetenv("KUBECONFIG");
  ::setenv("HOME", "/home/me", 1);
  EXPECT_EQ(DefaultKubeconfigPath().value(), "/home/me/.kube/config");
  if (saved) ::setenv("KUBECONFIG", saved_value.c_str(), 1);
  ::setenv("HOME", saved_home.c_str(), 1);
}

TEST(InClusterConfig, ReadsServiceAccountAndRereadsRotatedToken) {
  TempDir dir;
  dir.Write("token", "first");
  dir.Write("ca.crt", kCaPem);
  dir.Write("namespace", "ballast-system\n");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.43.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = InClusterConfig(dir.path().string());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "https://10.43.0.1:443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->default_namespace, "ballast-system");
  EXPECT_EQ(config->token->Token(), "first");
  // The kubelet rotates a projected token by replacing the file.
  dir.Write("token.new", "second-token");
  fs::rename(dir.path() / "token.new", dir.path() / "token");
  EXPECT_EQ(config->token->Token(), "second-token");
  // A token file that disappears keeps the last good token.
  fs::remove(dir.path() / "token");
  EXPECT_EQ(config->token->Token(), "second-token");

  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig(dir.path().string()).status().code(), StatusCode::kNotFound);
}

TEST(FindClusterConfig, AnExplicitFileWinsThenTheDefaultFileThenThePod) {
  const char* saved = std::getenv("KUBECONFIG");
  const std::string saved_value = saved ? saved : "";
  // An explicit file is read even when it is missing: its error, not a fallback.
  ::setenv("KUBECONFIG", "/no/such/default", 1);
  auto explicit_missing = FindClusterConfig("/no/such/explicit", "");
  EXPECT_EQ(explicit_missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(explicit_missing.status().message().find("/no/such/explicit"), std::string::npos);
  // No default file and not in a pod: one message that names every source.
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto nothing = FindClusterConfig("", "");
  EXPECT_EQ(nothing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(nothing.status().message().find("--kubeconfig, $KUBECONFIG, ~/.kube/config"),
            std::string::npos)
      << nothing.status().message();
  // In a pod without a default file: the service account (here an empty one).
  ::setenv("KUBERNETES_SERVICE_HOST", "10.43.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  EXPECT_NE(FindClusterConfig("", "").status().message().find("token"), std::string::npos);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  if (saved)
    ::setenv("KUBECONFIG", saved_value.c_str(), 1);
  else
    ::unsetenv("KUBECONFIG");
}

TEST(InClusterConfig, MissingTokenIsInvalid) {
  TempDir dir;
  ::setenv("KUBERNETES_SERVICE_HOST", "10.43.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = InClusterConfig(dir.path().string());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalid);
  EXPECT_NE(config.status().message().find("token"), std::string::npos);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
}

TEST(Base64, DecodesAndRejects) {
  EXPECT_EQ(DecodeBase64("aGVsbG8=").value(), "hello");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8h").value(), "hello!");
  EXPECT_FALSE(DecodeBase64("a$b=").ok());
}

TEST(HttpKubeClient, RejectsKeysThatDoNotParse) {
  ClusterConfig config;
  config.server = "https://127.0.0.1:1";
  config.source = "kc.yaml";
  config.cert_pem = kCertPem;
  config.key_pem = kKeyPem;
  auto client = HttpKubeClient::Create(config);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalid);
  EXPECT_NE(client.status().message().find("kc.yaml"), std::string::npos);
}

// 401 and 403 are retried with backoff, not permanent: a rotated token, an
// RBAC binding that has not propagated yet or an exhausted ResourceQuota
// ("exceeded quota", a 403) must not fail a job for good.
TEST(StatusFromHttp, MapsCodesAndKeepsTheApiServersMessage) {
  const std::string body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"the message","code":0})";
  const std::vector<std::pair<int, StatusCode>> table = {
      {404, StatusCode::kNotFound},    {409, StatusCode::kConflict},
      {410, StatusCode::kGone},        {400, StatusCode::kInvalid},
      {422, StatusCode::kInvalid},     {401, StatusCode::kUnavailable},
      {403, StatusCode::kUnavailable}, {429, StatusCode::kUnavailable},
      {500, StatusCode::kUnavailable}, {503, StatusCode::kUnavailable},
      {504, StatusCode::kUnavailable}, {200, StatusCode::kOk},
  };
  for (const auto& [http, code] : table) {
    Status status = StatusFromHttp(http, body, "GET /x");
    EXPECT_EQ(status.code(), code) << http;
    if (http == 404 || http == 422) {
      EXPECT_EQ(status.message(), "the message");
    }
  }
  EXPECT_NE(StatusFromHttp(403, body, "GET /x").message().find("forbidden"), std::string::npos);
  EXPECT_NE(StatusFromHttp(502, "bad gateway", "GET /x").message().find("GET /x: HTTP 502"),
            std::string::npos);
}

TEST(ResourceRef, Paths) {
  EXPECT_EQ(ConfigMaps().In("ns").Named("a").Path(), "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(ConfigMaps().Path(), "/api/v1/configmaps");
  EXPECT_EQ(Namespaces().In("ignored").Named("x").Path(), "/api/v1/namespaces/x");
  EXPECT_EQ(Leases().In("kube-system").Path(),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
}

TEST(RetryOnConflict, RetriesOnlyConflicts) {
  int calls = 0;
  Status status = RetryOnConflict([&] {
    ++calls;
    return calls < 3 ? Status::Conflict("stale") : Status::Ok();
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 3);
  calls = 0;
  status = RetryOnConflict([&] {
    ++calls;
    return Status::Invalid("no");
  });
  EXPECT_EQ(calls, 1);
  calls = 0;
  status = RetryOnConflict(
      [&] {
        ++calls;
        return Status::Conflict("always");
      },
      4);
  EXPECT_EQ(status.code(), StatusCode::kConflict);
  EXPECT_EQ(calls, 4);
}

TEST(Cancellation, WakesWaitersAndRunsCallbacks) {
  Cancellation cancel;
  int ran = 0;
  cancel.OnCancel([&] { ++ran; });
  const uint64_t gone = cancel.OnCancel([&] { ran += 100; });
  cancel.Unregister(gone);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.Cancel();
  });
  EXPECT_TRUE(cancel.WaitFor(std::chrono::seconds(10)));
  canceller.join();
  cancel.Cancel();
  EXPECT_EQ(ran, 1);
  cancel.OnCancel([&] { ++ran; });  // runs at once
  EXPECT_EQ(ran, 2);
}

}  // namespace
}  // namespace ballast::kube
