#include "core/probe/facts_json.h"

#include <fmt/format.h>

namespace ballast::probe {
namespace {

using nlohmann::ordered_json;

// A string fact, or null when unknown.
ordered_json Text(const std::string& value) {
  return value.empty() ? ordered_json(nullptr) : ordered_json(value);
}
ordered_json Number(uint64_t value) {
  return value == 0 ? ordered_json(nullptr) : ordered_json(value);
}

ordered_json BoardJson(const Facts& facts) {
  ordered_json board;
  board["model"] = Text(facts.board_model);
  board["raspberry_pi"] = facts.raspberry_pi;
  if (facts.board) {
    board["revision"] = fmt::format("{:06x}", facts.board->code);
    board["type"] = facts.board->model;
    board["soc"] = facts.board->soc;
    board["ram_mb"] = facts.board->ram_mb;
    board["maker"] = facts.board->maker;
  } else {
    for (const char* key : {"revision", "type", "soc", "ram_mb", "maker"}) board[key] = nullptr;
  }
  return board;
}

ordered_json PowerJson(const Facts& facts) {
  ordered_json power;
  power["supply_max_current_ma"] = Number(facts.supply_max_current_ma);
  if (facts.under_voltage_alarm) {
    power["under_voltage_alarm"] = {{"file", facts.under_voltage_alarm_file},
                                    {"under_voltage_now", *facts.under_voltage_alarm}};
  } else {
    power["under_voltage_alarm"] = nullptr;
  }
  if (!facts.throttled) {
    power["throttled"] = nullptr;
    return power;
  }
  const Throttled& t = *facts.throttled;
  power["throttled"] = {
      {"file", facts.throttled_file},
      {"bits", fmt::format("{:#x}", t.bits)},
      {"under_voltage_now", t.under_voltage_now()},
      {"freq_capped_now", t.freq_capped_now()},
      {"throttled_now", t.throttled_now()},
      {"soft_temp_limit_now", t.soft_temp_limit_now()},
      {"under_voltage_since_boot", t.under_voltage_since_boot()},
      {"freq_capped_since_boot", t.freq_capped_since_boot()},
      {"throttled_since_boot", t.throttled_since_boot()},
      {"soft_temp_limit_since_boot", t.soft_temp_limit_since_boot()},
  };
  return power;
}

}  // namespace

ordered_json FactsToJson(const Facts& facts) {
  ordered_json out;
  out["board"] = BoardJson(facts);
  out["cpu"] = {{"model", Text(facts.cpu_model)},
                {"cores", Number(facts.cpu_cores)},
                {"max_khz", Number(facts.cpu_max_khz)}};
  out["memory"] = {{"total_kb", Number(facts.mem_total_kb)},
                   {"page_size", Number(facts.page_size)}};
  out["kernel"] = {{"machine", Text(facts.kernel_machine)},
                   {"bits", Number(static_cast<uint64_t>(facts.kernel_bits))}};
  out["userland"] = {{"machine", Text(facts.userland_machine)},
                     {"bits", Number(static_cast<uint64_t>(facts.userland_bits))}};
  out["os"] = {{"id", Text(facts.os_id)},
               {"version_id", Text(facts.os_version_id)},
               {"pretty_name", Text(facts.os_pretty_name)},
               {"image_date", Text(facts.os_image_date)}};
  out["disk"] = {{"name", Text(facts.boot_disk)},    {"bytes", Number(facts.boot_disk_bytes)},
                 {"sd_card", facts.boot_disk_is_sd}, {"sd_manfid", Text(facts.sd_manfid)},
                 {"sd_maker", Text(facts.sd_maker)}, {"sd_date", Text(facts.sd_date)}};
  out["power"] = PowerJson(facts);
  if (facts.soc_temp_c) {
    out["temperature"] = {{"file", facts.soc_temp_file}, {"soc_celsius", *facts.soc_temp_c}};
  } else {
    out["temperature"] = {{"file", nullptr}, {"soc_celsius", nullptr}};
  }
  if (facts.memory_cgroup) {
    out["cgroup"] = {{"file", facts.memory_cgroup_file},
                     {"memory", *facts.memory_cgroup},
                     {"memory_disabled_by", Text(facts.memory_cgroup_disabled_by)}};
  } else {
    out["cgroup"] = {{"file", nullptr}, {"memory", nullptr}, {"memory_disabled_by", nullptr}};
  }
  return out;
}

ordered_json WarningsToJson(const std::vector<Warning>& warnings) {
  ordered_json out = ordered_json::array();
  for (const Warning& warning : warnings) {
    out.push_back({{"fact", warning.fact}, {"file", warning.file}, {"message", warning.message}});
  }
  return out;
}

}  // namespace ballast::probe
