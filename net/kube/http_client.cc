// The one adapter between the Kubernetes client and cpprestsdk: every
// cpprestsdk, pplx and boost::asio exception is caught here and converted.
#include "net/kube/http_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <utility>

// After the standard headers: boost::asio, under cpprestsdk, needs <utility> first.
#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>

#include <boost/asio/ssl.hpp>

#include "core/common/bounded_json.h"
#include "core/common/utf8.h"
#include "net/kube/line_splitter.h"
#include "net/kube/tls.h"

namespace ballast::kube {
namespace {

using web::http::methods;
using web::http::client::http_client;
using web::http::client::http_client_config;

enum Verb { kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete, kVerbCount };
constexpr std::array<const char*, kVerbCount> kVerbNames = {"get",    "list",  "watch", "create",
                                                            "update", "patch", "delete"};

// What the API server may send, checked before parsing (ParseBoundedJson).
// A body can be a whole list, unpaged: 5,000 nodes or pods at ~20 KiB of JSON
// each (managedFields included) is ~100 MiB, so 256 MiB leaves room. A watch
// line is one object, which etcd caps at 1.5 MiB by default; 16 MiB allows a
// raised cap. 128 levels: objects nest ~15 deep, CRDs' schemas ~40 (each
// property adds two); beyond that only a hostile server or proxy.
constexpr JsonLimits kBodyLimits{.max_bytes = size_t{256} << 20, .max_depth = 128};
constexpr JsonLimits kWatchEventLimits{.max_bytes = size_t{16} << 20, .max_depth = 128};
// A watch stream is read this many bytes at a time.
constexpr size_t kWatchReadChunk = 64 * 1024;

// The config's TLS on a fresh context, as each connection will have it.
Status CheckTls(const ClusterConfig& config) {
  try {
    boost::asio::ssl::context ctx(boost::asio::ssl::context::sslv23);
    return ConfigureTls(ctx, config);
  } catch (const std::exception& e) {
    return Status::Invalid(fmt::format("{}: no TLS context: {}", config.source, e.what()));
  }
}

std::string Encode(const std::string& value) { return web::uri::encode_data_string(value); }

// "?a=1&b=2" from the non-empty pairs, or "".
std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string query;
  for (const auto& [key, value] : params) {
    if (value.empty()) continue;
    query += (query.empty() ? "?" : "&") + key + "=" + Encode(value);
  }
  return query;
}

struct Request {
  Verb verb;
  web::http::method method;
  std::string path;  // with the query
  std::optional<std::string> body;
  std::string content_type = "application/json";
};

}  // namespace

struct HttpKubeClient::Impl {
  ClusterConfig config;
  HttpClientOptions options;
  std::unique_ptr<http_client> client;
  std::array<std::atomic<uint64_t>, kVerbCount> counts{};

  http_client_config MakeConfig(std::chrono::seconds timeout) const {
    http_client_config cfg;
    cfg.set_timeout(timeout);
    cfg.set_validate_certificates(!config.insecure_skip_tls_verify);
    ClusterConfig tls = config;
    // Create checked that this succeeds; cpprestsdk fails the request on a throw.
    cfg.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) {
      if (Status set = ConfigureTls(ctx, tls); !set.ok()) throw std::runtime_error(set.message());
    });
    return cfg;
  }

  web::http::http_request MakeRequest(const Request& request) {
    counts[request.verb].fetch_add(1, std::memory_order_relaxed);
    web::http::http_request http(request.method);
    http.set_request_uri(request.path);
    http.headers().add("Accept", "application/json");
    http.headers().add("User-Agent", options.user_agent);
    if (std::string token = config.token->Token(); !token.empty()) {
      http.headers().add("Authorization", "Bearer " + token);
    }
    if (request.body) http.set_body(*request.body, request.content_type);
    return http;
  }

  // Sends `request`; returns the answer whatever its code, Unavailable when
  // none came.
  StatusOr<HttpAnswer> SendForAnswer(const Request& request) {
    const std::string what = fmt::format("{} {}", request.method, request.path);
    try {
      const auto start = std::chrono::steady_clock::now();
      web::http::http_response response = client->request(MakeRequest(request)).get();
      std::string body = response.extract_utf8string(true).get();
      spdlog::debug(
          "api request={} code={} ms={:.1f}", what, response.status_code(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      return HttpAnswer{response.status_code(), std::move(body)};
    } catch (const std::exception& e) {
      return Status::Unavailable(fmt::format("{}: {}", what, e.what()));
    }
  }

  // Sends `request`; returns the body of a 2xx response, else the mapped error.
  StatusOr<std::string> Send(const Request& request) {
    BALLAST_ASSIGN_OR_RETURN(HttpAnswer answer, SendForAnswer(request));
    Status status = StatusFromHttp(answer.code, answer.body,
                                   fmt::format("{} {}", request.method, request.path));
    if (!status.ok()) return status;
    return std::move(answer.body);
  }

  StatusOr<nlohmann::json> SendJson(const Request& request) {
    BALLAST_ASSIGN_OR_RETURN(std::string body, Send(request));
    auto json =
        ParseBoundedJson(body, fmt::format("{} {}", request.method, request.path), kBodyLimits);
    if (!json.ok()) {
      return Status::Unavailable(
          fmt::format("the API server sent no usable JSON: {}", json.status().message()));
    }
    return json;
  }

  Status StreamWatch(const Request& request, int timeout_seconds, const WatchCallback& on_event,
                     Cancellation* cancel, const std::function<void()>& on_open);
};

namespace {

std::optional<WatchEventType> ParseEventType(const std::string& type) {
  if (type == "ADDED") return WatchEventType::kAdded;
  if (type == "MODIFIED") return WatchEventType::kModified;
  if (type == "DELETED") return WatchEventType::kDeleted;
  if (type == "BOOKMARK") return WatchEventType::kBookmark;
  if (type == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

// Parses one line of a watch stream; Unavailable when it is not an event.
StatusOr<WatchEvent> ParseEvent(const std::string& line, const std::string& what) {
  auto parsed = ParseBoundedJson(line, what + " watch event", kWatchEventLimits);
  if (!parsed.ok()) return Status::Unavailable(parsed.status().message());
  nlohmann::json& json = *parsed;
  if (!json.is_object() || !json.contains("type") || !json["type"].is_string()) {
    return Status::Unavailable(fmt::format("{}: not a watch event: {}", what, line.substr(0, 200)));
  }
  auto type = ParseEventType(json["type"].get<std::string>());
  if (!type) return Status::Unavailable(fmt::format("{}: unknown event type", what));
  WatchEvent event;
  event.type = *type;
  event.object = json.value("object", nlohmann::json::object());
  if (event.type == WatchEventType::kError) event.error = StatusFromApiStatus(event.object, what);
  return event;
}

// Runs `on_cancel` when `cancel` fires, for the lifetime of this object.
class CancelLink {
 public:
  CancelLink(Cancellation* cancel, std::function<void()> on_cancel) : cancel_(cancel) {
    if (cancel_) id_ = cancel_->OnCancel(std::move(on_cancel));
  }
  ~CancelLink() {
    if (cancel_ && id_) cancel_->Unregister(id_);
  }
  CancelLink(const CancelLink&) = delete;
  CancelLink& operator=(const CancelLink&) = delete;

 private:
  Cancellation* cancel_;
  uint64_t id_ = 0;
};

// Waits for at least one byte of `buffer`, then returns every byte it has
// (up to kWatchReadChunk) without waiting for more; empty at the end of the
// stream. (istream::read would wait until the whole count arrived, which a
// watch that sends one small event a minute never does.)
std::string ReadAvailable(concurrency::streams::streambuf<uint8_t>& buffer) {
  const auto first = buffer.bumpc().get();
  if (first == concurrency::streams::streambuf<uint8_t>::traits::eof()) return {};
  std::string data(1, static_cast<char>(first));
  const size_t more = std::min(buffer.in_avail(), kWatchReadChunk - 1);
  if (more > 0) {
    data.resize(1 + more);
    const size_t got = buffer.getn(reinterpret_cast<uint8_t*>(data.data() + 1), more).get();
    data.resize(1 + got);
  }
  return data;
}

}  // namespace

Status HttpKubeClient::Impl::StreamWatch(const Request& request, int timeout_seconds,
                                         const WatchCallback& on_event, Cancellation* cancel,
                                         const std::function<void()>& on_open) {
  const std::string what = fmt::format("WATCH {}", request.path);
  pplx::cancellation_token_source source;
  CancelLink link(cancel, [source] { source.cancel(); });
  if (cancel && cancel->cancelled()) return Status::Ok();
  try {
    http_client watch_client(
        config.server, MakeConfig(options.request_timeout + std::chrono::seconds(timeout_seconds)));
    auto response = watch_client.request(MakeRequest(request), source.get_token()).get();
    if (response.status_code() != web::http::status_codes::OK) {
      return StatusFromHttp(response.status_code(), response.extract_utf8string(true).get(), what);
    }
    if (on_open) on_open();
    auto body = response.body();
    // Read what has arrived, not read_line: a line without end would grow
    // unbounded; LineSplitter holds at most one event.
    LineSplitter lines(kWatchEventLimits.max_bytes);
    Status parse_status;
    auto on_line = [&](const std::string& line) {
      auto event = ParseEvent(line, what);
      if (!event.ok()) {
        parse_status = event.status();
        return false;
      }
      return on_event(*event);
    };
    auto buffer = body.streambuf();
    while (true) {
      std::string data = ReadAvailable(buffer);
      // At the end, a last line without its newline still counts.
      const bool eof = data.empty();
      if (eof) data = "\n";
      bool stopped = false;
      BALLAST_RETURN_IF_ERROR(lines.Feed(data, on_line, what, &stopped));
      if (eof && !stopped) return Status::Ok();
      if (stopped) {
        source.cancel();
        return parse_status;
      }
    }
  } catch (const std::exception& e) {
    if (cancel && cancel->cancelled()) return Status::Ok();
    return Status::Unavailable(fmt::format("{}: {}", what, e.what()));
  }
}

HttpKubeClient::HttpKubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpKubeClient::~HttpKubeClient() = default;

StatusOr<std::unique_ptr<HttpKubeClient>> HttpKubeClient::Create(const ClusterConfig& config,
                                                                 const HttpClientOptions& options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status::Invalid(
        fmt::format("{}: server '{}' is not an http(s) URL", config.source, config.server));
  }
  BALLAST_RETURN_IF_ERROR(CheckTls(config));
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (!impl->config.token) impl->config.token = TokenSource::Fixed("");
  impl->options = options;
  try {
    impl->client =
        std::make_unique<http_client>(config.server, impl->MakeConfig(options.request_timeout));
  } catch (const std::exception& e) {
    return Status::Invalid(
        fmt::format("{}: server '{}': {}", config.source, config.server, e.what()));
  }
  return std::unique_ptr<HttpKubeClient>(new HttpKubeClient(std::move(impl)));
}

StatusOr<nlohmann::json> HttpKubeClient::Get(const ResourceRef& ref) {
  return impl_->SendJson({kGet, methods::GET, ref.Path(), std::nullopt});
}

StatusOr<HttpAnswer> HttpKubeClient::GetAnswer(const std::string& path, size_t max_bytes) {
  BALLAST_ASSIGN_OR_RETURN(HttpAnswer answer,
                           impl_->SendForAnswer({kGet, methods::GET, path, std::nullopt}));
  if (answer.body.size() > max_bytes) {
    return Status::Unavailable(fmt::format("GET {}: the answer is {} bytes, more than the {} read",
                                           path, answer.body.size(), max_bytes));
  }
  return answer;
}

StatusOr<std::string> HttpKubeClient::GetText(const std::string& path, size_t max_bytes) {
  BALLAST_ASSIGN_OR_RETURN(std::string body, impl_->Send({kGet, methods::GET, path, std::nullopt}));
  if (body.size() > max_bytes) {
    return Status::Unavailable(fmt::format("GET {}: the answer is {} bytes, more than the {} read",
                                           path, body.size(), max_bytes));
  }
  return body;
}

StatusOr<ObjectList> HttpKubeClient::List(const ResourceRef& ref, const ListOptions& options) {
  ObjectList list;
  std::string continue_token;
  do {
    const std::string path =
        ref.Path() + Query({{"labelSelector", options.label_selector},
                            {"fieldSelector", options.field_selector},
                            {"limit", options.limit > 0 ? std::to_string(options.limit) : ""},
                            {"continue", continue_token}});
    BALLAST_ASSIGN_OR_RETURN(nlohmann::json page,
                             impl_->SendJson({kList, methods::GET, path, std::nullopt}));
    for (auto& item : page.value("items", nlohmann::json::array())) {
      list.items.push_back(std::move(item));
    }
    const auto meta = page.value("metadata", nlohmann::json::object());
    list.resource_version = meta.value("resourceVersion", "");
    continue_token = meta.value("continue", "");
  } while (!continue_token.empty());
  return list;
}

StatusOr<nlohmann::json> HttpKubeClient::Create(const ResourceRef& ref,
                                                const nlohmann::json& object) {
  return impl_->SendJson({kCreate, methods::POST, ref.Named("").Path(), DumpJson(object)});
}

StatusOr<nlohmann::json> HttpKubeClient::Update(const ResourceRef& ref,
                                                const nlohmann::json& object) {
  return impl_->SendJson({kUpdate, methods::PUT, ref.Path(), DumpJson(object)});
}

StatusOr<nlohmann::json> HttpKubeClient::MergePatch(const ResourceRef& ref,
                                                    const nlohmann::json& patch) {
  return impl_->SendJson(
      {kPatch, methods::PATCH, ref.Path(), DumpJson(patch), "application/merge-patch+json"});
}

StatusOr<nlohmann::json> HttpKubeClient::Apply(const ResourceRef& ref, const nlohmann::json& object,
                                               const ApplyOptions& options) {
  const std::string path =
      ref.Path() + (options.subresource.empty() ? "" : "/" + options.subresource) +
      Query({{"fieldManager", options.field_manager}, {"force", options.force ? "true" : ""}});
  // JSON is YAML: the apply content type takes either.
  return impl_->SendJson(
      {kPatch, methods::PATCH, path, DumpJson(object), "application/apply-patch+yaml"});
}

StatusOr<nlohmann::json> HttpKubeClient::PatchStatus(const ResourceRef& ref,
                                                     const nlohmann::json& patch) {
  return impl_->SendJson({kPatch, methods::PATCH, ref.Path() + "/status", DumpJson(patch),
                          "application/merge-patch+json"});
}

Status HttpKubeClient::Delete(const ResourceRef& ref, const DeleteOptions& options) {
  nlohmann::json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!options.propagation_policy.empty()) body["propagationPolicy"] = options.propagation_policy;
  if (!options.precondition_uid.empty()) {
    body["preconditions"]["uid"] = options.precondition_uid;
  }
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  return impl_->Send({kDelete, methods::DEL, ref.Path(), DumpJson(body)}).status();
}

Status HttpKubeClient::Watch(const ResourceRef& ref, const WatchOptions& options,
                             const WatchCallback& on_event, Cancellation* cancel) {
  std::string field_selector = options.field_selector;
  if (!ref.name.empty()) {
    field_selector += (field_selector.empty() ? "" : ",") + ("metadata.name=" + ref.name);
  }
  const std::string path =
      ref.Named("").Path() +
      Query({{"watch", "1"},
             {"allowWatchBookmarks", options.allow_bookmarks ? "true" : ""},
             {"resourceVersion", options.resource_version},
             {"timeoutSeconds",
              options.timeout_seconds > 0 ? std::to_string(options.timeout_seconds) : ""},
             {"labelSelector", options.label_selector},
             {"fieldSelector", field_selector}});
  return impl_->StreamWatch({kWatch, methods::GET, path, std::nullopt}, options.timeout_seconds,
                            on_event, cancel, options.on_open);
}

std::map<std::string, uint64_t> HttpKubeClient::RequestCounts() const {
  std::map<std::string, uint64_t> counts;
  for (int verb = 0; verb < kVerbCount; ++verb) {
    counts[kVerbNames[verb]] = impl_->counts[verb].load(std::memory_order_relaxed);
  }
  return counts;
}

uint64_t HttpKubeClient::TotalRequests() const {
  uint64_t total = 0;
  for (const auto& count : impl_->counts) total += count.load(std::memory_order_relaxed);
  return total;
}

}  // namespace ballast::kube
