#include "net/kube/kubeconfig.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/common/json_read.h"
#include "core/config/document.h"
#include "fileio/bounded_file.h"

namespace ballast::kube {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace jr = json_read;

// The text of `path`, the kubeconfig or a file it names (`what`), read
// within what a YAML reader parses (config::YamlLimits): a kubeconfig,
// certificate or token named as /dev/zero or a FIFO is refused, not read
// without end. Invalid naming what it is for and the reader's reason.
StatusOr<std::string> ReadFile(const std::string& path, const std::string& what) {
  auto text = fileio::ReadBoundedFile(path, config::YamlLimits{}.max_bytes);
  if (!text.ok()) {
    return Status::Invalid(fmt::format("cannot read {}: {}", what, text.status().message()));
  }
  return text;
}

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// An object in the kubeconfig and its path ("users[1].user").
struct At {
  const json* node;
  std::string path;
};

// The `inner` object (e.g. "cluster") of the entry named `name` of the list
// `list` (clusters, users, contexts). `named_at` is the path where the name
// was written, "" when it came from the command line; a message about a name
// that no entry has points there.
StatusOr<At> FindNamed(const json& root, std::string_view list, const std::string& name,
                       std::string_view inner, std::string_view named_at) {
  BALLAST_ASSIGN_OR_RETURN(const json* entries, jr::Require(root, "", list));
  if (!entries->is_array()) return jr::Expected(list, "a list of named entries", *entries);
  for (size_t i = 0; i < entries->size(); ++i) {
    const json& entry = (*entries)[i];
    const json* entry_name = jr::Find(entry, "name");
    if (!entry_name || !entry_name->is_string() || entry_name->get<std::string>() != name) {
      continue;
    }
    const std::string path = jr::Element(list, i);
    BALLAST_ASSIGN_OR_RETURN(const json* found, jr::Require(entry, path, inner));
    At at{found, jr::Field(path, inner)};
    if (!found->is_object()) return jr::Expected(at.path, "a map", *found);
    return at;
  }
  if (named_at.empty()) {
    return Status::Invalid(fmt::format("{}: no entry named '{}'", list, jr::Cut(name)));
  }
  return Status::Invalid(
      fmt::format("{}: no entry named '{}' in {}", named_at, jr::Cut(name), list));
}

// The string under `key`, or "" when it is not written; Invalid when it is
// not a string.
StatusOr<std::string> StringOr(const At& map, std::string_view key) {
  const json* value = jr::Find(*map.node, key);
  if (!value) return std::string();
  return jr::String(*value, jr::Field(map.path, key));
}

// `path` as written in the kubeconfig, relative to its folder `base`.
fs::path Resolve(const std::string& path, const fs::path& base) {
  return fs::path(path).is_absolute() ? fs::path(path) : base / path;
}

// Reads PEM text from `<file_key>` (a path) or `<data_key>` (base64).
StatusOr<std::string> ReadPem(const At& map, std::string_view file_key, std::string_view data_key,
                              const fs::path& base) {
  if (const json* data = jr::Find(*map.node, data_key)) {
    const std::string path = jr::Field(map.path, data_key);
    BALLAST_ASSIGN_OR_RETURN(std::string text, jr::String(*data, path));
    auto decoded = DecodeBase64(text);
    if (!decoded.ok()) return Status::Invalid(fmt::format("{}: not valid base64", path));
    if (decoded->find("-----BEGIN") == std::string::npos) {
      return Status::Invalid(fmt::format("{}: not PEM data", path));
    }
    return *decoded;
  }
  if (const json* file = jr::Find(*map.node, file_key)) {
    const std::string path = jr::Field(map.path, file_key);
    BALLAST_ASSIGN_OR_RETURN(std::string written, jr::String(*file, path));
    const fs::path full = Resolve(written, base);
    auto text = ReadFile(full.string(), std::string(file_key));
    if (!text.ok())
      return Status::Invalid(fmt::format("{}: cannot read '{}'", path, full.string()));
    if (text->find("-----BEGIN") == std::string::npos) {
      return Status::Invalid(fmt::format("{}: '{}' is not a PEM file", path, full.string()));
    }
    return text;
  }
  return std::string();
}

Status ReadCluster(const At& cluster, const fs::path& base, ClusterConfig* out) {
  BALLAST_ASSIGN_OR_RETURN(const json* server, jr::Require(*cluster.node, cluster.path, "server"));
  const std::string server_path = jr::Field(cluster.path, "server");
  BALLAST_ASSIGN_OR_RETURN(out->server, jr::String(*server, server_path));
  if (out->server.rfind("https://", 0) != 0 && out->server.rfind("http://", 0) != 0) {
    return jr::Expected(server_path, "an http:// or https:// URL", *server);
  }
  while (!out->server.empty() && out->server.back() == '/') out->server.pop_back();
  BALLAST_ASSIGN_OR_RETURN(
      out->ca_pem, ReadPem(cluster, "certificate-authority", "certificate-authority-data", base));
  if (const json* insecure = jr::Find(*cluster.node, "insecure-skip-tls-verify")) {
    BALLAST_ASSIGN_OR_RETURN(
        out->insecure_skip_tls_verify,
        jr::Bool(*insecure, jr::Field(cluster.path, "insecure-skip-tls-verify")));
  }
  return Status::Ok();
}

Status ReadUser(const At& user, const fs::path& base, ClusterConfig* out) {
  for (std::string_view plugin : {"exec", "auth-provider"}) {
    if (jr::Find(*user.node, plugin)) {
      return Status::Invalid(
          fmt::format("{}: exec and auth-provider credential plugins are not supported",
                      jr::Field(user.path, plugin)));
    }
  }
  BALLAST_ASSIGN_OR_RETURN(out->cert_pem,
                           ReadPem(user, "client-certificate", "client-certificate-data", base));
  BALLAST_ASSIGN_OR_RETURN(out->key_pem, ReadPem(user, "client-key", "client-key-data", base));
  if (out->cert_pem.empty() != out->key_pem.empty()) {
    return Status::Invalid(fmt::format(
        "{}: a client certificate needs a client key and the other way round", user.path));
  }
  BALLAST_ASSIGN_OR_RETURN(std::string token, StringOr(user, "token"));
  out->token = TokenSource::Fixed(std::move(token));
  BALLAST_ASSIGN_OR_RETURN(std::string token_file, StringOr(user, "tokenFile"));
  if (!token_file.empty() && out->token->Token().empty()) {
    auto source = TokenSource::FromFile(Resolve(token_file, base).string());
    if (!source.ok()) {
      return Status::Invalid(
          fmt::format("{}: {}", jr::Field(user.path, "tokenFile"), source.status().message()));
    }
    out->token = *source;
  }
  return Status::Ok();
}

// The config of `context` (the current context when empty) in the
// kubeconfig's tree; Invalid "<path>: ..." naming the field otherwise.
StatusOr<ClusterConfig> ReadKubeconfig(const json& root, const std::string& file_name,
                                       const std::string& context) {
  if (!root.is_object()) {
    return jr::Expected("document", "a kubeconfig (a map with clusters, users and contexts)", root);
  }
  std::string context_name = context;
  std::string_view context_at;  // where the context's name was written
  if (context_name.empty()) {
    BALLAST_ASSIGN_OR_RETURN(const json* current, jr::Require(root, "", "current-context"));
    BALLAST_ASSIGN_OR_RETURN(context_name, jr::String(*current, "current-context"));
    if (context_name.empty()) return jr::Expected("current-context", "a context name", *current);
    context_at = "current-context";
  }
  BALLAST_ASSIGN_OR_RETURN(At ctx,
                           FindNamed(root, "contexts", context_name, "context", context_at));
  BALLAST_ASSIGN_OR_RETURN(const json* cluster_name, jr::Require(*ctx.node, ctx.path, "cluster"));
  const std::string cluster_at = jr::Field(ctx.path, "cluster");
  BALLAST_ASSIGN_OR_RETURN(std::string cluster_key, jr::String(*cluster_name, cluster_at));
  BALLAST_ASSIGN_OR_RETURN(At cluster,
                           FindNamed(root, "clusters", cluster_key, "cluster", cluster_at));

  ClusterConfig config;
  config.source = file_name;
  const fs::path base = fs::path(file_name).parent_path();
  BALLAST_RETURN_IF_ERROR(ReadCluster(cluster, base, &config));
  config.token = TokenSource::Fixed("");
  BALLAST_ASSIGN_OR_RETURN(std::string user_key, StringOr(ctx, "user"));
  if (!user_key.empty()) {
    BALLAST_ASSIGN_OR_RETURN(
        At user, FindNamed(root, "users", user_key, "user", jr::Field(ctx.path, "user")));
    BALLAST_RETURN_IF_ERROR(ReadUser(user, base, &config));
  }
  BALLAST_ASSIGN_OR_RETURN(std::string ns, StringOr(ctx, "namespace"));
  if (!ns.empty()) config.default_namespace = ns;
  return config;
}

}  // namespace

std::shared_ptr<TokenSource> TokenSource::Fixed(std::string token) {
  std::shared_ptr<TokenSource> source(new TokenSource());
  source->token_ = Trim(std::move(token));
  return source;
}

StatusOr<std::shared_ptr<TokenSource>> TokenSource::FromFile(std::string path) {
  std::shared_ptr<TokenSource> source(new TokenSource());
  source->path_ = std::move(path);
  BALLAST_RETURN_IF_ERROR(source->Reload());
  return source;
}

Status TokenSource::Reload() {
  std::error_code error;
  const auto mtime = fs::last_write_time(path_, error);
  const auto size = error ? 0 : fs::file_size(path_, error);
  if (error) return Status::Invalid(fmt::format("{}: cannot read the token file", path_));
  if (mtime == mtime_ && size == size_ && !token_.empty()) return Status::Ok();
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(path_, "the token file"));
  token_ = Trim(std::move(text));
  mtime_ = mtime;
  size_ = size;
  return Status::Ok();
}

std::string TokenSource::Token() {
  std::lock_guard lock(mu_);
  if (!path_.empty()) (void)Reload();  // keeps the last good token on failure
  return token_;
}

StatusOr<ClusterConfig> ParseKubeconfig(const std::string& text, const std::string& file_name,
                                        const std::string& context) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(text, file_name));
  auto config = ReadKubeconfig(document.tree, file_name, context);
  if (!config.ok()) return document.source.Locate(config.status());
  return config;
}

StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  std::error_code error;
  if (!fs::exists(path, error)) return Status::NotFound(fmt::format("{}: no such file", path));
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "the kubeconfig"));
  return ParseKubeconfig(text, path, context);
}

StatusOr<std::string> DefaultKubeconfigPath() {
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string first(env);
    return first.substr(0, first.find(':'));
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (fs::path(home) / ".kube" / "config").string();
  }
  return Status::NotFound("neither KUBECONFIG nor HOME is set");
}

StatusOr<ClusterConfig> FindClusterConfig(const std::string& kubeconfig,
                                          const std::string& context) {
  if (!kubeconfig.empty()) return LoadKubeconfig(kubeconfig, context);
  if (auto path = DefaultKubeconfigPath(); path.ok()) {
    auto config = LoadKubeconfig(*path, context);
    if (config.status().code() != StatusCode::kNotFound) return config;
  }
  auto in_cluster = InClusterConfig();
  if (in_cluster.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(
        "no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not in a pod "
        "(KUBERNETES_SERVICE_HOST is unset)");
  }
  return in_cluster;
}

StatusOr<ClusterConfig> InClusterConfig(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return Status::NotFound("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are unset");
  }
  ClusterConfig config;
  config.source = "in-cluster";
  const std::string h(host);
  config.server =
      fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port);
  const fs::path dir(account_dir);
  BALLAST_ASSIGN_OR_RETURN(config.token, TokenSource::FromFile((dir / "token").string()));
  BALLAST_ASSIGN_OR_RETURN(config.ca_pem, ReadFile((dir / "ca.crt").string(), "the CA"));
  if (auto ns = ReadFile((dir / "namespace").string(), "the namespace"); ns.ok()) {
    if (std::string trimmed = Trim(*ns); !trimmed.empty()) config.default_namespace = trimmed;
  }
  return config;
}

StatusOr<std::string> DecodeBase64(const std::string& text) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const auto index = kAlphabet.find(c);
    if (index == std::string_view::npos || padding) return Status::Invalid("not base64");
    bits = (bits << 6) | static_cast<uint32_t>(index);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  if (count >= 6) return Status::Invalid("not base64: truncated");
  return out;
}

}  // namespace ballast::kube
