#include "worker/report_channel.h"

#include <chrono>

namespace ballast::worker {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

StatusOr<protocol::ReplyMessage> ReportChannel::Send(protocol::ReportMessage report) {
  const auto start = Clock::now();
  auto reply = Post(Number(std::move(report)));
  metrics_->Idle(Since(start));
  return Accept(std::move(reply));
}

std::optional<StatusOr<protocol::ReplyMessage>> ReportChannel::SendUnless(
    protocol::ReportMessage report, const GiveUp& stopped) {
  const auto start = Clock::now();
  bool gave_up = false;
  auto sent = Post(Number(std::move(report)), [&] { return gave_up = stopped(); });
  metrics_->Idle(Since(start));
  if (gave_up) return std::nullopt;
  return Accept(std::move(sent));
}

protocol::ReportMessage ReportChannel::Number(protocol::ReportMessage report) {
  report.seq = ++seq_;
  return report;
}

StatusOr<protocol::ReplyMessage> ReportChannel::Post(const protocol::ReportMessage& report,
                                                     const GiveUp& abandon) {
  const auto start = Clock::now();
  auto reply = client_.PostReport(report, abandon);
  if (reply.ok()) metrics_->Report();
  metrics_->RoundTrip(reply.ok() ? protocol::ReplyKindName(reply->kind) : "error", Since(start));
  return reply;
}

StatusOr<protocol::ReplyMessage> ReportChannel::Accept(StatusOr<protocol::ReplyMessage> reply) {
  if (!reply.ok()) return reply;
  if (reply->heartbeat_s > 0) heartbeat_s_ = reply->heartbeat_s;
  return reply;
}

}  // namespace ballast::worker
