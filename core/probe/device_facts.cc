// The facts of a node's devices, derived from a probe's snapshot
// (device_facts.h).
#include "core/probe/device_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

namespace ballast::probe {
namespace {

using Missing = SnapshotReader::Missing;

// The disk named by the kernel's root=/dev/NAME, when it has a size file.
std::string RootDisk(SnapshotReader& reader) {
  auto cmdline = reader.Text("proc/cmdline", "sd-gb", "", Missing::kSilent);
  if (!cmdline) return "";
  constexpr std::string_view kRoot = "root=/dev/";
  const size_t at = cmdline->find(kRoot);
  if (at == std::string_view::npos) return "";
  std::string_view name = cmdline->substr(at + kRoot.size());
  name = name.substr(0, std::min<size_t>(name.find_first_of(" \n"), 64));
  const std::string whole(name);
  if (reader.Has("sys/block/" + whole + "/size")) return whole;
  // A partition: sda2 -> sda; mmcblk0p2, nvme0n1p2 -> mmcblk0, nvme0n1.
  std::string disk = whole;
  while (!disk.empty() && disk.back() >= '0' && disk.back() <= '9') disk.pop_back();
  if (disk.size() >= 2 && disk.back() == 'p' && disk[disk.size() - 2] >= '0' &&
      disk[disk.size() - 2] <= '9') {
    disk.pop_back();
  }
  return reader.Has("sys/block/" + disk + "/size") ? disk : "";
}

// The SD card's maker and date, for the disk at `dir` that is one.
void SdCard(SnapshotReader& reader, const std::string& dir, Facts& facts) {
  facts.boot_disk_is_sd = true;
  const std::string manfid_path = dir + "/device/manfid";
  if (auto text = reader.Text(manfid_path, "sd-card", "unknown maker", Missing::kWarn)) {
    auto id = ParseHexId(*text);
    if (id.ok()) {
      facts.sd_manfid = fmt::format("{:#08x}", *id);
      facts.sd_maker = SdManufacturerName(*id);
    } else {
      reader.Warn("sd-card", manfid_path, id.status().message(), "unknown maker");
    }
  }
  const std::string date_path = dir + "/device/date";
  if (auto text = reader.Text(date_path, "sd-card", "unknown date", Missing::kWarn)) {
    auto date = ParseSdDate(*text);
    if (date.ok()) {
      facts.sd_date = *date;
    } else {
      reader.Warn("sd-card", date_path, date.status().message(), "unknown date");
    }
  }
}

// The firmware's get_throttled flags.
void Throttling(SnapshotReader& reader, Facts& facts) {
  // get_throttled under the firmware's platform device: soc:firmware on a
  // Pi 3 or 4, one level deeper on a Pi 5. The first in path order is used.
  constexpr std::string_view kPlatform = "sys/devices/platform/";
  constexpr std::string_view kUnknown = "unknown, gauges not exported";
  for (auto it = reader.snapshot().files.lower_bound(std::string(kPlatform));
       it != reader.snapshot().files.end() && it->first.starts_with(kPlatform); ++it) {
    if (!it->first.ends_with("/get_throttled") || it->second.state == FileRead::State::kMissing) {
      continue;
    }
    if (auto text = reader.Text(it->first, "throttled", kUnknown, Missing::kSilent)) {
      auto bits = ParseThrottled(*text);
      if (bits.ok()) {
        facts.throttled = *bits;
        facts.throttled_file = Shown(it->first);
      } else {
        reader.Warn("throttled", it->first, bits.status().message(), kUnknown);
      }
    }
    return;
  }
  if (facts.raspberry_pi) {
    reader.Warn("throttled", "sys/devices/platform/*/*firmware*/get_throttled",
                "missing (no firmware node)", kUnknown);
  }
}

// The rpi_volt hwmon device (Pi 4 and later kernels): its name file says
// "rpi_volt", its in0_lcrit_alarm is 1 while the supply is under-voltage.
// The first in path order is used.
void VoltAlarm(SnapshotReader& reader, Facts& facts) {
  constexpr std::string_view kUnknown = "unknown";
  for (const std::string& name_path : reader.Matching("sys/class/hwmon/", "/name")) {
    const auto name = reader.Text(name_path, "under-voltage", kUnknown, Missing::kSilent);
    if (!name || Trim(*name) != "rpi_volt") continue;
    const std::string alarm_path =
        name_path.substr(0, name_path.size() - std::string_view("name").size()) + "in0_lcrit_alarm";
    if (auto text = reader.Text(alarm_path, "under-voltage", kUnknown, Missing::kWarn)) {
      auto alarm = ParseFlag(*text);
      if (alarm.ok()) {
        facts.under_voltage_alarm = *alarm;
        facts.under_voltage_alarm_file = Shown(alarm_path);
      } else {
        reader.Warn("under-voltage", alarm_path, alarm.status().message(), kUnknown);
      }
    }
    return;
  }
}

}  // namespace

void DeriveBootDisk(SnapshotReader& reader, Facts& facts) {
  std::string disk;
  const auto sizes = reader.Matching("sys/block/", "/size");
  if (reader.Has("sys/block/mmcblk0/size")) disk = "mmcblk0";
  if (disk.empty()) disk = RootDisk(reader);
  for (size_t i = 0; disk.empty() && i < sizes.size(); ++i) {
    const std::string name = sizes[i].substr(10, sizes[i].size() - 15);
    static constexpr std::string_view kVirtual[] = {"loop", "ram", "zram", "dm-", "md",
                                                    "sr",   "nbd", "fd",   "mtd"};
    if (std::none_of(std::begin(kVirtual), std::end(kVirtual),
                     [&](std::string_view v) { return name.starts_with(v); })) {
      disk = name;
    }
  }
  if (disk.empty()) {
    reader.Warn("sd-gb", "sys/block/*/size", "no disk found", "unknown, label not set");
    return;
  }
  const std::string dir = "sys/block/" + disk;
  facts.boot_disk = Shown(disk);
  if (auto text = reader.Text(dir + "/size", "sd-gb", "unknown, label not set", Missing::kWarn)) {
    auto sectors = ParseUnsigned(*text);
    if (sectors.ok() && *sectors > 0 && *sectors < (uint64_t{1} << 50)) {
      facts.boot_disk_bytes = *sectors * 512;
    } else {
      reader.Warn("sd-gb", dir + "/size",
                  sectors.ok() ? "expected a positive size in 512-byte sectors"
                               : sectors.status().message(),
                  "unknown, label not set");
    }
  }
  auto type = reader.Text(dir + "/device/type", "sd-card", "", Missing::kSilent);
  if (type && type->substr(0, type->find_last_not_of(" \n") + 1) == "SD")
    SdCard(reader, dir, facts);
}

void DerivePower(SnapshotReader& reader, Facts& facts) {
  constexpr const char* kCurrent = "proc/device-tree/chosen/power/max_current";
  if (auto bytes = reader.Text(kCurrent, "supply-current", "unknown", Missing::kSilent)) {
    auto ma = ParseBigEndianCell(*bytes);
    if (ma.ok() && *ma <= 100000) {
      facts.supply_max_current_ma = *ma;
    } else {
      reader.Warn("supply-current", kCurrent,
                  ma.ok() ? fmt::format("{} mA is not a supply limit", *ma) : ma.status().message(),
                  "unknown");
    }
  }
  VoltAlarm(reader, facts);
  Throttling(reader, facts);
}

// The SoC's thermal zone: the first whose type names the CPU or the SoC
// (cpu-thermal on a Pi 4 or 5, bcm2835_thermal on older kernels,
// x86_pkg_temp on a PC), else the first zone in path order. Missing on a
// machine without thermal zones, silently.
void DeriveTemperature(SnapshotReader& reader, Facts& facts) {
  constexpr std::string_view kUnknown = "unknown, gauge not exported";
  static constexpr std::string_view kSocTypes[] = {"cpu-thermal",     "cpu_thermal",
                                                   "soc-thermal",     "soc_thermal",
                                                   "bcm2835_thermal", "x86_pkg_temp"};
  std::string zone;
  for (const std::string& type_path : reader.Matching("sys/class/thermal/", "/type")) {
    const auto type = reader.Text(type_path, "soc-temperature", kUnknown, Missing::kSilent);
    if (!type) continue;
    const std::string_view name = Trim(*type);
    if (std::find(std::begin(kSocTypes), std::end(kSocTypes), name) != std::end(kSocTypes)) {
      zone = type_path.substr(0, type_path.size() - std::string_view("type").size());
      break;
    }
  }
  std::string temp_path = zone + "temp";
  if (zone.empty()) {
    const auto temps = reader.Matching("sys/class/thermal/", "/temp");
    if (temps.empty()) return;
    temp_path = temps.front();
  }
  if (auto text = reader.Text(temp_path, "soc-temperature", kUnknown, Missing::kSilent)) {
    auto celsius = ParseMilliCelsius(*text);
    if (celsius.ok()) {
      facts.soc_temp_c = *celsius;
      facts.soc_temp_file = Shown(temp_path);
    } else {
      reader.Warn("soc-temperature", temp_path, celsius.status().message(), kUnknown);
    }
  }
}

namespace {

// The memory controller's state in `path`, read by `parse`; nullopt (with a
// warning when the file was there but garbled) otherwise.
std::optional<ControllerState> ReadController(
    SnapshotReader& reader, const char* path, std::string_view fallback,
    StatusOr<ControllerState> (*parse)(std::string_view)) {
  const auto text = reader.Text(path, "memory-cgroup", fallback, Missing::kSilent);
  if (!text) return std::nullopt;
  auto state = parse(*text);
  if (!state.ok()) {
    reader.Warn("memory-cgroup", path, state.status().message(), fallback);
    return std::nullopt;
  }
  return *state;
}

}  // namespace

void DeriveMemoryCgroup(SnapshotReader& reader, Facts& facts) {
  constexpr const char* kControllers = "sys/fs/cgroup/cgroup.controllers";
  constexpr const char* kCgroups = "proc/cgroups";
  const char* file = kControllers;
  auto state = ReadController(reader, kControllers, "proc/cgroups", ParseCgroupControllersMemory);
  if (!state) {
    file = kCgroups;
    state = ReadController(reader, kCgroups, "unknown, no condition", ParseProcCgroupsMemory);
  }
  if (!state) return;
  facts.memory_cgroup = *state == ControllerState::kEnabled;
  facts.memory_cgroup_file = file;
  if (*facts.memory_cgroup) return;
  if (auto cmdline = reader.Text("proc/cmdline", "memory-cgroup", "", Missing::kSilent)) {
    // A word of the command line, cut to keep the condition's message short.
    facts.memory_cgroup_disabled_by = Shown(MemoryCgroupDisabledBy(*cmdline).substr(0, 64));
  }
}

}  // namespace ballast::probe
