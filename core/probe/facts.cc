// A node's facts derived from a snapshot of its files (facts.h).
#include "core/probe/facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/common/names.h"
#include "core/probe/device_facts.h"
#include "core/probe/snapshot_reader.h"

namespace ballast::probe {
namespace {

using Missing = SnapshotReader::Missing;

// Reads the machine's own facts out of a snapshot (the board, CPU, memory,
// word sizes, page size and OS), then those of its devices
// (device_facts.h), collecting warnings.
class Deriver {
 public:
  explicit Deriver(const Snapshot& snapshot) : reader_(snapshot) {}

  ProbeResult Run() {
    Board();
    Cpu();
    Revision();
    Memory();
    WordSizes();
    PageSize();
    Os();
    DeriveBootDisk(reader_, facts_);
    DerivePower(reader_, facts_);
    DeriveTemperature(reader_, facts_);
    DeriveMemoryCgroup(reader_, facts_);
    result_.warnings = reader_.TakeWarnings();
    return std::move(result_);
  }

 private:
  void Board();
  void Cpu();
  void Memory();
  void WordSizes();
  void PageSize();
  void Os();
  void Userland();
  void Revision();

  SnapshotReader reader_;
  ProbeResult result_;
  Facts& facts_ = result_.facts;
  std::string cpuinfo_revision_;
};

void Deriver::Board() {
  constexpr const char* kModel = "proc/device-tree/model";
  if (auto text = reader_.Text(kModel, "board", "unknown", Missing::kSilent)) {
    auto model = ParseDeviceTreeString(*text);
    if (model.ok()) {
      facts_.board_model = Shown(*model);
      facts_.raspberry_pi = facts_.board_model.starts_with("Raspberry Pi");
    } else {
      reader_.Warn("board", kModel, model.status().message(), "unknown");
    }
  }
}

void Deriver::Cpu() {
  constexpr const char* kCpuinfo = "proc/cpuinfo";
  if (auto text =
          reader_.Text(kCpuinfo, "cpu-model", "unknown, label not set", Missing::kWarn, true)) {
    auto info = ParseCpuInfo(*text);
    if (info.ok()) {
      facts_.cpu_model = Shown(info->model);
      facts_.cpu_cores = info->processors;
      cpuinfo_revision_ = info->revision;
    } else {
      reader_.Warn("cpu-model", kCpuinfo, info.status().message(), "unknown, label not set");
    }
  }
  constexpr const char* kPresent = "sys/devices/system/cpu/present";
  if (auto text =
          reader_.Text(kPresent, "cpu-cores", "the processors of /proc/cpuinfo", Missing::kWarn)) {
    auto count = ParseCpuListCount(*text);
    if (count.ok()) {
      facts_.cpu_cores = *count;
    } else {
      reader_.Warn("cpu-cores", kPresent, count.status().message(),
                   "the processors of /proc/cpuinfo");
    }
  }
  const auto freqs = reader_.Matching("sys/devices/system/cpu/", "/cpufreq/cpuinfo_max_freq");
  for (const std::string& path : freqs) {
    auto text = reader_.Text(path, "cpu-max-freq", "the other CPUs'", Missing::kSilent);
    if (!text) continue;
    auto khz = ParseUnsigned(*text);
    if (khz.ok()) {
      facts_.cpu_max_khz = std::max(facts_.cpu_max_khz, *khz);
    } else {
      reader_.Warn("cpu-max-freq", path, khz.status().message(), "the other CPUs'");
    }
  }
  if (freqs.empty()) {
    reader_.Warn("cpu-max-freq", "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
                 "missing (no cpufreq)", "unknown, label not set");
  }
}

void Deriver::Memory() {
  constexpr const char* kMeminfo = "proc/meminfo";
  if (auto text = reader_.Text(kMeminfo, "ram", "unknown", Missing::kWarn)) {
    auto kb = ParseMemTotalKb(*text);
    if (kb.ok()) {
      facts_.mem_total_kb = *kb;
    } else {
      reader_.Warn("ram", kMeminfo, kb.status().message(), "unknown");
    }
  }
}

void Deriver::WordSizes() {
  constexpr const char* kArch = "proc/sys/kernel/arch";
  if (auto text =
          reader_.Text(kArch, "kernel-bits", "uname's machine when probing /", Missing::kWarn)) {
    const std::string_view machine = *text;
    auto bits = KernelBits(machine);
    if (bits.ok()) {
      facts_.kernel_machine = std::string(machine.substr(0, machine.find_last_not_of(" \n") + 1));
      facts_.kernel_bits = *bits;
    } else {
      reader_.Warn("kernel-bits", kArch, bits.status().message(), "uname's machine when probing /");
    }
  }
  if (facts_.kernel_bits == 0 && !reader_.snapshot().live_machine.empty()) {
    auto bits = KernelBits(reader_.snapshot().live_machine);
    if (bits.ok()) {
      facts_.kernel_machine = reader_.snapshot().live_machine;
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
    auto bytes =
        reader_.Text(path, "os-bits", fallback, last ? Missing::kWarn : Missing::kSilent, true);
    if (!bytes) continue;
    auto elf = ParseElfHeader(*bytes);
    if (elf.ok()) {
      facts_.userland_bits = elf->bits;
      facts_.userland_machine = elf->machine;
      return;
    }
    reader_.Warn("os-bits", path, elf.status().message(), fallback);
  }
}

void Deriver::PageSize() {
  constexpr const char* kSmaps = "proc/self/smaps";
  const std::string fallback =
      reader_.snapshot().live_page_size != 0 ? "the running system's page size" : "unknown";
  if (auto text = reader_.Text(kSmaps, "page-size", fallback, Missing::kWarn, true)) {
    auto size = ParseSmapsPageSize(*text);
    if (size.ok()) {
      facts_.page_size = *size;
    } else {
      reader_.Warn("page-size", kSmaps, size.status().message(), fallback);
    }
  }
  if (facts_.page_size == 0) facts_.page_size = reader_.snapshot().live_page_size;
}

void Deriver::Os() {
  // os-release(5): /etc/os-release, else /usr/lib/os-release.
  std::string path = "etc/os-release";
  auto text = reader_.Text(path, "os-release", "", Missing::kSilent);
  if (!text) {
    path = "usr/lib/os-release";
    text = reader_.Text(path, "os-release", "unknown", Missing::kWarn);
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
      reader_.Warn("os-release", path, values.status().message(), "unknown");
    }
  }
  constexpr const char* kIssue = "etc/rpi-issue";
  if (auto issue =
          reader_.Text(kIssue, "os-release", "os-release's ID-VERSION_ID", Missing::kSilent)) {
    auto date = ParseRpiIssueDate(*issue);
    if (date.ok()) {
      facts_.os_image_date = *date;
    } else {
      reader_.Warn("os-release", kIssue, date.status().message(), "os-release's ID-VERSION_ID");
    }
  }
}

void Deriver::Revision() {
  // The device tree's cell, else cpuinfo's Revision line.
  constexpr const char* kRevision = "proc/device-tree/system/linux,revision";
  std::optional<uint32_t> code;
  std::string source = kRevision;
  if (auto bytes = reader_.Text(kRevision, "board", "cpuinfo's Revision", Missing::kSilent)) {
    auto cell = ParseBigEndianCell(*bytes);
    if (cell.ok()) {
      code = *cell;
    } else {
      reader_.Warn("board", kRevision, cell.status().message(), "cpuinfo's Revision");
    }
  }
  if (!code && !cpuinfo_revision_.empty()) {
    source = "proc/cpuinfo";
    auto text = ParseRevisionText(cpuinfo_revision_);
    if (text.ok()) {
      code = *text;
    } else {
      reader_.Warn("board", source, fmt::format("Revision: {}", text.status().message()),
                   "unknown");
    }
  }
  if (code) {
    auto board = DecodeRevision(*code);
    if (board.ok()) {
      facts_.board = *board;
      facts_.raspberry_pi = true;
    } else {
      reader_.Warn("board", source, board.status().message(), "unknown");
    }
  } else if (facts_.raspberry_pi) {
    reader_.Warn("board", kRevision, "missing, and no Revision in proc/cpuinfo", "unknown");
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
      {"sys/fs/cgroup/cgroup.controllers", 4096},
      {"proc/cgroups", 16 * 1024},
  };
  return files;
}

ProbeResult DeriveFacts(const Snapshot& snapshot) { return Deriver(snapshot).Run(); }

}  // namespace ballast::probe
