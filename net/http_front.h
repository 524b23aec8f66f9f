// HttpFront: the coordinator's HTTP/1.1 server, hardened against hostile
// clients. It accepts connections, reads each request within limits of size
// and time, and hands whole, bounded requests to a handler; Server routes
// them (server.h). It is the one file here that touches sockets.
//
// Why not cpprestsdk's http_listener, which served before (its asio backend,
// http_server_asio.cpp, read for this): it cannot be configured or guarded
// into safety.
//   - It reads headers with async_read_until into an unbounded streambuf and
//     has no timeout anywhere: half a header, or a declared body that never
//     comes, holds the connection and its memory forever.
//   - It calls the handler as soon as the headers are in and streams the body
//     into an in-memory buffer beside it; a reply is written only after the
//     whole body has arrived (do_response waits on content_ready), so a 413
//     cannot be sent before a 500 MB body is read whole into memory, and a
//     declared Content-Length of 1e11 holds the connection forever.
//   - It holds any number of connections (no cap, no eviction), and an
//     accept error other than "aborted" re-arms accept at once.
// So the front is our own, on boost::asio with Boost.Beast's HTTP parser (a
// header-only part of the same Boost that cpprestsdk already depends on);
// the rest of the coordinator keeps cpprestsdk for URIs and the workers keep
// its client. What it enforces (HttpFrontOptions):
//   - at most max_connections at once; when full, a new connection evicts the
//     connection that has waited longest for a request (idle between
//     requests, or still sending its header), and is closed only when every
//     connection is busy with a request, so idle or slowloris connections
//     cannot lock workers out;
//   - an idle connection is closed after idle_timeout_s; a header must arrive
//     whole within header_timeout_s of its first byte, a body within
//     body_timeout_s after its header (408), and an answer must be taken by
//     the client within write_timeout_s;
//   - a header over max_header_bytes is refused with 431, a body over
//     max_body_bytes with 413 before it is read (a Content-Length over the
//     limit is refused from the header alone, a chunked body as soon as it
//     passes the limit), before the handler, so before any token is checked;
//     malformed requests with 400;
//   - after a refusal it writes the answer, stops sending, and discards what
//     the client still sends for at most a second (so the client reads the
//     answer instead of a reset), then closes.
// Memory is bounded by max_connections × (max_header_bytes + max_body_bytes
// + one 64 KiB read), whatever clients send.
//
// Thread-safety: Start and the destructor from one thread; HttpExchange is
// thread-safe. The handler runs on the front's threads and must not block
// for long (a long poll keeps its HttpExchange and answers later).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/common/status.h"

namespace ballast::net {

struct HttpFrontOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: the kernel picks a free port
  size_t max_connections = 512;
  size_t max_header_bytes = 16 << 10;  // request line and headers
  size_t max_body_bytes = 1 << 20;
  double idle_timeout_s = 60;    // no request on a kept-alive connection
  double header_timeout_s = 10;  // from a request's first byte to its header's end
  double body_timeout_s = 30;    // from the header's end to the body's end
  double write_timeout_s = 30;   // to write an answer
  int threads = 0;               // 0: one per core, at most 4
};

// A whole request: its body has been read and is within the limit.
struct HttpRequest {
  std::string method;         // "GET", "POST", ...
  std::string target;         // path and query, as sent
  std::string authorization;  // the Authorization header; "" when absent
  std::string body;
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// One request awaiting its answer. Reply may be called from any thread, at
// once or later (a long poll); the first call wins and later ones are
// ignored, as is a call after the client went away or the front stopped.
// Never blocks.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual void Reply(HttpResponse response) = 0;
};

// Receives every admitted request. Takes ownership of the exchange.
using HttpHandler = std::function<void(HttpRequest, std::shared_ptr<HttpExchange>)>;
// Told each refusal the front makes itself ("too_large", "timeout",
// "header_too_large", "malformed", "busy"), for metrics.
using HttpRefusalCounter = std::function<void(const std::string& reason)>;

class HttpFront {
 public:
  // Binds, listens and starts serving on its own threads. Returns
  // Unavailable when the address cannot be bound, Invalid for bad options.
  static StatusOr<std::unique_ptr<HttpFront>> Start(const HttpFrontOptions& options,
                                                    HttpHandler handler,
                                                    HttpRefusalCounter on_refused);
  // Stops accepting, lets answers already given be written (up to a second),
  // closes every connection and joins its threads.
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  uint16_t port() const;
  // Connections open now (never more than max_connections).
  size_t connections() const;
  // Changes max_connections (at least 1) for connections admitted from now
  // on; a lower limit closes none of those already open.
  void SetMaxConnections(size_t limit);

  class Impl;

 private:
  explicit HttpFront(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::net
