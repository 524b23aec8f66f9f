// The node probe's parsers: each turns the text (or bytes) of one kernel,
// firmware or OS file into the fact it carries. They are the pure half of
// `ballast-worker probe` (docs/probe.md): the files are read elsewhere
// (worker/probe/tree_reader.h), bounded in size, and handed over as strings.
//
// Every parser accepts any bytes at all. It returns the fact, or Invalid with
// a message that says what was expected and what was got (the caller adds
// the file's name); none throws, none allocates more than its input.
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::probe {

// A Raspberry Pi board revision code, decoded by the scheme Raspberry Pi
// documents ("Raspberry Pi revision codes"): new-style codes carry the type,
// processor, maker and memory size in bit fields (bit 23 set); the old-style
// codes of the first boards (0002 to 0015) are a table.
struct BoardRevision {
  uint32_t code = 0;      // as read, e.g. 0xc03111
  std::string model;      // "4B", "3B", "5", "Zero 2 W", "CM4", ...
  std::string soc;        // "BCM2711"
  uint64_t ram_mb = 0;    // 1024, 2048, ...
  std::string maker;      // "Sony UK", "Embest", ...
  unsigned revision = 0;  // the board's revision number, the low four bits (new style)
};

// `text` without the spaces, tabs and line ends around it.
std::string_view Trim(std::string_view text);

// Decodes `code`. Returns the board, or Invalid for an old-style code not in
// the table or a new-style one whose type, processor, memory or maker field
// is not one Raspberry Pi has published.
StatusOr<BoardRevision> DecodeRevision(uint32_t code);

// Reads a revision code written as text: 4 to 8 hex digits, an optional 0x,
// surrounding white space ignored ("c03111", "0x00a02082", "000e").
// Returns the number, or Invalid.
StatusOr<uint32_t> ParseRevisionText(std::string_view text);

// A big-endian 32-bit cell of the device tree (linux,revision,
// chosen/power/max_current): exactly 4 bytes. Returns it, or Invalid for any
// other length.
StatusOr<uint32_t> ParseBigEndianCell(std::string_view bytes);

// A NUL-terminated device-tree string (the `model` property): the text up to
// the first NUL, surrounding white space removed. Returns it, or Invalid when
// empty or holding a control byte.
StatusOr<std::string> ParseDeviceTreeString(std::string_view bytes);

// What /proc/cpuinfo says of the first processor and how many there are.
struct CpuInfo {
  std::string model;        // "cortex-a72", or the x86 "model name" as written
  std::string arm_part;     // "0xd08" on ARM, "" elsewhere
  std::string revision;     // the Raspberry Pi "Revision" line, "" when absent
  unsigned processors = 0;  // "processor" lines
  double mhz = 0;           // x86 "cpu MHz" of the first processor (current, not max)
};

// Parses /proc/cpuinfo (ARM, 32- or 64-bit kernels, and x86). The ARM core
// comes from "CPU implementer" and "CPU part" (Arm Ltd's part numbers,
// cortex-a53 = 0xd03, ...; an unknown one gives "arm-<implementer>-<part>").
// Returns Invalid when there is neither an ARM part nor a model name.
StatusOr<CpuInfo> ParseCpuInfo(std::string_view text);

// Returns the name of the Arm core `part` (e.g. "0xd08" -> "cortex-a72") when
// the implementer is Arm Ltd (0x41) and the part is known, else "".
std::string ArmCoreName(std::string_view implementer, std::string_view part);

// The most MemTotal a node's /proc/meminfo may say: 2^40 kB (1 PiB). A
// larger figure is garbled, and in bytes (x 1024) it would not even fit 64
// bits past 2^54 kB: the memory gauge read 1024 for 2^54 + 1 kB.
inline constexpr uint64_t kMaxMemTotalKb = uint64_t{1} << 40;

// Parses /proc/meminfo. Returns MemTotal in kB (1 to kMaxMemTotalKb), or Invalid.
StatusOr<uint64_t> ParseMemTotalKb(std::string_view text);

// Parses a CPU list such as /sys/devices/system/cpu/present: "0-3", "0,2-5".
// Returns how many CPUs it names (at most 65536), or Invalid.
StatusOr<unsigned> ParseCpuListCount(std::string_view text);

// Parses one unsigned decimal number with optional surrounding white space
// (cpuinfo_max_freq in kHz, a block device's size in sectors).
// Returns it, or Invalid (not a number, or above 2^63).
StatusOr<uint64_t> ParseUnsigned(std::string_view text);

// Parses os-release(5): KEY=value lines, values optionally in double or
// single quotes with \-escapes, '#' comments. Keys are [A-Z0-9_]+.
// Returns the variables, or Invalid naming the first bad line.
StatusOr<std::map<std::string, std::string>> ParseOsRelease(std::string_view text);

// Parses Raspberry Pi OS's /etc/rpi-issue ("Raspberry Pi reference
// 2021-01-11"). Returns the image's date "YYYY-MM-DD", or Invalid.
StatusOr<std::string> ParseRpiIssueDate(std::string_view text);

// The word size and machine of an executable, from its ELF header.
struct ElfClass {
  int bits = 0;         // 32 or 64
  std::string machine;  // "arm", "arm64", "amd64", "386", "riscv64", or "elf-<n>"
};

// Reads the ELF header at the start of `bytes` (at least the first 20 bytes).
// Returns the class and machine, or Invalid for anything but an ELF file.
StatusOr<ElfClass> ParseElfHeader(std::string_view bytes);

// Returns the word size of a kernel machine name (uname -m,
// /proc/sys/kernel/arch): 64 for aarch64, x86_64, ...; 32 for armv7l,
// i686, ...; or Invalid for a name it does not know.
StatusOr<int> KernelBits(std::string_view machine);

// Parses the first "KernelPageSize:" line of /proc/<pid>/smaps.
// Returns the kernel's page size in bytes, or Invalid.
StatusOr<uint64_t> ParseSmapsPageSize(std::string_view text);

// The firmware's throttling bits (get_throttled), as Raspberry Pi documents
// them for `vcgencmd get_throttled`.
struct Throttled {
  uint32_t bits = 0;
  bool under_voltage_now() const { return bits & 0x1; }
  bool freq_capped_now() const { return bits & 0x2; }
  bool throttled_now() const { return bits & 0x4; }
  bool soft_temp_limit_now() const { return bits & 0x8; }
  bool under_voltage_since_boot() const { return bits & 0x10000; }
  bool freq_capped_since_boot() const { return bits & 0x20000; }
  bool throttled_since_boot() const { return bits & 0x40000; }
  bool soft_temp_limit_since_boot() const { return bits & 0x80000; }
};

// Parses get_throttled: a hex number, optional 0x, at most 8 digits.
// Returns the bits, or Invalid.
StatusOr<Throttled> ParseThrottled(std::string_view text);

// Parses a thermal zone's `temp` (sysfs, thermal_zone*/temp): a signed
// decimal number of millidegrees Celsius, "48312", surrounding white space
// ignored. Returns degrees Celsius, or Invalid for anything else: not an
// integer, more than 7 digits, or outside -273 to 200 degrees (a zone that
// reads its sensor wrong, or the -ENODATA some drivers print as a number).
StatusOr<double> ParseMilliCelsius(std::string_view text);

// Parses a sysfs flag such as an hwmon alarm (in0_lcrit_alarm): "0" or "1",
// surrounding white space ignored. Returns it, or Invalid.
StatusOr<bool> ParseFlag(std::string_view text);

// Parses an SD card's sysfs `date` ("08/2020"). Returns "2020-08", or Invalid.
StatusOr<std::string> ParseSdDate(std::string_view text);

// Parses a hex id such as an SD card's manfid ("0x000003").
// Returns the number, or Invalid.
StatusOr<uint32_t> ParseHexId(std::string_view text);

// The memory cgroup controller as one of the kernel's files lists it.
enum class ControllerState {
  kEnabled,   // listed and on
  kDisabled,  // listed with enabled 0 (/proc/cgroups): switched off at boot
  kAbsent,    // not listed, or (v1) bound to no hierarchy
};

// Parses cgroup v2's cgroup.controllers of the root (/sys/fs/cgroup): one
// line of controller names separated by spaces ("cpuset cpu io memory
// pids"), possibly empty. Returns kEnabled when "memory" is among them,
// else kAbsent; Invalid for a name that is not [a-z0-9_], more than 64
// names or more than one line.
StatusOr<ControllerState> ParseCgroupControllersMemory(std::string_view text);

// Parses /proc/cgroups: the header "#subsys_name hierarchy num_cgroups
// enabled", then a line of four fields per controller (at most 64). Returns
// the memory controller's state: kDisabled when its enabled field is 0,
// kAbsent when it has no line or (cgroup v1) hierarchy 0, else kEnabled;
// Invalid for a line of another shape.
StatusOr<ControllerState> ParseProcCgroupsMemory(std::string_view text);

// The word of a kernel command line (/proc/cmdline) that switches the
// memory controller off: "cgroup_disable=memory" (or a list naming
// memory: "cgroup_disable=cpu,memory") or "cgroup_memory=0", the last such
// word when there are several; "" when none. The command line is split at
// white space; nothing else is read.
std::string MemoryCgroupDisabledBy(std::string_view cmdline);

// The maker of an SD card by its manufacturer id, where widely known
// (0x03 SanDisk, 0x1b Samsung, ...). Returns "" for other ids.
std::string SdManufacturerName(uint32_t manfid);

}  // namespace ballast::probe
