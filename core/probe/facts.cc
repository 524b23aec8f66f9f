#include "core/probe/facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/common/names.h"
#include "core/common/utf8.h"

namespace ballast::probe {
namespace {

// The longest text a fact keeps, in bytes.
constexpr size_t kMaxFactBytes = 256;

// Text read from the tree as a fact keeps it: at most kMaxFactBytes, cut
// between characters, every byte that is not UTF-8 (a Latin-1 model name)
// replaced by U+FFFD (common/utf8.h), so that the JSON, the labels and the
// Events made of it are valid whatever the files hold.
std::string Shown(std::string_view text) { return ToValidUtf8(Utf8Prefix(text, kMaxFactBytes)); }

// Reads facts out of a snapshot, collecting warnings.
class Deriver {
 public:
  explicit Deriver(const Snapshot& snapshot) : snapshot_(snapshot) {}

  ProbeResult Run() {
    Board();
    Cpu();
    Revision();
    Memory();
    WordSizes();
    PageSize();
    Os();
    Disk();
    Power();
    Temperature();
    return std::move(result_);
  }

 private:
  enum class Missing { kSilent, kWarn };

  // Adds a warning. The file's path (a directory entry of the tree) and
  // what was wrong (an error that names a path) are made valid UTF-8.
  void Warn(std::string fact, const std::string& file, std::string_view what,
            std::string_view fallback) {
    const std::string shown_file = ToValidUtf8(file);
    std::string message = ToValidUtf8(file.empty() ? what : fmt::format("{}: {}", file, what));
    message += fmt::format("; {}: {}", fact, fallback);
    result_.warnings.push_back({std::move(fact), shown_file, std::move(message)});
  }

  // The content of `path` when it was read whole (or, with `partial`, its
  // first bytes when too long); otherwise a warning and nullopt.
  std::optional<std::string_view> Text(const std::string& path, const char* fact,
                                       std::string_view fallback, Missing missing,
                                       bool partial = false) {
    const auto it = snapshot_.files.find(path);
    if (it == snapshot_.files.end() || it->second.state == FileRead::State::kMissing) {
      if (missing == Missing::kWarn) Warn(fact, path, "missing", fallback);
      return std::nullopt;
    }
    const FileRead& read = it->second;
    if (read.state == FileRead::State::kUnreadable) {
      Warn(fact, path, fmt::format("unreadable ({})", read.error), fallback);
      return std::nullopt;
    }
    if (read.state == FileRead::State::kTooLong && !partial) {
      Warn(fact, path, fmt::format("longer than the {} bytes read", read.content.size()), fallback);
      return std::nullopt;
    }
    return std::string_view(read.content);
  }

  // Keys of the snapshot matching "prefix*suffix" with no '/' in the '*',
  // whose file was read.
  std::vector<std::string> Matching(std::string_view prefix, std::string_view suffix) const {
    std::vector<std::string> keys;
    for (auto it = snapshot_.files.lower_bound(std::string(prefix));
         it != snapshot_.files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const std::string_view key = it->first;
      if (key.size() < prefix.size() + suffix.size() || !key.ends_with(suffix)) continue;
      const std::string_view middle =
          key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
      if (middle.empty() || middle.find('/') != std::string_view::npos) continue;
      if (it->second.state != FileRead::State::kMissing) keys.push_back(it->first);
    }
    return keys;
  }

  void Board();
  void Cpu();
  void Memory();
  void WordSizes();
  void PageSize();
  void Os();
  void Disk();
  void Power();
  void Throttling();
  void VoltAlarm();
  void Temperature();
  void Userland();
  void Revision();
  std::string RootDisk();
  void SdCard(const std::string& dir);

  const Snapshot& snapshot_;
  ProbeResult result_;
  Facts& facts_ = result_.facts;
  std::string cpuinfo_revision_;
};

void Deriver::Board() {
  constexpr const char* kModel = "proc/device-tree/model";
  if (auto text = Text(kModel, "board", "unknown", Missing::kSilent)) {
    auto model = ParseDeviceTreeString(*text);
    if (model.ok()) {
      facts_.board_model = Shown(*model);
      facts_.raspberry_pi = facts_.board_model.starts_with("Raspberry Pi");
    } else {
      Warn("board", kModel, model.status().message(), "unknown");
    }
  }
}

void Deriver::Cpu() {
  constexpr const char* kCpuinfo = "proc/cpuinfo";
  if (auto text = Text(kCpuinfo, "cpu-model", "unknown, label not set", Missing::kWarn, true)) {
    auto info = ParseCpuInfo(*text);
    if (info.ok()) {
      facts_.cpu_model = Shown(info->model);
      facts_.cpu_cores = info->processors;
      cpuinfo_revision_ = info->revision;
    } else {
      Warn("cpu-model", kCpuinfo, info.status().message(), "unknown, label not set");
    }
  }
  constexpr const char* kPresent = "sys/devices/system/cpu/present";
  if (auto text = Text(kPresent, "cpu-cores", "the processors of /proc/cpuinfo", Missing::kWarn)) {
    auto count = ParseCpuListCount(*text);
    if (count.ok()) {
      facts_.cpu_cores = *count;
    } else {
      Warn("cpu-cores", kPresent, count.status().message(), "the processors of /proc/cpuinfo");
    }
  }
  const auto freqs = Matching("sys/devices/system/cpu/", "/cpufreq/cpuinfo_max_freq");
  for (const std::string& path : freqs) {
    auto text = Text(path, "cpu-max-freq", "the other CPUs'", Missing::kSilent);
    if (!text) continue;
    auto khz = ParseUnsigned(*text);
    if (khz.ok()) {
      facts_.cpu_max_khz = std::max(facts_.cpu_max_khz, *khz);
    } else {
      Warn("cpu-max-freq", path, khz.status().message(), "the other CPUs'");
    }
  }
  if (freqs.empty()) {
    Warn("cpu-max-freq", "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
         "missing (no cpufreq)", "unknown, label not set");
  }
}

void Deriver::Memory() {
  constexpr const char* kMeminfo = "proc/meminfo";
  if (auto text = Text(kMeminfo, "ram", "unknown", Missing::kWarn)) {
    auto kb = ParseMemTotalKb(*text);
    if (kb.ok()) {
      facts_.mem_total_kb = *kb;
    } else {
      Warn("ram", kMeminfo, kb.status().message(), "unknown");
    }
  }
}

void Deriver::WordSizes() {
  constexpr const char* kArch = "proc/sys/kernel/arch";
  if (auto text = Text(kArch, "kernel-bits", "uname's machine when probing /", Missing::kWarn)) {
    const std::string_view machine = *text;
    auto bits = KernelBits(machine);
    if (bits.ok()) {
      facts_.kernel_machine = std::string(machine.substr(0, machine.find_last_not_of(" \n") + 1));
      facts_.kernel_bits = *bits;
    } else {
      Warn("kernel-bits", kArch, bits.status().message(), "uname's machine when probing /");
    }
  }
  if (facts_.kernel_bits == 0 && !snapshot_.live_machine.empty()) {
    auto bits = KernelBits(snapshot_.live_machine);
    if (bits.ok()) {
      facts_.kernel_machine = snapshot_.live_machine;
      facts_.kernel_bits = *bits;
    }
  }
  Userland();
}

// The userland's word size: the ELF class of the init binary, else of
// usr/bin/env (any binary of the userland says it; the chart mounts the
// host's /usr when / is not mounted, and some inits are scripts).
void Deriver::Userland() {
  const char* fallback = "usr/bin/env's";
  for (const char* path : {"sbin/init", "usr/bin/env"}) {
    const bool last = std::string_view(path) == "usr/bin/env";
    if (last) fallback = "the kernel's word size";
    auto bytes = Text(path, "os-bits", fallback, last ? Missing::kWarn : Missing::kSilent, true);
    if (!bytes) continue;
    auto elf = ParseElfHeader(*bytes);
    if (elf.ok()) {
      facts_.userland_bits = elf->bits;
      facts_.userland_machine = elf->machine;
      return;
    }
    Warn("os-bits", path, elf.status().message(), fallback);
  }
}

void Deriver::PageSize() {
  constexpr const char* kSmaps = "proc/self/smaps";
  const std::string fallback =
      snapshot_.live_page_size != 0 ? "the running system's page size" : "unknown";
  if (auto text = Text(kSmaps, "page-size", fallback, Missing::kWarn, true)) {
    auto size = ParseSmapsPageSize(*text);
    if (size.ok()) {
      facts_.page_size = *size;
    } else {
      Warn("page-size", kSmaps, size.status().message(), fallback);
    }
  }
  if (facts_.page_size == 0) facts_.page_size = snapshot_.live_page_size;
}

void Deriver::Os() {
  // os-release(5): /etc/os-release, else /usr/lib/os-release.
  std::string path = "etc/os-release";
  auto text = Text(path, "os-release", "", Missing::kSilent);
  if (!text) {
    path = "usr/lib/os-release";
    text = Text(path, "os-release", "unknown", Missing::kWarn);
  }
  if (text) {
    auto values = ParseOsRelease(*text);
    if (values.ok()) {
      const auto get = [&](const char* key) {
        const auto it = values->find(key);
        return it == values->end() ? std::string() : Shown(it->second);
      };
      facts_.os_id = get("ID");
      facts_.os_version_id = get("VERSION_ID");
      facts_.os_pretty_name = get("PRETTY_NAME");
    } else {
      Warn("os-release", path, values.status().message(), "unknown");
    }
  }
  constexpr const char* kIssue = "etc/rpi-issue";
  if (auto issue = Text(kIssue, "os-release", "os-release's ID-VERSION_ID", Missing::kSilent)) {
    auto date = ParseRpiIssueDate(*issue);
    if (date.ok()) {
      facts_.os_image_date = *date;
    } else {
      Warn("os-release", kIssue, date.status().message(), "os-release's ID-VERSION_ID");
    }
  }
}

void Deriver::Revision() {
  // The device tree's cell, else cpuinfo's Revision line.
  constexpr const char* kRevision = "proc/device-tree/system/linux,revision";
  std::optional<uint32_t> code;
  std::string source = kRevision;
  if (auto bytes = Text(kRevision, "board", "cpuinfo's Revision", Missing::kSilent)) {
    auto cell = ParseBigEndianCell(*bytes);
    if (cell.ok()) {
      code = *cell;
    } else {
      Warn("board", kRevision, cell.status().message(), "cpuinfo's Revision");
    }
  }
  if (!code && !cpuinfo_revision_.empty()) {
    source = "proc/cpuinfo";
    auto text = ParseRevisionText(cpuinfo_revision_);
    if (text.ok()) {
      code = *text;
    } else {
      Warn("board", source, fmt::format("Revision: {}", text.status().message()), "unknown");
    }
  }
  if (code) {
    auto board = DecodeRevision(*code);
    if (board.ok()) {
      facts_.board = *board;
      facts_.raspberry_pi = true;
    } else {
      Warn("board", source, board.status().message(), "unknown");
    }
  } else if (facts_.raspberry_pi) {
    Warn("board", kRevision, "missing, and no Revision in proc/cpuinfo", "unknown");
  }
}

// The disk named by the kernel's root=/dev/NAME, when it has a size file.
std::string Deriver::RootDisk() {
  auto cmdline = Text("proc/cmdline", "sd-gb", "", Missing::kSilent);
  if (!cmdline) return "";
  constexpr std::string_view kRoot = "root=/dev/";
  const size_t at = cmdline->find(kRoot);
  if (at == std::string_view::npos) return "";
  std::string_view name = cmdline->substr(at + kRoot.size());
  name = name.substr(0, std::min<size_t>(name.find_first_of(" \n"), 64));
  const std::string whole(name);
  if (snapshot_.files.count("sys/block/" + whole + "/size") != 0) return whole;
  // A partition: sda2 -> sda; mmcblk0p2, nvme0n1p2 -> mmcblk0, nvme0n1.
  std::string disk = whole;
  while (!disk.empty() && disk.back() >= '0' && disk.back() <= '9') disk.pop_back();
  if (disk.size() >= 2 && disk.back() == 'p' && disk[disk.size() - 2] >= '0' &&
      disk[disk.size() - 2] <= '9') {
    disk.pop_back();
  }
  return snapshot_.files.count("sys/block/" + disk + "/size") != 0 ? disk : "";
}

void Deriver::Disk() {
  std::string disk;
  const auto sizes = Matching("sys/block/", "/size");
  if (snapshot_.files.count("sys/block/mmcblk0/size") != 0) disk = "mmcblk0";
  if (disk.empty()) disk = RootDisk();
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
    Warn("sd-gb", "sys/block/*/size", "no disk found", "unknown, label not set");
    return;
  }
  const std::string dir = "sys/block/" + disk;
  facts_.boot_disk = Shown(disk);
  if (auto text = Text(dir + "/size", "sd-gb", "unknown, label not set", Missing::kWarn)) {
    auto sectors = ParseUnsigned(*text);
    if (sectors.ok() && *sectors > 0 && *sectors < (uint64_t{1} << 50)) {
      facts_.boot_disk_bytes = *sectors * 512;
    } else {
      Warn("sd-gb", dir + "/size",
           sectors.ok() ? "expected a positive size in 512-byte sectors"
                        : sectors.status().message(),
           "unknown, label not set");
    }
  }
  auto type = Text(dir + "/device/type", "sd-card", "", Missing::kSilent);
  if (type && type->substr(0, type->find_last_not_of(" \n") + 1) == "SD") SdCard(dir);
}

void Deriver::SdCard(const std::string& dir) {
  facts_.boot_disk_is_sd = true;
  const std::string manfid_path = dir + "/device/manfid";
  if (auto text = Text(manfid_path, "sd-card", "unknown maker", Missing::kWarn)) {
    auto id = ParseHexId(*text);
    if (id.ok()) {
      facts_.sd_manfid = fmt::format("{:#08x}", *id);
      facts_.sd_maker = SdManufacturerName(*id);
    } else {
      Warn("sd-card", manfid_path, id.status().message(), "unknown maker");
    }
  }
  const std::string date_path = dir + "/device/date";
  if (auto text = Text(date_path, "sd-card", "unknown date", Missing::kWarn)) {
    auto date = ParseSdDate(*text);
    if (date.ok()) {
      facts_.sd_date = *date;
    } else {
      Warn("sd-card", date_path, date.status().message(), "unknown date");
    }
  }
}

void Deriver::Power() {
  constexpr const char* kCurrent = "proc/device-tree/chosen/power/max_current";
  if (auto bytes = Text(kCurrent, "supply-current", "unknown", Missing::kSilent)) {
    auto ma = ParseBigEndianCell(*bytes);
    if (ma.ok() && *ma <= 100000) {
      facts_.supply_max_current_ma = *ma;
    } else {
      Warn("supply-current", kCurrent,
           ma.ok() ? fmt::format("{} mA is not a supply limit", *ma) : ma.status().message(),
           "unknown");
    }
  }
  VoltAlarm();
  Throttling();
}

void Deriver::Throttling() {
  // get_throttled under the firmware's platform device: soc:firmware on a
  // Pi 3 or 4, one level deeper on a Pi 5. The first in path order is used.
  constexpr std::string_view kPlatform = "sys/devices/platform/";
  constexpr std::string_view kUnknown = "unknown, gauges not exported";
  for (auto it = snapshot_.files.lower_bound(std::string(kPlatform));
       it != snapshot_.files.end() && it->first.starts_with(kPlatform); ++it) {
    if (!it->first.ends_with("/get_throttled") || it->second.state == FileRead::State::kMissing) {
      continue;
    }
    if (auto text = Text(it->first, "throttled", kUnknown, Missing::kSilent)) {
      auto bits = ParseThrottled(*text);
      if (bits.ok()) {
        facts_.throttled = *bits;
        facts_.throttled_file = Shown(it->first);
      } else {
        Warn("throttled", it->first, bits.status().message(), kUnknown);
      }
    }
    return;
  }
  if (facts_.raspberry_pi) {
    Warn("throttled", "sys/devices/platform/*/*firmware*/get_throttled",
         "missing (no firmware node)", kUnknown);
  }
}

// The rpi_volt hwmon device (Pi 4 and later kernels): its name file says
// "rpi_volt", its in0_lcrit_alarm is 1 while the supply is under-voltage.
// The first in path order is used.
void Deriver::VoltAlarm() {
  constexpr std::string_view kUnknown = "unknown";
  for (const std::string& name_path : Matching("sys/class/hwmon/", "/name")) {
    const auto name = Text(name_path, "under-voltage", kUnknown, Missing::kSilent);
    if (!name || Trim(*name) != "rpi_volt") continue;
    const std::string alarm_path =
        name_path.substr(0, name_path.size() - std::string_view("name").size()) + "in0_lcrit_alarm";
    if (auto text = Text(alarm_path, "under-voltage", kUnknown, Missing::kWarn)) {
      auto alarm = ParseFlag(*text);
      if (alarm.ok()) {
        facts_.under_voltage_alarm = *alarm;
        facts_.under_voltage_alarm_file = Shown(alarm_path);
      } else {
        Warn("under-voltage", alarm_path, alarm.status().message(), kUnknown);
      }
    }
    return;
  }
}

// The SoC's thermal zone: the first whose type names the CPU or the SoC
// (cpu-thermal on a Pi 4 or 5, bcm2835_thermal on older kernels,
// x86_pkg_temp on a PC), else the first zone in path order. Missing on a
// machine without thermal zones, silently.
void Deriver::Temperature() {
  constexpr std::string_view kUnknown = "unknown, gauge not exported";
  static constexpr std::string_view kSocTypes[] = {"cpu-thermal",     "cpu_thermal",
                                                   "soc-thermal",     "soc_thermal",
                                                   "bcm2835_thermal", "x86_pkg_temp"};
  std::string zone;
  for (const std::string& type_path : Matching("sys/class/thermal/", "/type")) {
    const auto type = Text(type_path, "soc-temperature", kUnknown, Missing::kSilent);
    if (!type) continue;
    const std::string_view name = Trim(*type);
    if (std::find(std::begin(kSocTypes), std::end(kSocTypes), name) != std::end(kSocTypes)) {
      zone = type_path.substr(0, type_path.size() - std::string_view("type").size());
      break;
    }
  }
  std::string temp_path = zone + "temp";
  if (zone.empty()) {
    const auto temps = Matching("sys/class/thermal/", "/temp");
    if (temps.empty()) return;
    temp_path = temps.front();
  }
  if (auto text = Text(temp_path, "soc-temperature", kUnknown, Missing::kSilent)) {
    auto celsius = ParseMilliCelsius(*text);
    if (celsius.ok()) {
      facts_.soc_temp_c = *celsius;
      facts_.soc_temp_file = Shown(temp_path);
    } else {
      Warn("soc-temperature", temp_path, celsius.status().message(), kUnknown);
    }
  }
}

}  // namespace

const std::vector<ProbeFile>& ProbeFiles() {
  static const std::vector<ProbeFile> files = {
      {"proc/device-tree/model", 4096},
      {"proc/device-tree/system/linux,revision", 64},
      {"proc/cpuinfo", 64 * 1024},
      {"sys/devices/system/cpu/present", 4096},
      {"sys/devices/system/cpu/cpu*/cpufreq/cpuinfo_max_freq", 64},
      {"proc/meminfo", 16 * 1024},
      {"proc/sys/kernel/arch", 64},
      {"sbin/init", 64},
      {"usr/bin/env", 64},
      {"proc/self/smaps", 16 * 1024},
      {"etc/os-release", 16 * 1024},
      {"usr/lib/os-release", 16 * 1024},
      {"etc/rpi-issue", 4096},
      {"proc/cmdline", 4096},
      {"sys/block/*/size", 64},
      {"sys/block/*/device/type", 64},
      {"sys/block/*/device/manfid", 64},
      {"sys/block/*/device/date", 64},
      {"proc/device-tree/chosen/power/max_current", 64},
      // The firmware's node: narrowed to *firmware* so that the glob's
      // bound on matches never hides it among a Pi 5's many devices.
      {"sys/devices/platform/*firmware*/get_throttled", 64},
      {"sys/devices/platform/*/*firmware*/get_throttled", 64},
      {"sys/class/hwmon/hwmon*/name", 64},
      {"sys/class/hwmon/hwmon*/in0_lcrit_alarm", 64},
      {"sys/class/thermal/thermal_zone*/type", 64},
      {"sys/class/thermal/thermal_zone*/temp", 64},
  };
  return files;
}

ProbeResult DeriveFacts(const Snapshot& snapshot) { return Deriver(snapshot).Run(); }

}  // namespace ballast::probe
