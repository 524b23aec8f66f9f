#include "core/probe/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "core/common/names.h"

namespace ballast::probe {

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

namespace {

// Calls `fn(line)` for each line of `text` (without the '\n').
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!fn(line)) return;
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

// "key : value" -> {key, value}, both trimmed; false without a colon.
bool SplitColon(std::string_view line, std::string_view* key, std::string_view* value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *key = Trim(line.substr(0, colon));
  *value = Trim(line.substr(colon + 1));
  return true;
}

StatusOr<uint64_t> ParseHex(std::string_view text, size_t max_digits) {
  text = Trim(text);
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.empty() || text.size() > max_digits) {
    return Status::Invalid(
        fmt::format("expected 1 to {} hex digits, got {}", max_digits, QuoteForMessage(text)));
  }
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size()) {
    return Status::Invalid(fmt::format("expected hex digits, got {}", QuoteForMessage(text)));
  }
  return value;
}

// The old-style codes of the first boards (Pi 1 A, B, A+, B+, CM1).
struct OldCode {
  uint32_t code;
  const char* model;
  uint64_t ram_mb;
  const char* maker;
};
constexpr std::array<OldCode, 17> kOldCodes = {{
    {0x0002, "B", 256, "Egoman"},
    {0x0003, "B", 256, "Egoman"},
    {0x0004, "B", 256, "Sony UK"},
    {0x0005, "B", 256, "Qisda"},
    {0x0006, "B", 256, "Egoman"},
    {0x0007, "A", 256, "Egoman"},
    {0x0008, "A", 256, "Sony UK"},
    {0x0009, "A", 256, "Qisda"},
    {0x000d, "B", 512, "Egoman"},
    {0x000e, "B", 512, "Sony UK"},
    {0x000f, "B", 512, "Egoman"},
    {0x0010, "B+", 512, "Sony UK"},
    {0x0011, "CM1", 512, "Sony UK"},
    {0x0012, "A+", 256, "Sony UK"},
    {0x0013, "B+", 512, "Embest"},
    {0x0014, "CM1", 512, "Embest"},
    {0x0015, "A+", 256, "Embest"},
}};

// New-style fields: index -> name ("" = not published).
constexpr std::array<const char*, 27> kTypes = {
    "A",        "B",   "A+",  "B+",     "2B",  "Alpha", "CM1", "",     "3B",
    "Zero",     "CM3", "",    "Zero W", "3B+", "3A+",   "",    "CM3+", "4B",
    "Zero 2 W", "400", "CM4", "CM4S",   "",    "5",     "CM5", "500",  "CM5 Lite"};
constexpr std::array<const char*, 5> kSocs = {"BCM2835", "BCM2836", "BCM2837", "BCM2711",
                                              "BCM2712"};
constexpr std::array<const char*, 6> kMakers = {"Sony UK",    "Egoman", "Embest",
                                                "Sony Japan", "Embest", "Stadium"};

}  // namespace

StatusOr<BoardRevision> DecodeRevision(uint32_t code) {
  BoardRevision board;
  board.code = code;
  if ((code & (1u << 23)) == 0) {
    const uint32_t old = code & 0xffffffu;  // bit 24 of old codes: warranty voided
    for (const OldCode& entry : kOldCodes) {
      if (entry.code == old) {
        board.model = entry.model;
        board.soc = "BCM2835";
        board.ram_mb = entry.ram_mb;
        board.maker = entry.maker;
        return board;
      }
    }
    return Status::Invalid(fmt::format("unknown old-style revision code {:04x}", code));
  }
  const uint32_t type = (code >> 4) & 0xff;
  const uint32_t soc = (code >> 12) & 0xf;
  const uint32_t maker = (code >> 16) & 0xf;
  const uint32_t memory = (code >> 20) & 0x7;
  if (type >= kTypes.size() || *kTypes[type] == '\0') {
    return Status::Invalid(
        fmt::format("revision code {:06x}: unknown board type {:#04x}", code, type));
  }
  if (soc >= kSocs.size()) {
    return Status::Invalid(fmt::format("revision code {:06x}: unknown processor {}", code, soc));
  }
  if (maker >= kMakers.size()) {
    return Status::Invalid(fmt::format("revision code {:06x}: unknown maker {}", code, maker));
  }
  if (memory > 6) {
    return Status::Invalid(
        fmt::format("revision code {:06x}: unknown memory size {}", code, memory));
  }
  board.model = kTypes[type];
  board.soc = kSocs[soc];
  board.maker = kMakers[maker];
  board.ram_mb = uint64_t{256} << memory;
  board.revision = code & 0xf;
  return board;
}

StatusOr<uint32_t> ParseRevisionText(std::string_view text) {
  std::string_view digits = Trim(text);
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  if (digits.size() < 4) {
    return Status::Invalid(fmt::format("expected a revision code of 4 to 8 hex digits, got {}",
                                       QuoteForMessage(Trim(text))));
  }
  auto value = ParseHex(digits, 8);
  if (!value.ok()) return value.status();
  return static_cast<uint32_t>(*value);
}

StatusOr<uint32_t> ParseBigEndianCell(std::string_view bytes) {
  if (bytes.size() != 4) {
    return Status::Invalid(
        fmt::format("expected a 4-byte big-endian cell, got {} bytes", bytes.size()));
  }
  uint32_t value = 0;
  for (char c : bytes) value = (value << 8) | static_cast<unsigned char>(c);
  return value;
}

StatusOr<std::string> ParseDeviceTreeString(std::string_view bytes) {
  const std::string_view text = Trim(bytes.substr(0, bytes.find('\0')));
  if (text.empty()) return Status::Invalid("expected a string, got an empty one");
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::Invalid(fmt::format("expected printable text, got {}", QuoteForMessage(text)));
    }
  }
  return std::string(text);
}

std::string ArmCoreName(std::string_view implementer, std::string_view part) {
  auto impl = ParseHex(implementer, 2);
  auto number = ParseHex(part, 3);
  if (!impl.ok() || !number.ok() || *impl != 0x41) return "";
  struct Core {
    uint32_t part;
    const char* name;
  };
  static constexpr std::array<Core, 20> kCores = {{
      {0xb76, "arm1176"},    {0xc07, "cortex-a7"},   {0xc08, "cortex-a8"},   {0xc09, "cortex-a9"},
      {0xc0f, "cortex-a15"}, {0xd03, "cortex-a53"},  {0xd04, "cortex-a35"},  {0xd05, "cortex-a55"},
      {0xd07, "cortex-a57"}, {0xd08, "cortex-a72"},  {0xd09, "cortex-a73"},  {0xd0a, "cortex-a75"},
      {0xd0b, "cortex-a76"}, {0xd0c, "neoverse-n1"}, {0xd0d, "cortex-a77"},  {0xd41, "cortex-a78"},
      {0xd44, "cortex-x1"},  {0xd46, "cortex-a510"}, {0xd47, "cortex-a710"}, {0xd49, "neoverse-n2"},
  }};
  for (const Core& core : kCores) {
    if (core.part == *number) return core.name;
  }
  return "";
}

StatusOr<CpuInfo> ParseCpuInfo(std::string_view text) {
  CpuInfo info;
  std::string implementer;
  std::string model_name;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key, value;
    if (!SplitColon(line, &key, &value)) return true;
    if (key == "processor") ++info.processors;
    if (info.processors > 1) return true;  // the first processor describes the model
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && info.arm_part.empty()) info.arm_part = value;
    if (key == "model name" && model_name.empty()) model_name = value;
    if (key == "cpu MHz" && info.mhz == 0) {
      const std::string number(value.substr(0, 32));
      std::from_chars(number.data(), number.data() + number.size(), info.mhz);
    }
    return true;
  });
  // "Revision" and "Hardware" follow the processors on 32-bit ARM kernels.
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key, value;
    if (SplitColon(line, &key, &value) && key == "Revision") {
      info.revision = value.substr(0, 64);
      return false;
    }
    return true;
  });
  if (!info.arm_part.empty()) {
    info.model = ArmCoreName(implementer, info.arm_part);
    if (info.model.empty()) {
      info.model = fmt::format("arm-{}-{}", implementer.substr(0, 8), info.arm_part.substr(0, 8));
    }
    info.arm_part = info.arm_part.substr(0, 8);
    return info;
  }
  if (!model_name.empty()) {
    info.model = model_name.substr(0, 256);
    return info;
  }
  return Status::Invalid("expected a 'CPU part' or 'model name' line, found neither");
}

StatusOr<uint64_t> ParseMemTotalKb(std::string_view text) {
  StatusOr<uint64_t> result = Status::Invalid("expected a 'MemTotal: N kB' line, found none");
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key, value;
    if (!SplitColon(line, &key, &value) || key != "MemTotal") return true;
    if (value.size() < 3 || value.substr(value.size() - 3) != " kB") {
      result =
          Status::Invalid(fmt::format("MemTotal: expected 'N kB', got {}", QuoteForMessage(value)));
      return false;
    }
    auto number = ParseUnsigned(value.substr(0, value.size() - 3));
    result = number.ok() && *number > 0 && *number <= kMaxMemTotalKb
                 ? StatusOr<uint64_t>(*number)
                 : StatusOr<uint64_t>(Status::Invalid(
                       fmt::format("MemTotal: expected a number of kB in [1, {}] (1 PiB), got {}",
                                   kMaxMemTotalKb, QuoteForMessage(value))));
    return false;
  });
  return result;
}

StatusOr<unsigned> ParseCpuListCount(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return Status::Invalid("expected a CPU list such as '0-3', got nothing");
  uint64_t count = 0;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view range = text.substr(0, comma);
    const size_t dash = range.find('-');
    auto first = ParseUnsigned(range.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseUnsigned(range.substr(dash + 1));
    if (!first.ok() || !last.ok() || *last < *first || *last >= 65536) {
      return Status::Invalid(
          fmt::format("expected a CPU list such as '0-3', got {}", QuoteForMessage(range)));
    }
    count += *last - *first + 1;
    if (count > 65536) return Status::Invalid("a CPU list of more than 65536 CPUs");
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return static_cast<unsigned>(count);
}

StatusOr<uint64_t> ParseUnsigned(std::string_view text) {
  text = Trim(text);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      value > (uint64_t{1} << 63)) {
    return Status::Invalid(fmt::format("expected a number, got {}", QuoteForMessage(text)));
  }
  return value;
}

}  // namespace ballast::probe
