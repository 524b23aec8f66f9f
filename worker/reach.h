// Why the coordinator cannot be reached, in words a person can act on. The
// HTTP client says only "Failed to connect to any resolved endpoint" (and
// reports a refused connection as "no route to host"), so the worker looks
// itself: it resolves the URL's host and opens a TCP connection to it.
//
//   DNS lookup of 'ballast-coordinator.ballast-system.svc' failed: Name or
//     service not known (is the coordinator's Service there, and the node's
//     cluster DNS working?)
//   connection to 10.43.0.12:8080 refused: nothing listens there (...)
//   connection to 10.43.0.12:8080 timed out after 5 s: packets are dropped
//     on the way (a NetworkPolicy, a firewall, no route)
//   connection to 10.43.0.12:8080 failed: No route to host
//
// Thread-safety: a pure function of the network; call from any thread.
#pragma once

#include <chrono>
#include <string>

namespace ballast::worker {

// What stops a TCP connection to the host and port of `url` (http or https,
// the scheme's port when none is given), as above; "" when the connection
// opens (the trouble is above TCP: TLS, HTTP, the coordinator itself).
// Blocks up to `timeout` per resolved address tried (the first one only).
std::string DiagnoseReach(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace ballast::worker
