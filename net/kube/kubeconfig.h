// ClusterConfig: where the Kubernetes API server is and how to authenticate to
// it, read from a kubeconfig file or from a pod's service account.
//
// Certificates and keys are held as PEM text in memory (read from files or
// decoded from the kubeconfig's base64 `*-data` fields), so the HTTP client
// never reads files after start-up — except the bearer token file, which is
// re-read when it changes because projected service-account tokens rotate.
//
// Thread-safety: ClusterConfig is a value. TokenSource is safe to use from
// several threads.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "core/common/status.h"

namespace ballast::kube {

// A bearer token, either fixed or read from a file that may be rewritten.
class TokenSource {
 public:
  // A fixed token ("" means none).
  static std::shared_ptr<TokenSource> Fixed(std::string token);
  // A token read from `path` now and again whenever its modification time or
  // size changes. Returns Invalid naming the file when it cannot be read.
  static StatusOr<std::shared_ptr<TokenSource>> FromFile(std::string path);

  // The current token ("" when there is none). Keeps the last good token when
  // a re-read fails.
  std::string Token();
  const std::string& path() const { return path_; }

 private:
  TokenSource() = default;
  Status Reload();

  std::mutex mu_;
  std::string token_;
  std::string path_;
  std::filesystem::file_time_type mtime_{};
  uintmax_t size_ = 0;
};

struct ClusterConfig {
  std::string server;    // "https://127.0.0.1:6443", no trailing slash
  std::string ca_pem;    // the CA bundle that signs the server; "" = system roots
  std::string cert_pem;  // client certificate ("" when none)
  std::string key_pem;   // client key ("" when none)
  bool insecure_skip_tls_verify = false;
  std::shared_ptr<TokenSource> token;         // never null; Token() "" means no token
  std::string default_namespace = "default";  // the context's namespace
  std::string source;  // where this came from, for messages: a path or "in-cluster"
};

// Reads a kubeconfig file and resolves `context` (the current-context when
// empty) to its cluster and user. Relative file paths in the kubeconfig are
// relative to its directory. Returns Invalid naming the file, the line and
// the path of the missing or malformed field (e.g. "kc.yaml:12:7:
// users[0].user.client-key-data: not valid base64", "kc.yaml:20:28:
// contexts[1].context.cluster: no entry named 'lab' in clusters"), or
// NotFound when the file does not exist.
StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// Parses kubeconfig text; `file_name` is used in messages and to resolve
// relative paths. LoadKubeconfig reads the file and calls this.
StatusOr<ClusterConfig> ParseKubeconfig(const std::string& text, const std::string& file_name,
                                        const std::string& context = "");

// The kubeconfig path to use: the first entry of $KUBECONFIG (colon-separated),
// else $HOME/.kube/config. Returns NotFound when neither is set.
StatusOr<std::string> DefaultKubeconfigPath();

// The config of a pod: KUBERNETES_SERVICE_HOST and _PORT, and the service
// account's token, ca.crt and namespace under `account_dir`. The token is
// re-read when its file changes. Returns NotFound when not in a cluster (the
// variables are unset), Invalid when a file is missing or unreadable.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
StatusOr<ClusterConfig> InClusterConfig(const std::string& account_dir = kServiceAccountDir);

// The API server's config as the `ballast` commands find it: `kubeconfig`
// when given, else DefaultKubeconfigPath() when that file exists, else the
// pod's service account (InClusterConfig). Returns NotFound naming all three
// when none applies, or the chosen source's error.
StatusOr<ClusterConfig> FindClusterConfig(const std::string& kubeconfig,
                                          const std::string& context);

// Decodes standard base64 (whitespace ignored). Returns Invalid on bad input.
StatusOr<std::string> DecodeBase64(const std::string& text);

}  // namespace ballast::kube
