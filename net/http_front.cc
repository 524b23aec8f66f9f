#include "net/http_front.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/common/utf8.h"
#include "core/protocol/messages.h"

namespace ballast::net {

// Where a connection is in its request cycle.
enum class ConnectionPhase {
  kIdle,      // waiting for a request
  kHead,      // reading a request's header
  kBody,      // reading its body
  kHandling,  // the handler has it; no read or write pending
  kWriting,   // writing the answer
  kLinger,    // refused: discarding what the client still sends, then closing
};

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Phase = ConnectionPhase;

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The connections a new one may push out when the front is full: those not
// busy with a request.
bool Evictable(Phase phase) {
  return phase == Phase::kIdle || phase == Phase::kHead || phase == Phase::kLinger;
}

// How long a refused connection's remaining input is discarded before closing.
constexpr double kLingerSeconds = 1.0;

}  // namespace

class Connection;

class HttpFront::Impl {
 public:
  Impl(const HttpFrontOptions& options, HttpHandler handler, HttpRefusalCounter on_refused)
      : options_(options),
        handler_(std::move(handler)),
        on_refused_(std::move(on_refused)),
        acceptor_(net::make_strand(ioc_)),
        accept_retry_(acceptor_.get_executor()) {}

  Status Open();
  void Stop();
  uint16_t port() const { return port_; }
  size_t connections() const {
    std::lock_guard lock(mutex_);
    return connections_.size();
  }
  void SetMaxConnections(size_t limit) {
    std::lock_guard lock(mutex_);
    max_connections_ = std::max<size_t>(limit, 1);
  }
  const HttpFrontOptions& options() const { return options_; }

  // For connections; each is thread-safe.
  void SetPhase(Connection* connection, Phase phase);
  void Forget(Connection* connection);
  void Refused(const std::string& reason) {
    if (on_refused_) on_refused_(reason);
  }
  void Handle(HttpRequest request, const std::shared_ptr<HttpExchange>& exchange);
  void WriteQueued() { ++pending_writes_; }
  void WriteDone() { --pending_writes_; }

 private:
  struct Entry {
    std::shared_ptr<Connection> connection;
    Phase phase = Phase::kIdle;
    Clock::time_point since;  // when it entered `phase`
  };

  void Accept();
  void OnAccept(const beast::error_code& ec, tcp::socket socket);
  void Admit(tcp::socket socket);
  // The connection that has waited longest without a request being handled;
  // nullptr when every connection is busy. Requires mutex_.
  std::shared_ptr<Connection> OldestEvictable();
  void CloseAll();

  HttpFrontOptions options_;
  size_t max_connections_ = options_.max_connections;  // guarded by mutex_
  HttpHandler handler_;
  HttpRefusalCounter on_refused_;
  net::io_context ioc_;  // declared first: destroyed after everything using it
  tcp::acceptor acceptor_;
  net::steady_timer accept_retry_;
  uint16_t port_ = 0;
  std::vector<std::thread> threads_;
  std::atomic<int> pending_writes_{0};  // answers given, not yet written
  mutable std::mutex mutex_;
  std::unordered_map<Connection*, Entry> connections_;  // guarded by mutex_
  bool stopping_ = false;                               // guarded by mutex_
};

// One client connection. Every handler runs on the connection's strand; the
// timer cancels the pending socket operation when a limit of time passes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpFront::Impl& front, tcp::socket socket)
      : front_(front),
        options_(front.options()),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        buffer_(std::max<size_t>(options_.max_header_bytes, 8 << 10) + (64 << 10)) {}

  net::any_io_executor executor() { return socket_.get_executor(); }
  void Start() { WaitForRequest(); }
  // Closes the socket; pending operations end with an error and the
  // connection is forgotten. On the strand.
  void Close() { Finish(); }
  // Has a handler's answer written on the strand. Any thread.
  void Queue(HttpResponse response) {
    front_.WriteQueued();
    net::post(executor(), [self = shared_from_this(), response = std::move(response)]() mutable {
      self->Write(std::move(response));
    });
  }

 private:
  void WaitForRequest();
  void ReadHeader();
  void OnHeader(const beast::error_code& ec);
  void ReadBody();
  void OnBody(const beast::error_code& ec);
  void Dispatch();
  void Write(HttpResponse response);
  void SendResponse(http::response<http::string_body> response, bool counted);
  // Answers `status` with a refusal body, then lingers and closes.
  void Refuse(unsigned status, const std::string& reason, const std::string& message);
  void Linger();
  void Finish();
  // Cancels the pending socket operation after `seconds`, setting timed_out_.
  void Arm(double seconds);
  void Disarm();
  // The read failed: refuses what deserves an answer, closes otherwise.
  void OnReadError(const beast::error_code& ec, const char* part, double timeout);

  HttpFront::Impl& front_;
  const HttpFrontOptions& options_;
  tcp::socket socket_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  uint64_t timer_generation_ = 0;
  bool timed_out_ = false;
  bool closed_ = false;
  std::array<char, 4096> discard_{};
};

namespace {

// The HttpExchange a handler gets: a weak handle on the connection.
class ConnectionExchange : public HttpExchange {
 public:
  explicit ConnectionExchange(std::weak_ptr<Connection> connection)
      : connection_(std::move(connection)) {}
  void Reply(HttpResponse response) override {
    if (answered_.exchange(true)) return;
    if (auto connection = connection_.lock()) connection->Queue(std::move(response));
  }

 private:
  std::weak_ptr<Connection> connection_;
  std::atomic<bool> answered_{false};
};

}  // namespace

void Connection::Arm(double seconds) {
  timed_out_ = false;
  const uint64_t generation = ++timer_generation_;
  timer_.expires_after(Seconds(seconds));
  timer_.async_wait([self = shared_from_this(), generation](const beast::error_code& ec) {
    if (ec || generation != self->timer_generation_) return;
    self->timed_out_ = true;
    beast::error_code ignored;
    self->socket_.cancel(ignored);
  });
}

void Connection::Disarm() {
  ++timer_generation_;
  timer_.cancel();
}

void Connection::WaitForRequest() {
  front_.SetPhase(this, Phase::kIdle);
  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is here
  Arm(options_.idle_timeout_s);
  socket_.async_wait(tcp::socket::wait_read,
                     [self = shared_from_this()](const beast::error_code& ec) {
                       self->Disarm();
                       if (ec) return self->Finish();
                       self->ReadHeader();
                     });
}

void Connection::ReadHeader() {
  front_.SetPhase(this, Phase::kHead);
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(options_.max_header_bytes));
  parser_->body_limit(options_.max_body_bytes);
  Arm(options_.header_timeout_s);
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](const beast::error_code& ec, size_t) {
                            self->Disarm();
                            self->OnHeader(ec);
                          });
}

void Connection::OnReadError(const beast::error_code& ec, const char* part, double timeout) {
  if (ec == http::error::body_limit) {
    return Refuse(413, "too_large",
                  fmt::format("the body is over the limit of {} bytes", options_.max_body_bytes));
  }
  if (timed_out_) {
    return Refuse(408, "timeout",
                  fmt::format("the request's {} did not arrive within {} s", part, timeout));
  }
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    return Refuse(
        431, "header_too_large",
        fmt::format("the header is over the limit of {} bytes", options_.max_header_bytes));
  }
  const bool gone = ec == http::error::end_of_stream || ec == http::error::partial_message ||
                    ec == net::error::eof || ec == net::error::connection_reset ||
                    ec == net::error::operation_aborted || ec == net::error::bad_descriptor;
  if (gone || closed_) return Finish();
  Refuse(400, "malformed", fmt::format("bad HTTP request {}: {}", part, ec.message()));
}

void Connection::OnHeader(const beast::error_code& ec) {
  if (ec) return OnReadError(ec, "header", options_.header_timeout_s);
  if (parser_->is_done()) return Dispatch();
  const auto& header = parser_->get();
  if (beast::iequals(header[http::field::expect], "100-continue")) {
    // The client waits for this before it sends the body (curl does).
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    Arm(options_.write_timeout_s);
    net::async_write(socket_, net::buffer(kContinue),
                     [self = shared_from_this()](const beast::error_code& ec, size_t) {
                       self->Disarm();
                       if (ec) return self->Finish();
                       self->ReadBody();
                     });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  front_.SetPhase(this, Phase::kBody);
  Arm(options_.body_timeout_s);
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](const beast::error_code& ec, size_t) {
                     self->Disarm();
                     self->OnBody(ec);
                   });
}

void Connection::OnBody(const beast::error_code& ec) {
  if (ec) return OnReadError(ec, "body", options_.body_timeout_s);
  Dispatch();
}

void Connection::Dispatch() {
  front_.SetPhase(this, Phase::kHandling);
  auto message = parser_->release();
  parser_.reset();
  version_ = message.version();
  keep_alive_ = message.keep_alive();
  HttpRequest request{std::string(message.method_string()), std::string(message.target()),
                      std::string(message[http::field::authorization]), std::move(message.body())};
  front_.Handle(std::move(request), std::make_shared<ConnectionExchange>(weak_from_this()));
}

void Connection::Write(HttpResponse response) {
  if (closed_) return front_.WriteDone();
  http::response<http::string_body> message{static_cast<http::status>(response.status), version_};
  message.set(http::field::content_type, response.content_type);
  message.body() = std::move(response.body);
  message.keep_alive(keep_alive_);
  message.prepare_payload();
  SendResponse(std::move(message), /*counted=*/true);
}

void Connection::SendResponse(http::response<http::string_body> response, bool counted) {
  const bool refusal = !response.keep_alive();
  front_.SetPhase(this, Phase::kWriting);
  auto message = std::make_shared<http::response<http::string_body>>(std::move(response));
  Arm(options_.write_timeout_s);
  http::async_write(
      socket_, *message,
      [self = shared_from_this(), message, counted, refusal](const beast::error_code& ec, size_t) {
        self->Disarm();
        if (counted) self->front_.WriteDone();
        if (ec) return self->Finish();
        if (refusal) return self->Linger();
        self->WaitForRequest();
      });
}

void Connection::Refuse(unsigned status, const std::string& reason, const std::string& message) {
  front_.Refused(reason);
  spdlog::info("request refused reason={} message=\"{}\"", reason, message);
  http::response<http::string_body> response{static_cast<http::status>(status), version_};
  response.set(http::field::content_type, "application/json");
  response.body() = DumpJson(protocol::RefusalJson(reason, message));
  response.keep_alive(false);
  response.prepare_payload();
  SendResponse(std::move(response), /*counted=*/false);
}

// Stops sending and reads what the client still sends for a moment, so that
// it reads our refusal before the close (closing with unread input resets
// the connection, and a reset discards the answer on the client's side).
void Connection::Linger() {
  front_.SetPhase(this, Phase::kLinger);
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  Arm(kLingerSeconds);
  struct Discard {
    std::shared_ptr<Connection> self;
    void operator()(const beast::error_code& ec, size_t) {
      if (ec) return self->Finish();
      self->socket_.async_read_some(net::buffer(self->discard_), std::move(*this));
    }
  };
  socket_.async_read_some(net::buffer(discard_), Discard{shared_from_this()});
}

void Connection::Finish() {
  if (closed_) return;
  closed_ = true;
  Disarm();
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  front_.Forget(this);
}

Status HttpFront::Impl::Open() {
  beast::error_code ec;
  const auto address = net::ip::make_address(options_.address, ec);
  if (ec)
    return Status::Invalid(fmt::format("address: '{}' is not an IP address", options_.address));
  if (options_.max_connections == 0) return Status::Invalid("max_connections: expected >= 1");
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable(
        fmt::format("cannot listen on {}:{}: {}", options_.address, options_.port, ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  const int threads = options_.threads > 0
                          ? options_.threads
                          : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          spdlog::info("http front handler failed error=\"{}\"", e.what());
        }
      }
    });
  }
  return Status::Ok();
}

void HttpFront::Impl::Accept() {
  acceptor_.async_accept(
      net::make_strand(ioc_),
      [this](const beast::error_code& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpFront::Impl::OnAccept(const beast::error_code& ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    // Out of file descriptors, typically: try again shortly, do not spin.
    spdlog::info("accept failed error=\"{}\"", ec.message());
    accept_retry_.expires_after(std::chrono::milliseconds(50));
    accept_retry_.async_wait([this](const beast::error_code& wait) {
      if (!wait) Accept();
    });
    return;
  }
  Admit(std::move(socket));
  Accept();
}

void HttpFront::Impl::Admit(tcp::socket socket) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::shared_ptr<Connection> evicted;
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (connections_.size() >= max_connections_) {
      evicted = OldestEvictable();
      if (!evicted) {
        socket.close(ignored);
        Refused("busy");
        return;
      }
      connections_.erase(evicted.get());
    }
    connection = std::make_shared<Connection>(*this, std::move(socket));
    connections_[connection.get()] = {connection, Phase::kIdle, Clock::now()};
  }
  if (evicted) net::post(evicted->executor(), [evicted] { evicted->Close(); });
  net::post(connection->executor(), [connection] { connection->Start(); });
}

std::shared_ptr<Connection> HttpFront::Impl::OldestEvictable() {
  const Entry* oldest = nullptr;
  for (const auto& [key, entry] : connections_) {
    if (Evictable(entry.phase) && (!oldest || entry.since < oldest->since)) oldest = &entry;
  }
  return oldest ? oldest->connection : nullptr;
}

void HttpFront::Impl::SetPhase(Connection* connection, Phase phase) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  it->second.phase = phase;
  it->second.since = Clock::now();
}

void HttpFront::Impl::Forget(Connection* connection) {
  std::lock_guard lock(mutex_);
  connections_.erase(connection);
}

void HttpFront::Impl::Handle(HttpRequest request, const std::shared_ptr<HttpExchange>& exchange) {
  try {
    handler_(std::move(request), exchange);
  } catch (const std::exception& e) {
    spdlog::info("request handler failed error=\"{}\"", e.what());
    exchange->Reply({500, "application/json",
                     DumpJson(protocol::RefusalJson("internal", "the coordinator failed"))});
  }
}

void HttpFront::Impl::CloseAll() {
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, entry] : connections_) all.push_back(entry.connection);
  }
  for (auto& connection : all) {
    net::post(connection->executor(), [connection] { connection->Close(); });
  }
}

void HttpFront::Impl::Stop() {
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  // Answers already given (a stopping server's 503s) reach their clients.
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (pending_writes_.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CloseAll();
  for (int i = 0; i < 500 && connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ioc_.stop();
  for (auto& thread : threads_) thread.join();
  std::lock_guard lock(mutex_);
  connections_.clear();
}

StatusOr<std::unique_ptr<HttpFront>> HttpFront::Start(const HttpFrontOptions& options,
                                                      HttpHandler handler,
                                                      HttpRefusalCounter on_refused) {
  auto impl = std::make_unique<Impl>(options, std::move(handler), std::move(on_refused));
  BALLAST_RETURN_IF_ERROR(impl->Open());
  return std::unique_ptr<HttpFront>(new HttpFront(std::move(impl)));
}

HttpFront::HttpFront(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpFront::~HttpFront() { impl_->Stop(); }
uint16_t HttpFront::port() const { return impl_->port(); }
size_t HttpFront::connections() const { return impl_->connections(); }
void HttpFront::SetMaxConnections(size_t limit) { impl_->SetMaxConnections(limit); }

}  // namespace ballast::net
