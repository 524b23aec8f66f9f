// Node facts: what the probe learns of a machine from its kernel, firmware and
// OS files (docs/probe.md), derived purely from a Snapshot of those files.
//
// The files are read by worker/probe/tree_reader.h from a root directory (`/`,
// a host's root mounted into a pod, or a captured tree under tests/), each
// bounded in size, and handed over as a Snapshot keyed by the path relative
// to the root. DeriveFacts never fails: a file that is missing, unreadable,
// too long or garbled leaves its fact at the default documented below (0 or
// "": unknown) and adds a Warning naming the fact and the file; every other
// fact is still derived.
//
// Every string of the facts and of the warnings is valid UTF-8 whatever the
// files hold: text read from them (a model name, PRETTY_NAME, a path of the
// tree) is cut to 256 bytes between characters and each byte that is not
// UTF-8 is replaced by U+FFFD (common/utf8.h), so a Latin-1
// "ACME board \xe9" is kept as "ACME board \uFFFD".
//
// Thread-safety: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/probe/parse.h"

namespace ballast::probe {

// One file as the reader found it.
struct FileRead {
  enum class State {
    kOk,          // content is the whole file
    kMissing,     // no such file (or a dangling link)
    kUnreadable,  // it exists but could not be read; `error` says why
    kTooLong,     // longer than its limit: content holds the first `limit` bytes
  };
  State state = State::kMissing;
  std::string content;
  std::string error;
};

// The files of one probe, keyed by their path relative to the root
// ("proc/cpuinfo"), plus what only the running system can say.
struct Snapshot {
  std::map<std::string, FileRead> files;
  // uname's machine and sysconf's page size: set only when the root is the
  // running system's ("/"), used when the tree's own files lack them.
  std::string live_machine;
  uint64_t live_page_size = 0;
};

// A file the probe reads: a path relative to the root whose components may
// hold '*' (matched against directory entries, at most kMaxGlobMatches), and
// how many bytes of it are read at most.
struct ProbeFile {
  const char* pattern;
  size_t max_bytes;
};
inline constexpr size_t kMaxGlobMatches = 256;

// Every file the probe reads, in the order docs/probe.md lists them.
const std::vector<ProbeFile>& ProbeFiles();

// Something the probe could not learn, or learnt in part.
struct Warning {
  std::string fact;     // "ram", "cpu-model", ... (docs/probe.md)
  std::string file;     // the file relative to the root, "" when none applies
  std::string message;  // "<file>: <what was wrong>; <fact>: <the default used>"
};

struct Facts {
  // Board (device tree and revision code). `board` is set when the revision
  // code decodes; board_model is the device tree's model string.
  std::string board_model;
  std::optional<BoardRevision> board;
  bool raspberry_pi = false;  // the model or the revision code says so

  // CPU: cpu_model is the core ("cortex-a72") or the x86 model name.
  std::string cpu_model;
  unsigned cpu_cores = 0;
  uint64_t cpu_max_khz = 0;  // the highest cpuinfo_max_freq of any CPU

  uint64_t mem_total_kb = 0;

  // Word sizes: the kernel's (its machine name) and the userland's (the ELF
  // class of /sbin/init, else of /usr/bin/env), which differ on a 32-bit OS
  // with a 64-bit kernel.
  std::string kernel_machine;
  int kernel_bits = 0;
  int userland_bits = 0;
  std::string userland_machine;  // "arm", "arm64", "amd64", ...
  uint64_t page_size = 0;        // bytes

  // OS: os-release's ID, VERSION_ID and PRETTY_NAME; the Raspberry Pi OS
  // image date from /etc/rpi-issue ("2021-01-11"), "" elsewhere.
  std::string os_id;
  std::string os_version_id;
  std::string os_pretty_name;
  std::string os_image_date;

  // Boot disk: the SD card when there is one (mmcblk0), else the disk the
  // kernel's root= names, else the first real block device.
  std::string boot_disk;
  uint64_t boot_disk_bytes = 0;
  bool boot_disk_is_sd = false;
  std::string sd_manfid;  // "0x000003"
  std::string sd_maker;   // "SanDisk", "" when the id is not a well-known one
  std::string sd_date;    // "2020-08"

  // Power: the supply current limit the firmware reports (Pi 5,
  // chosen/power/max_current; 0 when not exposed) and get_throttled.
  uint32_t supply_max_current_ma = 0;
  std::optional<Throttled> throttled;
  std::string throttled_file;
  // The rpi_volt hwmon device's under-voltage alarm (in0_lcrit_alarm), where
  // the kernel has that driver: under-voltage now, also where get_throttled
  // is not exposed. It has no history since boot.
  std::optional<bool> under_voltage_alarm;
  std::string under_voltage_alarm_file;

  // The SoC's temperature in degrees Celsius from its thermal zone (the zone
  // whose type names the CPU or SoC, else the first zone), and the zone's
  // temp file. Unknown where the kernel exposes no thermal zone (a VM).
  std::optional<double> soc_temp_c;
  std::string soc_temp_file;

  // The memory cgroup controller, which the kubelet and k3s need: whether
  // the kernel offers it, from the root's cgroup.controllers (cgroup v2),
  // else /proc/cgroups (v1), and the file that said so; unknown where
  // neither was read. Where it is missing, the word of the kernel command
  // line that switched it off ("cgroup_disable=memory", "cgroup_memory=0"),
  // else "" (a kernel that leaves it off unless told, as Raspberry Pi OS's
  // did, or one built without it).
  std::optional<bool> memory_cgroup;
  std::string memory_cgroup_file;
  std::string memory_cgroup_disabled_by;
};

struct ProbeResult {
  Facts facts;
  std::vector<Warning> warnings;
};

// Derives every fact from `snapshot`. Never fails; see the file comment.
ProbeResult DeriveFacts(const Snapshot& snapshot);

}  // namespace ballast::probe
