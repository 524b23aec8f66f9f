#include "net/kube/kubeconfig.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/config/yaml_node.h"

namespace ballast::kube {
namespace {

using config::YamlNode;
namespace fs = std::filesystem;

StatusOr<std::string> ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(fmt::format("{}: cannot read {}", path, what));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// The entry of a named list (clusters, users, contexts) whose name is `name`;
// returns its `inner` map (e.g. "cluster").
StatusOr<YamlNode> FindNamed(const YamlNode& root, std::string_view list, const std::string& name,
                             std::string_view inner) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode entries, root.Require(list));
  for (const YamlNode& entry : entries.Elements()) {
    auto entry_name = entry.Get("name");
    if (!entry_name) continue;
    auto text = entry_name->AsString();
    if (!text.ok() || *text != name) continue;
    return entry.Require(inner);
  }
  return entries.Fail(fmt::format("no entry named '{}'", name));
}

std::string StringOr(const YamlNode& map, std::string_view key) {
  auto child = map.Get(key);
  if (!child) return "";
  auto text = child->AsString();
  return text.ok() ? *text : "";
}

// Reads PEM text from `<file_key>` (a path) or `<data_key>` (base64).
StatusOr<std::string> ReadPem(const YamlNode& map, std::string_view file_key,
                              std::string_view data_key, const fs::path& base) {
  if (auto data = map.Get(data_key)) {
    BALLAST_ASSIGN_OR_RETURN(std::string text, data->AsString());
    auto decoded = DecodeBase64(text);
    if (!decoded.ok()) return data->Fail("not valid base64");
    if (decoded->find("-----BEGIN") == std::string::npos) return data->Fail("not PEM data");
    return *decoded;
  }
  if (auto file = map.Get(file_key)) {
    BALLAST_ASSIGN_OR_RETURN(std::string path, file->AsString());
    const fs::path full = fs::path(path).is_absolute() ? fs::path(path) : base / path;
    auto text = ReadFile(full.string(), std::string(file_key));
    if (!text.ok()) return file->Fail(fmt::format("cannot read '{}'", full.string()));
    if (text->find("-----BEGIN") == std::string::npos) return file->Fail("not a PEM file");
    return text;
  }
  return std::string();
}

Status ReadCluster(const YamlNode& cluster, const fs::path& base, ClusterConfig* out) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode server, cluster.Require("server"));
  BALLAST_ASSIGN_OR_RETURN(out->server, server.AsString());
  if (out->server.rfind("https://", 0) != 0 && out->server.rfind("http://", 0) != 0) {
    return server.Error("an http:// or https:// URL");
  }
  while (!out->server.empty() && out->server.back() == '/') out->server.pop_back();
  BALLAST_ASSIGN_OR_RETURN(
      out->ca_pem, ReadPem(cluster, "certificate-authority", "certificate-authority-data", base));
  if (auto insecure = cluster.Get("insecure-skip-tls-verify")) {
    BALLAST_ASSIGN_OR_RETURN(out->insecure_skip_tls_verify, insecure->AsBool());
  }
  return Status::Ok();
}

Status ReadUser(const YamlNode& user, const fs::path& base, ClusterConfig* out) {
  if (user.Get("exec") || user.Get("auth-provider")) {
    return user.Fail("exec and auth-provider credential plugins are not supported");
  }
  BALLAST_ASSIGN_OR_RETURN(out->cert_pem,
                           ReadPem(user, "client-certificate", "client-certificate-data", base));
  BALLAST_ASSIGN_OR_RETURN(out->key_pem, ReadPem(user, "client-key", "client-key-data", base));
  if (out->cert_pem.empty() != out->key_pem.empty()) {
    return user.Fail("a client certificate needs a client key and the other way round");
  }
  out->token = TokenSource::Fixed(StringOr(user, "token"));
  if (auto file = user.Get("tokenFile"); file && out->token->Token().empty()) {
    BALLAST_ASSIGN_OR_RETURN(std::string path, file->AsString());
    const fs::path full = fs::path(path).is_absolute() ? fs::path(path) : base / path;
    auto source = TokenSource::FromFile(full.string());
    if (!source.ok()) return file->Fail(source.status().message());
    out->token = *source;
  }
  return Status::Ok();
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
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(text, file_name));
  std::string context_name = context;
  if (context_name.empty()) {
    BALLAST_ASSIGN_OR_RETURN(YamlNode current, root.Require("current-context"));
    BALLAST_ASSIGN_OR_RETURN(context_name, current.AsString());
    if (context_name.empty()) return current.Error("a context name");
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode ctx, FindNamed(root, "contexts", context_name, "context"));
  BALLAST_ASSIGN_OR_RETURN(YamlNode cluster_name, ctx.Require("cluster"));
  BALLAST_ASSIGN_OR_RETURN(std::string cluster_key, cluster_name.AsString());
  BALLAST_ASSIGN_OR_RETURN(YamlNode cluster, FindNamed(root, "clusters", cluster_key, "cluster"));

  ClusterConfig config;
  config.source = file_name;
  const fs::path base = fs::path(file_name).parent_path();
  BALLAST_RETURN_IF_ERROR(ReadCluster(cluster, base, &config));
  config.token = TokenSource::Fixed("");
  if (std::string user_key = StringOr(ctx, "user"); !user_key.empty()) {
    BALLAST_ASSIGN_OR_RETURN(YamlNode user, FindNamed(root, "users", user_key, "user"));
    BALLAST_RETURN_IF_ERROR(ReadUser(user, base, &config));
  }
  if (std::string ns = StringOr(ctx, "namespace"); !ns.empty()) config.default_namespace = ns;
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
