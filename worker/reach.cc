#include "worker/reach.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ballast::worker {
namespace {

struct HostPort {
  std::string host;
  std::string port;
};

// "scheme://[user@]host[:port][/...]" -> host and port; IPv6 hosts in [].
HostPort Split(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "http" : url.substr(0, scheme_end);
  std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  HostPort out{rest, scheme == "https" ? "443" : "80"};
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    out.host = rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    if (close != std::string::npos && close + 1 < rest.size() && rest[close + 1] == ':') {
      out.port = rest.substr(close + 2);
    }
    return out;
  }
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    out.host = rest.substr(0, colon);
    out.port = rest.substr(colon + 1);
  }
  return out;
}

std::string Address(const addrinfo& info, const std::string& port) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      info.ai_family == AF_INET6
          ? static_cast<const void*>(
                &reinterpret_cast<const sockaddr_in6*>(info.ai_addr)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(info.ai_addr)->sin_addr);
  inet_ntop(info.ai_family, raw, text, sizeof(text));
  return info.ai_family == AF_INET6 ? fmt::format("[{}]:{}", text, port)
                                    : fmt::format("{}:{}", text, port);
}

// errno of a non-blocking connect to `info`, ETIMEDOUT after `timeout`; 0
// when it connects.
int Connect(const addrinfo& info, std::chrono::milliseconds timeout) {
  const int fd = socket(info.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int error = 0;
  if (connect(fd, info.ai_addr, info.ai_addrlen) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      const int ready = poll(&waiting, 1, static_cast<int>(timeout.count()));
      socklen_t length = sizeof(error);
      if (ready == 0) {
        error = ETIMEDOUT;
      } else if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        error = errno;
      }
    }
  }
  close(fd);
  return error;
}

}  // namespace

std::string DiagnoseReach(const std::string& url, std::chrono::milliseconds timeout) {
  const HostPort target = Split(url);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int lookup = getaddrinfo(target.host.c_str(), target.port.c_str(), &hints, &found);
  if (lookup != 0 || !found) {
    return fmt::format(
        "DNS lookup of '{}' failed: {} (is the coordinator's Service there, and the node's "
        "cluster DNS working?)",
        target.host, lookup == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(lookup));
  }
  const std::string address = Address(*found, target.port);
  const int error = Connect(*found, timeout);
  freeaddrinfo(found);
  const std::string named =
      address.rfind(target.host, 0) == 0 ? address : fmt::format("{} ({})", target.host, address);
  switch (error) {
    case 0:
      return "";
    case ECONNREFUSED:
      return fmt::format(
          "connection to {} refused: nothing listens there (is the operator's leader up, and "
          "does the Service select its pod?)",
          named);
    case ETIMEDOUT:
      return fmt::format(
          "connection to {} timed out after {:g} s: packets are dropped on the way (a "
          "NetworkPolicy, a firewall, no route)",
          named, std::chrono::duration<double>(timeout).count());
    default:
      return fmt::format("connection to {} failed: {}", named, std::strerror(error));
  }
}

}  // namespace ballast::worker
