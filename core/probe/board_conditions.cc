#include "core/probe/board_conditions.h"

#include <fmt/format.h>

#include <algorithm>

namespace ballast::probe {
namespace {

using nlohmann::json;

// "a, b and c" of the names whose bits are set.
std::string Named(uint32_t bits, uint32_t shift) {
  static constexpr struct {
    uint32_t bit;
    const char* name;
  } kBits[] = {{0x2, "frequency capped"}, {0x4, "throttled"}, {0x8, "soft temperature limit"}};
  std::vector<std::string> names;
  for (const auto& b : kBits) {
    if (bits & (b.bit << shift)) names.push_back(b.name);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ");
    out += names[i];
  }
  return out;
}

BoardCondition UnderVoltage(const Facts& facts) {
  BoardCondition c{std::string(kUnderVoltageCondition), "False", "SupplyOk", "", ""};
  const bool alarm = facts.under_voltage_alarm.value_or(false);
  if (facts.throttled) {
    const Throttled& t = *facts.throttled;
    const std::string bits = fmt::format("get_throttled {:#x}", t.bits);
    if (t.under_voltage_now() || alarm) {
      c.status = "True";
      c.reason = "UnderVoltageNow";
      c.message = fmt::format("the board's supply is under-voltage now ({}{})", bits,
                              alarm ? "; rpi_volt in0_lcrit_alarm 1" : "");
    } else if (t.under_voltage_since_boot()) {
      c.status = "True";
      c.reason = "UnderVoltageSinceBoot";
      c.message = fmt::format(
          "the board's supply was under-voltage since boot, not now ({}): a weak power supply "
          "or cable",
          bits);
    } else {
      c.message = fmt::format("no under-voltage since boot ({})", bits);
    }
    return c;
  }
  constexpr const char* kNoHistory = "the firmware's record since boot is not exposed";
  if (alarm) {
    c.status = "True";
    c.reason = "UnderVoltageNow";
    c.message = fmt::format(
        "the board's supply is under-voltage now (rpi_volt in0_lcrit_alarm 1; {})", kNoHistory);
  } else {
    c.message = fmt::format("no under-voltage now (rpi_volt in0_lcrit_alarm 0; {})", kNoHistory);
  }
  return c;
}

BoardCondition Throttling(const Throttled& t) {
  BoardCondition c{std::string(kThrottledCondition), "False", "NotThrottled", "", ""};
  const std::string bits = fmt::format("get_throttled {:#x}", t.bits);
  const std::string now = Named(t.bits, 0);
  const std::string since = Named(t.bits, 16);
  if (!now.empty()) {
    c.status = "True";
    c.reason = "ThrottledNow";
    c.message = fmt::format("the firmware reports {} now{} ({})", now,
                            since.empty() ? "" : fmt::format("; {} since boot", since), bits);
  } else if (!since.empty()) {
    c.status = "True";
    c.reason = "ThrottledSinceBoot";
    c.message = fmt::format("the firmware reports {} since boot, not now ({})", since, bits);
  } else {
    c.message = fmt::format(
        "no frequency capping, throttling or soft temperature limit since boot ({})", bits);
  }
  return c;
}

BoardCondition MemoryCgroup(const Facts& facts) {
  BoardCondition c{std::string(kNoMemoryCgroupCondition), "False", "MemoryCgroupPresent", "", ""};
  if (*facts.memory_cgroup) {
    c.message = fmt::format("the kernel offers the memory cgroup controller ({})",
                            facts.memory_cgroup_file);
    return c;
  }
  constexpr const char* kFix =
      "the kubelet and k3s do not start without it (\"failed to find memory cgroup\"): add "
      "cgroup_memory=1 cgroup_enable=memory to the kernel command line (cmdline.txt on "
      "Raspberry Pi OS) and reboot";
  c.status = "True";
  if (!facts.memory_cgroup_disabled_by.empty()) {
    c.reason = "MemoryCgroupDisabled";
    c.message =
        fmt::format("the memory cgroup controller is off: {} on the kernel command line ({}); {}",
                    facts.memory_cgroup_disabled_by, facts.memory_cgroup_file, kFix);
  } else {
    c.reason = "MemoryCgroupMissing";
    c.message = fmt::format(
        "the kernel offers no memory cgroup controller ({}: off unless the command line enables "
        "it, or not built in); {}",
        facts.memory_cgroup_file, kFix);
  }
  return c;
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringOf(const json& object, const char* key) {
  const json* value = Member(object, key);
  return value && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace

std::vector<BoardCondition> BoardConditions(const Facts& facts) {
  std::vector<BoardCondition> conditions;
  if (facts.throttled || facts.under_voltage_alarm) conditions.push_back(UnderVoltage(facts));
  if (facts.throttled) conditions.push_back(Throttling(*facts.throttled));
  if (facts.memory_cgroup) conditions.push_back(MemoryCgroup(facts));
  return conditions;
}

std::string TemperatureNote(const Facts& facts) {
  return facts.soc_temp_c ? fmt::format("SoC at {:.1f} °C", *facts.soc_temp_c) : "";
}

std::string DescribeBoardProblems(const std::vector<BoardCondition>& conditions) {
  std::string out;
  for (const BoardCondition& c : conditions) {
    if (c.status != "True") continue;
    const char* what = c.type == kUnderVoltageCondition     ? "under-voltage"
                       : c.type == kThrottledCondition      ? "throttling"
                       : c.type == kNoMemoryCgroupCondition ? "no memory cgroup"
                                                            : "a board problem";
    const std::string since = c.last_transition_time.empty() ? std::string("(time unknown)")
                                                             : "since " + c.last_transition_time;
    out += fmt::format("{}{} {} ({}: {})", out.empty() ? "" : "; ", what, since, c.type, c.message);
  }
  return out;
}

std::vector<BoardCondition> ReadNodeConditions(const json& node) {
  std::vector<BoardCondition> conditions;
  const json* status = Member(node, "status");
  const json* list = status ? Member(*status, "conditions") : nullptr;
  if (!list || !list->is_array()) return conditions;
  for (const json& entry : *list) {
    if (!entry.is_object()) continue;
    conditions.push_back({StringOf(entry, "type"), StringOf(entry, "status"),
                          StringOf(entry, "reason"), StringOf(entry, "message"),
                          StringOf(entry, "lastTransitionTime")});
  }
  return conditions;
}

std::vector<BoardCondition> BoardConditionsAmong(const std::vector<BoardCondition>& conditions) {
  std::vector<BoardCondition> board;
  for (const BoardCondition& condition : conditions) {
    if (!condition.type.starts_with(kBoardConditionPrefix)) continue;
    // A list map holds one of each type; the first counts.
    if (std::any_of(board.begin(), board.end(),
                    [&](const BoardCondition& c) { return c.type == condition.type; })) {
      continue;
    }
    board.push_back(condition);
  }
  return board;
}

std::vector<BoardCondition> ReadBoardConditions(const json& node) {
  return BoardConditionsAmong(ReadNodeConditions(node));
}

BoardConditionDecision DecideBoardConditions(const std::vector<BoardCondition>& on_node,
                                             const std::vector<BoardCondition>& wanted,
                                             std::string_view now, std::string_view note) {
  BoardConditionDecision decision;
  bool changed = false;
  const auto with_note = [&](const std::string& message) {
    return note.empty() ? message : fmt::format("{}; {}", message, note);
  };
  for (const BoardCondition& want : wanted) {
    const auto prev = std::find_if(on_node.begin(), on_node.end(),
                                   [&](const BoardCondition& c) { return c.type == want.type; });
    const bool known = prev != on_node.end();
    BoardCondition out = want;
    out.last_transition_time =
        known && prev->status == want.status && !prev->last_transition_time.empty()
            ? prev->last_transition_time
            : std::string(now);
    if (!known || prev->status != want.status || prev->reason != want.reason ||
        prev->message != want.message) {
      changed = true;
    }
    const bool was_true = known && prev->status == "True";
    // A problem that stops being present (...Now to ...SinceBoot) is better
    // news, not a warning: a board flapping between throttled and not posts
    // one Warning each time it comes back, and a Normal Event each time it
    // goes, never two Warnings a cycle.
    const bool ended_now = was_true && want.status == "True" && prev->reason.ends_with("Now") &&
                           want.reason.ends_with("SinceBoot");
    if (want.status == "True" && (!was_true || prev->reason != want.reason) && !ended_now) {
      decision.events.push_back({"Warning", want.reason, with_note(want.message)});
    } else if ((want.status != "True" && was_true) || ended_now) {
      decision.events.push_back({"Normal", want.reason, with_note(want.message)});
    }
    decision.write.push_back(std::move(out));
  }
  if (!changed) decision.write.clear();
  return decision;
}

json BoardConditionsApplyObject(const std::string& node,
                                const std::vector<BoardCondition>& conditions,
                                std::string_view now) {
  json list = json::array();
  for (const BoardCondition& c : conditions) {
    list.push_back({{"type", c.type},
                    {"status", c.status},
                    {"reason", c.reason},
                    {"message", c.message},
                    {"lastTransitionTime", c.last_transition_time},
                    {"lastHeartbeatTime", std::string(now)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", node}}},
          {"status", {{"conditions", std::move(list)}}}};
}

}  // namespace ballast::probe
