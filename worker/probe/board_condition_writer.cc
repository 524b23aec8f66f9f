#include "worker/probe/board_condition_writer.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "worker/probe/node_labeller.h"

namespace ballast::worker {
namespace {

kube::ResourceRef BoardNodes() { return {"", "v1", "nodes", /*namespaced=*/false, "", ""}; }
kube::ResourceRef BoardEvents() { return {"", "v1", "events", /*namespaced=*/true, "", ""}; }

std::string StampNow() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

}  // namespace

BoardConditionWriter::BoardConditionWriter(kube::KubeClient& client, std::string node,
                                           std::string field_manager)
    : client_(client), node_(std::move(node)), field_manager_(std::move(field_manager)) {}

Status BoardConditionWriter::Update(const std::vector<probe::BoardCondition>& wanted,
                                    const std::string& note) {
  if (wanted.empty()) return Status::Ok();
  if (!read_) {
    auto node = client_.Get(BoardNodes().Named(node_));
    if (!node.ok()) return node.status();
    node_object_ = *std::move(node);
    on_node_ = probe::ReadBoardConditions(node_object_);
    read_ = true;
  }
  const std::string now = StampNow();
  const probe::BoardConditionDecision decision =
      probe::DecideBoardConditions(on_node_, wanted, now, note);
  if (!decision.write.empty()) {
    kube::ApplyOptions options;
    options.field_manager = field_manager_;
    options.subresource = "status";
    auto written =
        client_.Apply(BoardNodes().Named(node_),
                      probe::BoardConditionsApplyObject(node_, decision.write, now), options);
    if (!written.ok()) {
      read_ = false;
      return written.status();
    }
    node_object_ = *std::move(written);
    on_node_ = probe::ReadBoardConditions(node_object_);
    ++writes_;
  }
  for (const probe::ConditionEvent& event : decision.events) {
    auto created = client_.Create(
        BoardEvents().In("default"),
        NodeEvent(node_object_, event.type, event.reason, event.message, field_manager_));
    if (!created.ok()) return created.status();
    ++events_;
  }
  return Status::Ok();
}

}  // namespace ballast::worker
