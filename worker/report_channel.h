// ReportChannel: the worker's reports on their way to the coordinator and
// their replies back. It numbers each report (the coordinator drops a
// number it has merged), times the exchange into the worker's metrics (the
// wait counts as idle when the loop waits), and keeps the heartbeat the last
// reply asked for. What a reply means for the lease is the loop's
// (worker_loop.h); the HTTP exchange itself is the client's
// (coordinator_client.h).
//
// Thread-safety: Post may run on another thread while the loop computes (it
// touches only the client and the metrics); everything else on the loop's.
#pragma once

#include <cstdint>
#include <optional>

#include "core/common/status.h"
#include "core/protocol/messages.h"
#include "worker/coordinator_client.h"
#include "worker/metrics.h"

namespace ballast::worker {

class ReportChannel {
 public:
  ReportChannel(CoordinatorClient& client, Metrics* metrics) : client_(client), metrics_(metrics) {}

  // Sends a report and waits for the reply: the worker is idle meanwhile.
  StatusOr<protocol::ReplyMessage> Send(protocol::ReportMessage report);
  // Sends an idle report, which the coordinator may hold until there is work
  // (a long poll, up to its wait timeout). When `stopped` turns true the
  // report is abandoned and nullopt returned: the caller sends it again as
  // leaving (what the coordinator had already merged of it, it drops as a
  // duplicate).
  std::optional<StatusOr<protocol::ReplyMessage>> SendUnless(protocol::ReportMessage report,
                                                             const GiveUp& stopped);
  // Gives the report the next number.
  protocol::ReportMessage Number(protocol::ReportMessage report);
  // The exchange alone, for a report sent while computing goes on; the loop
  // takes the reply with Accept.
  StatusOr<protocol::ReplyMessage> Post(const protocol::ReportMessage& report,
                                        const GiveUp& abandon = {});
  // Takes note of what a reply tells beyond its kind (the heartbeat).
  StatusOr<protocol::ReplyMessage> Accept(StatusOr<protocol::ReplyMessage> reply);

  // Seconds a worker may compute without reporting (the coordinator's last word).
  double heartbeat_s() const { return heartbeat_s_; }

 private:
  CoordinatorClient& client_;
  Metrics* metrics_;
  uint64_t seq_ = 0;
  double heartbeat_s_ = 10;
};

}  // namespace ballast::worker
