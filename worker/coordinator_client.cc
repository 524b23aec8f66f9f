#include "worker/coordinator_client.h"

#include <cpprest/http_client.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/common/utf8.h"
#include "worker/reach.h"

namespace ballast::worker {
namespace {

using Clock = std::chrono::steady_clock;

// While the coordinator cannot be reached: how long a connection test may
// take, and how often the worker looks again why (and logs it).
constexpr std::chrono::milliseconds kConnectTimeout{5000};
constexpr double kDiagnoseEvery = 10;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The answer's body. A coordinator's answers are small: one that declares
// more than protocol::kMaxBodyBytes is not read (it throws, as the client
// does for a lost connection, so callers retry and then give up).
std::string BoundedBody(web::http::http_response& response) {
  if (response.headers().content_length() > protocol::kMaxBodyBytes) {
    throw std::runtime_error(fmt::format("the answer declares {} bytes, over the limit of {}",
                                         response.headers().content_length(),
                                         protocol::kMaxBodyBytes));
  }
  return response.extract_string(true).get();
}

// The response of a request sent, or nullopt when `give_up` (checked every
// 20 ms; none: wait to the end) said to stop waiting first. A request given
// up on is not cancelled: it is left to end on cpprestsdk's threads, its
// outcome observed there and dropped. Cancelling a request in flight from
// another thread races the library's I/O thread over the request's context
// (ThreadSanitizer reported it on every stop of a worker whose report was
// held), and the process ends soon after a give-up anyway.
std::optional<web::http::http_response> AwaitResponse(pplx::task<web::http::http_response> sent,
                                                      const GiveUp& give_up) {
  if (give_up) {
    while (!sent.is_done()) {
      if (give_up()) {
        // Observed, or pplx reports an exception nobody looked at with SIGTRAP.
        sent.then([](const pplx::task<web::http::http_response>& ended) {
          try {
            ended.get();
          } catch (const std::exception&) {
          }
        });
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return sent.get();
}

void SleepUnless(double seconds, const GiveUp& stopping) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
  while (Clock::now() < until && !stopping()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

web::http::client::http_client MakeClient(const std::string& url, std::chrono::seconds timeout) {
  web::http::client::http_client_config config;
  config.set_timeout(timeout);
  return web::http::client::http_client(utility::conversions::to_string_t(url), config);
}

}  // namespace

class CoordinatorClient::Impl {
 public:
  Impl(CoordinatorAddress address, GiveUp stopping)
      : address_(std::move(address)),
        stopping_(std::move(stopping)),
        client_(MakeClient(address_.url, std::chrono::seconds(30))) {}

  // What one try of an exchange gave: the answer to return, or why to try
  // again (`unreachable`: no HTTP answer at all).
  struct Attempt {
    std::optional<StatusOr<nlohmann::json>> answer;
    std::string failure;
    bool unreachable = false;

    static Attempt Answer(StatusOr<nlohmann::json> answer) {
      Attempt attempt;
      attempt.answer = std::move(answer);
      return attempt;
    }
    static Attempt Retry(std::string failure, bool unreachable) {
      Attempt attempt;
      attempt.failure = std::move(failure);
      attempt.unreachable = unreachable;
      return attempt;
    }
  };

  Attempt TryOnce(const web::http::method& method, const std::string& path, const std::string& body,
                  const GiveUp& abandon) {
    try {
      std::optional<web::http::http_response> answered =
          AwaitResponse(client_.request(Request(method, path, body)), abandon);
      if (!answered)
        return Attempt::Answer(Status::Unavailable(fmt::format("{}: abandoned", path)));
      web::http::http_response& response = *answered;
      const std::string text = BoundedBody(response);
      const auto code = response.status_code();
      if (code == web::http::status_codes::OK)
        return Attempt::Answer(protocol::ParseJsonText(text));
      const protocol::Refusal refusal = protocol::ParseRefusal(text);
      if (code == web::http::status_codes::Conflict)
        return Attempt::Answer(Status::Conflict(refusal.error));
      const bool unknown_job = code == web::http::status_codes::NotFound &&
                               refusal.reason == protocol::kReasonUnknownJob;
      // 408: the request was too slow to arrive (a stalled network); again.
      const bool timed_out = code == web::http::status_codes::RequestTimeout;
      if (code < 500 && !unknown_job && !timed_out) {
        return Attempt::Answer(
            Status::Invalid(fmt::format("the coordinator refused {} ({}): {}", path, code, text)));
      }
      return Attempt::Retry(fmt::format("status {}: {}", code, refusal.error), false);
    } catch (const std::exception& e) {
      return Attempt::Retry(e.what(), true);
    }
  }

  // One HTTP exchange with retries: see PostReport for what it returns.
  StatusOr<nlohmann::json> Exchange(const web::http::method& method, const std::string& path,
                                    const std::string& body, const GiveUp& abandon) {
    const auto start = Clock::now();
    double backoff = 0.1;
    std::optional<Clock::time_point> diagnosed;  // when the last DiagnoseReach ran
    std::string cause;                           // what it said
    while (true) {
      Attempt attempt = TryOnce(method, path, body, abandon);
      if (attempt.answer) return std::move(*attempt.answer);
      const std::string& failure = attempt.failure;
      const bool unreachable = attempt.unreachable;
      if (unreachable && (!diagnosed || SecondsSince(*diagnosed) > kDiagnoseEvery)) {
        cause = DiagnoseReach(address_.url, kConnectTimeout);
        if (cause.empty()) cause = "the TCP connection opens, but the exchange fails: " + failure;
        diagnosed = Clock::now();
        spdlog::info("cannot reach the coordinator, retrying url={} cause=\"{}\"", address_.url,
                     cause);
      }
      if (unreachable && SecondsSince(start) > address_.give_up_s) {
        // The pod's termination message ends with this (the operator's
        // CoordinatorUnreachable event quotes it): keep "cannot reach the
        // coordinator" as it is.
        return Status::Unavailable(fmt::format("cannot reach the coordinator at {} for {:g} s: {}",
                                               address_.url, address_.give_up_s, cause));
      }
      if (SecondsSince(start) > address_.give_up_s) {
        return Status::Unavailable(fmt::format("coordinator {} unavailable for {:.0f} s: {}",
                                               address_.url, address_.give_up_s, failure));
      }
      // Asked to stop (the pod is being deleted, e.g. with its job): nobody
      // is left to hand the lease back to, so do not wait out give_up_s.
      if (stopping_()) {
        return Status::Unavailable(fmt::format(
            "stopping, and the coordinator {} is unavailable: {}", address_.url, failure));
      }
      if (!unreachable) {
        spdlog::info("coordinator unavailable, retrying path={} error=\"{}\"", path, failure);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff = std::min(backoff * 2, 2.0);
    }
  }

  // Long-polls for signals: see CoordinatorClient::PollSignals.
  void PollSignals(const std::string& worker, const GiveUp& stop,
                   const std::function<void(const protocol::SignalMessage&)>& on_signal) const {
    web::http::client::http_client client = MakeClient(address_.url, std::chrono::seconds(60));
    const std::string path =
        fmt::format("/v1/jobs/{}/signal?worker={}", address_.job,
                    utility::conversions::to_utf8string(
                        web::uri::encode_data_string(utility::conversions::to_string_t(worker))));
    double backoff = 0.1;
    while (!stop()) {
      std::string failure;
      try {
        std::optional<web::http::http_response> answered =
            AwaitResponse(client.request(Request(web::http::methods::GET, path, "")), stop);
        if (!answered) return;
        web::http::http_response& response = *answered;
        const std::string text = BoundedBody(response);
        auto json = protocol::ParseJsonText(text);
        auto signal = json.ok() ? protocol::ParseSignal(*json)
                                : StatusOr<protocol::SignalMessage>(json.status());
        if (response.status_code() != web::http::status_codes::OK) {
          failure = fmt::format("status {}: {}", response.status_code(), text);
        } else if (signal.ok()) {
          backoff = 0.1;
          if (signal->signalled) {
            on_signal(*signal);
            if (signal->done) return;  // the job is over: no more signals
          }
          continue;
        } else {
          failure = "the answer is not a signal message: " + signal.status().message();
        }
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (stop()) return;
      spdlog::debug("signal poll failed, retrying error=\"{}\"", failure);
      SleepUnless(backoff, stop);
      backoff = std::min(backoff * 2, 2.0);
    }
  }

  const CoordinatorAddress& address() const { return address_; }

 private:
  web::http::http_request Request(const web::http::method& method, const std::string& path,
                                  const std::string& body) const {
    web::http::http_request request(method);
    request.set_request_uri(utility::conversions::to_string_t(path));
    request.headers().add("Authorization", "Bearer " + address_.token);
    if (!body.empty()) request.set_body(body, "application/json");
    return request;
  }

  CoordinatorAddress address_;
  GiveUp stopping_;
  web::http::client::http_client client_;
};

CoordinatorClient::CoordinatorClient(CoordinatorAddress address, GiveUp stopping)
    : impl_(std::make_unique<Impl>(std::move(address), std::move(stopping))) {}
CoordinatorClient::~CoordinatorClient() = default;

StatusOr<protocol::JobDescription> CoordinatorClient::FetchJob() {
  BALLAST_ASSIGN_OR_RETURN(auto json, impl_->Exchange(web::http::methods::GET,
                                                      "/v1/jobs/" + impl_->address().job, "", {}));
  return protocol::ParseJobDescription(json);
}

StatusOr<protocol::ReplyMessage> CoordinatorClient::PostReport(
    const protocol::ReportMessage& report, const GiveUp& abandon) {
  BALLAST_ASSIGN_OR_RETURN(
      auto json,
      impl_->Exchange(web::http::methods::POST, "/v1/jobs/" + impl_->address().job + "/report",
                      DumpJson(protocol::ToJson(report)), abandon));
  return protocol::ParseReply(json);
}

void CoordinatorClient::PollSignals(
    const std::string& worker, const GiveUp& stop,
    const std::function<void(const protocol::SignalMessage&)>& on_signal) const {
  impl_->PollSignals(worker, stop, on_signal);
}

}  // namespace ballast::worker
