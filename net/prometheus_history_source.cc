#include "net/prometheus_history_source.h"

#include <cpprest/http_client.h>
#include <cpprest/rawptrstream.h>
#include <fmt/format.h>
#include <pplx/pplxtasks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <mutex>
#include <optional>
#include <set>

namespace ballast::net {

namespace {

using web::http::client::http_client;
using web::http::client::http_client_config;

constexpr size_t kChunk = 64 << 10;

// One request's outcome, set once by whichever of the answer and the error
// comes first (the caller may have stopped waiting).
struct Outcome {
  std::promise<StatusOr<std::string>> promise;
  std::once_flag once;
  void Set(StatusOr<std::string> value) {
    std::call_once(once, [&] { promise.set_value(std::move(value)); });
  }
};

// The body of `response`, read chunk by chunk: Unavailable past `max_bytes`.
StatusOr<std::string> BoundedBody(web::http::http_response& response, size_t max_bytes) {
  if (response.headers().content_length() > max_bytes) {
    return Status::Unavailable(fmt::format("an answer of {} bytes, more than the {} allowed",
                                           response.headers().content_length(), max_bytes));
  }
  std::string body;
  std::vector<uint8_t> chunk(kChunk);
  auto stream = response.body();
  while (true) {
    const size_t got = stream.streambuf().getn(chunk.data(), chunk.size()).get();
    if (got == 0) break;
    body.append(reinterpret_cast<const char*>(chunk.data()), got);
    if (body.size() > max_bytes) {
      return Status::Unavailable(
          fmt::format("an answer longer than the {} bytes allowed", max_bytes));
    }
  }
  return body;
}

}  // namespace

struct PrometheusHistory::Impl {
  PrometheusHistoryOptions options;
  std::shared_ptr<http_client> client;
  std::mutex mu;  // guards the last failure
  std::optional<std::chrono::steady_clock::time_point> failed_at;
  std::string failure;

  // The trouble of a failure less than retry_after ago, or "".
  std::string RecentFailure(std::chrono::steady_clock::time_point now) {
    std::lock_guard lock(mu);
    if (!failed_at || now - *failed_at >= options.retry_after) return "";
    return fmt::format("{} ({:.0f} s ago; not asked again for {} s)", failure,
                       std::chrono::duration<double>(now - *failed_at).count(),
                       options.retry_after.count() / 1000);
  }
  void Remember(const Status& status) {
    std::lock_guard lock(mu);
    if (status.ok()) {
      failed_at.reset();
    } else {
      failed_at = std::chrono::steady_clock::now();
      failure = status.message();
    }
  }
};

StatusOr<std::unique_ptr<PrometheusHistory>> PrometheusHistory::Create(
    PrometheusHistoryOptions options) {
  auto impl = std::make_unique<Impl>();
  try {
    web::uri uri(options.url);
    if ((uri.scheme() != "http" && uri.scheme() != "https") || uri.host().empty()) {
      return Status::Invalid(
          fmt::format("{}: expected an http(s) URL, got \"{}\"", options.flag, options.url));
    }
    // The client keeps a port in 16 bits: 70000 would be port 4464.
    if (uri.port() < 0 || uri.port() > 65535) {
      return Status::Invalid(
          fmt::format("{}: expected a port of 1 to 65535, got \"{}\"", options.flag, options.url));
    }
    http_client_config config;
    config.set_timeout(std::chrono::duration_cast<std::chrono::seconds>(options.timeout) +
                       std::chrono::seconds(1));
    impl->client = std::make_shared<http_client>(uri, config);
  } catch (const std::exception& e) {
    return Status::Invalid(
        fmt::format("{}: \"{}\" is not a URL: {}", options.flag, options.url, e.what()));
  }
  impl->options = std::move(options);
  return std::unique_ptr<PrometheusHistory>(new PrometheusHistory(std::move(impl)));
}

PrometheusHistory::PrometheusHistory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PrometheusHistory::~PrometheusHistory() = default;

StatusOr<std::string> PrometheusHistory::Query(const std::string& query, double time) {
  const auto& options = impl_->options;
  auto outcome = std::make_shared<Outcome>();
  auto answer = outcome->promise.get_future();
  pplx::cancellation_token_source cancel;
  try {
    web::uri_builder path("api/v1/query");
    web::http::http_request request(web::http::methods::POST);
    request.set_request_uri(path.to_uri());
    request.headers().add("Accept", "application/json");
    request.set_body(fmt::format("query={}&time={:.3f}", web::uri::encode_data_string(query), time),
                     "application/x-www-form-urlencoded");
    const size_t max_bytes = options.limits.max_bytes;
    auto client = impl_->client;  // alive while the request runs
    client->request(request, cancel.get_token())
        .then([outcome, max_bytes, client](web::http::http_response response) {
          const auto code = response.status_code();
          // Prometheus answers a refused query with 400 or 422 and its error as JSON.
          if (code != 200 && code != 400 && code != 422) {
            return outcome->Set(Status::Unavailable(fmt::format("HTTP {}", code)));
          }
          outcome->Set(BoundedBody(response, max_bytes));
        })
        .then([outcome](pplx::task<void> done) {
          try {
            done.get();
          } catch (const std::exception& e) {
            outcome->Set(Status::Unavailable(e.what()));
          }
        });
  } catch (const std::exception& e) {
    return Status::Unavailable(e.what());
  }
  if (answer.wait_for(options.timeout) != std::future_status::ready) {
    cancel.cancel();
    return Status::Unavailable(fmt::format("no answer within {} ms", options.timeout.count()));
  }
  return answer.get();
}

StatusOr<std::vector<fuzzy::NodeHistory>> PrometheusHistory::History(const history::HistoryKey& key,
                                                                     double time) {
  const double window = impl_->options.window_seconds;
  auto history = Ask(history::HistoryQuery(key, window), time);
  if (history.ok() && history->empty()) return Ask(history::LegacyHistoryQuery(key, window), time);
  return history;
}

StatusOr<std::vector<fuzzy::NodeHistory>> PrometheusHistory::Ask(const std::string& query,
                                                                 double now) {
  BALLAST_ASSIGN_OR_RETURN(std::string body, Query(query, now));
  return history::ParseHistoryAnswer(body, impl_->options.limits);
}

HistoryLookup PrometheusHistory::Lookup(const history::HistoryKey& key,
                                        const std::vector<std::string>& nodes, double now) {
  HistoryLookup lookup;
  lookup.origin = "Prometheus at " + impl_->options.url;
  const auto start = std::chrono::steady_clock::now();
  lookup.trouble = impl_->RecentFailure(start);
  if (!lookup.trouble.empty()) return lookup;
  const double window = impl_->options.window_seconds;
  const std::set<std::string> wanted(nodes.begin(), nodes.end());
  auto history = Ask(history::HistoryQuery(key, window), now);
  // None of the nodes recorded: what coordinators older than the recorded
  // gauge measured, if any (at most until a job of the kind is recorded
  // after an upgrade; an empty read for a kind never measured).
  const bool legacy =
      history.ok() && std::ranges::none_of(*history, [&](const fuzzy::NodeHistory& node) {
        return wanted.contains(node.node);
      });
  if (legacy) history = Ask(history::LegacyHistoryQuery(key, window), now);
  spdlog::debug(
      "history query workload={} ok={} legacy={} ms={:.1f}", key, history.ok(), legacy,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  impl_->Remember(history.status());
  if (!history.ok()) {
    lookup.trouble = history.status().message();
    return lookup;
  }
  for (auto& node : *history) {
    if (wanted.contains(node.node)) lookup.nodes.push_back(std::move(node));
  }
  return lookup;
}

Status PrometheusHistory::Record(const history::HistoryKey&, const std::map<std::string, double>&,
                                 double) {
  return Status::Ok();
}

}  // namespace ballast::net
