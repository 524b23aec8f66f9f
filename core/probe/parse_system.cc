// The probe's parsers of OS, kernel, power and storage files (parse.h).
#include <fmt/format.h>

#include <array>
#include <charconv>

#include "core/common/names.h"
#include "core/probe/parse.h"

namespace ballast::probe {
namespace {

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One os-release value: unquoted, or in "..." / '...' with \-escapes in "...".
StatusOr<std::string> OsReleaseValue(std::string_view raw) {
  if (raw.empty()) return std::string();
  const char quote = raw.front();
  if (quote != '"' && quote != '\'') {
    for (char c : raw) {
      if (c == ' ' || c == '"' || c == '\'' || c == '\\' || c == '`' || c == '$') {
        return Status::Invalid(fmt::format("unquoted value with '{}' in it", c));
      }
    }
    return std::string(raw);
  }
  if (raw.size() < 2 || raw.back() != quote) return Status::Invalid("unterminated quote");
  std::string value;
  for (size_t i = 1; i + 1 < raw.size(); ++i) {
    char c = raw[i];
    if (quote == '"' && c == '\\' && i + 2 < raw.size()) c = raw[++i];
    value.push_back(c);
  }
  return value;
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ParseOsRelease(std::string_view text) {
  std::map<std::string, std::string> values;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = Trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    const size_t equals = line.find('=');
    const std::string_view key = line.substr(0, equals);
    bool key_ok = equals != std::string_view::npos && !key.empty();
    for (char c : key) key_ok = key_ok && ((c >= 'A' && c <= 'Z') || IsDigits({&c, 1}) || c == '_');
    if (!key_ok) {
      return Status::Invalid(
          fmt::format("line {}: expected KEY=value, got {}", line_number, QuoteForMessage(line)));
    }
    auto value = OsReleaseValue(line.substr(equals + 1));
    if (!value.ok()) {
      return Status::Invalid(
          fmt::format("line {}: {}: {}", line_number, key, value.status().message()));
    }
    values[std::string(key)] = *std::move(value);
  }
  return values;
}

StatusOr<std::string> ParseRpiIssueDate(std::string_view text) {
  constexpr std::string_view kPrefix = "Raspberry Pi reference ";
  const std::string_view first = Trim(text.substr(0, text.find('\n')));
  if (first.substr(0, kPrefix.size()) != kPrefix) {
    return Status::Invalid(fmt::format("expected 'Raspberry Pi reference YYYY-MM-DD', got {}",
                                       QuoteForMessage(first)));
  }
  const std::string_view date = first.substr(kPrefix.size(), 10);
  const bool shaped = date.size() == 10 && IsDigits(date.substr(0, 4)) && date[4] == '-' &&
                      IsDigits(date.substr(5, 2)) && date[7] == '-' && IsDigits(date.substr(8, 2));
  const int month = shaped ? (date[5] - '0') * 10 + (date[6] - '0') : 0;
  const int day = shaped ? (date[8] - '0') * 10 + (date[9] - '0') : 0;
  if (!shaped || month < 1 || month > 12 || day < 1 || day > 31) {
    return Status::Invalid(
        fmt::format("expected a date YYYY-MM-DD after 'Raspberry Pi "
                    "reference', got {}",
                    QuoteForMessage(first.substr(kPrefix.size()))));
  }
  return std::string(date);
}

StatusOr<ElfClass> ParseElfHeader(std::string_view bytes) {
  if (bytes.size() < 20 || bytes.substr(0, 4) !=
                               "\x7f"
                               "ELF") {
    return Status::Invalid(
        fmt::format("expected an ELF header (\\x7fELF), got {} bytes starting {}", bytes.size(),
                    QuoteForMessage(bytes.substr(0, 4))));
  }
  ElfClass elf;
  const unsigned char ei_class = static_cast<unsigned char>(bytes[4]);
  const unsigned char ei_data = static_cast<unsigned char>(bytes[5]);
  if (ei_class != 1 && ei_class != 2) {
    return Status::Invalid(
        fmt::format("ELF class {} is neither 1 (32-bit) nor 2 (64-bit)", ei_class));
  }
  if (ei_data != 1 && ei_data != 2) {
    return Status::Invalid(fmt::format("ELF data encoding {} is neither 1 nor 2", ei_data));
  }
  elf.bits = ei_class == 1 ? 32 : 64;
  const auto b18 = static_cast<unsigned char>(bytes[18]);
  const auto b19 = static_cast<unsigned char>(bytes[19]);
  const unsigned machine = ei_data == 1 ? b18 | (b19 << 8) : (b18 << 8) | b19;
  switch (machine) {
    case 3:
      elf.machine = "386";
      break;
    case 40:
      elf.machine = "arm";
      break;
    case 62:
      elf.machine = "amd64";
      break;
    case 183:
      elf.machine = "arm64";
      break;
    case 243:
      elf.machine = elf.bits == 64 ? "riscv64" : "riscv32";
      break;
    default:
      elf.machine = fmt::format("elf-{}", machine);
  }
  return elf;
}

StatusOr<int> KernelBits(std::string_view machine) {
  machine = Trim(machine);
  static constexpr std::array<std::string_view, 9> k64 = {
      "aarch64", "arm64", "x86_64", "amd64", "riscv64", "ppc64le", "ppc64", "s390x", "mips64"};
  static constexpr std::array<std::string_view, 10> k32 = {
      "armv6l", "armv7l", "armv7", "armv8l", "arm", "i386", "i486", "i586", "i686", "riscv32"};
  for (std::string_view name : k64) {
    if (machine == name) return 64;
  }
  for (std::string_view name : k32) {
    if (machine == name) return 32;
  }
  return Status::Invalid(fmt::format("unknown machine {}", QuoteForMessage(machine)));
}

StatusOr<uint64_t> ParseSmapsPageSize(std::string_view text) {
  constexpr std::string_view kKey = "KernelPageSize:";
  const size_t at = text.find(kKey);
  if (at == std::string_view::npos) return Status::Invalid("no 'KernelPageSize:' line");
  std::string_view value = text.substr(at + kKey.size());
  value = Trim(value.substr(0, value.find('\n')));
  if (value.size() < 3 || value.substr(value.size() - 3) != " kB") {
    return Status::Invalid(
        fmt::format("KernelPageSize: expected 'N kB', got {}", QuoteForMessage(value)));
  }
  auto kb = ParseUnsigned(value.substr(0, value.size() - 3));
  if (!kb.ok() || *kb == 0 || *kb > (uint64_t{1} << 20) || (*kb & (*kb - 1)) != 0) {
    return Status::Invalid(fmt::format("KernelPageSize: expected a power of two of kB, got {}",
                                       QuoteForMessage(value)));
  }
  return *kb * 1024;
}

StatusOr<Throttled> ParseThrottled(std::string_view text) {
  std::string_view digits = Trim(text);
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  uint32_t bits = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), bits, 16);
  if (digits.empty() || digits.size() > 8 || error != std::errc() ||
      end != digits.data() + digits.size()) {
    return Status::Invalid(
        fmt::format("expected up to 8 hex digits, got {}", QuoteForMessage(Trim(text))));
  }
  return Throttled{bits};
}

StatusOr<double> ParseMilliCelsius(std::string_view text) {
  const std::string_view trimmed = Trim(text);
  std::string_view digits = trimmed;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 7 || !IsDigits(digits)) {
    return Status::Invalid(
        fmt::format("expected millidegrees Celsius, got {}", QuoteForMessage(trimmed)));
  }
  int64_t milli = 0;
  for (char c : digits) milli = milli * 10 + (c - '0');
  if (negative) milli = -milli;
  if (milli < -273000 || milli > 200000) {
    return Status::Invalid(fmt::format("{} millidegrees Celsius is not a temperature a board has",
                                       QuoteForMessage(trimmed)));
  }
  return static_cast<double>(milli) / 1000;
}

StatusOr<bool> ParseFlag(std::string_view text) {
  const std::string_view flag = Trim(text);
  if (flag == "0" || flag == "1") return flag == "1";
  return Status::Invalid(fmt::format("expected 0 or 1, got {}", QuoteForMessage(flag)));
}

StatusOr<std::string> ParseSdDate(std::string_view text) {
  const std::string_view date = Trim(text);
  const bool shaped = date.size() == 7 && IsDigits(date.substr(0, 2)) && date[2] == '/' &&
                      IsDigits(date.substr(3, 4));
  const int month = shaped ? (date[0] - '0') * 10 + (date[1] - '0') : 0;
  if (!shaped || month < 1 || month > 12) {
    return Status::Invalid(fmt::format("expected MM/YYYY, got {}", QuoteForMessage(date)));
  }
  return fmt::format("{}-{}", date.substr(3, 4), date.substr(0, 2));
}

StatusOr<uint32_t> ParseHexId(std::string_view text) {
  std::string_view digits = Trim(text);
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  uint32_t value = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (digits.empty() || digits.size() > 8 || error != std::errc() ||
      end != digits.data() + digits.size()) {
    return Status::Invalid(
        fmt::format("expected a hex id such as 0x000003, got {}", QuoteForMessage(Trim(text))));
  }
  return value;
}

std::string SdManufacturerName(uint32_t manfid) {
  switch (manfid) {
    case 0x01:
      return "Panasonic";
    case 0x02:
      return "Toshiba";
    case 0x03:
      return "SanDisk";
    case 0x1b:
      return "Samsung";
    case 0x27:
      return "Phison";
    case 0x28:
      return "Lexar";
    case 0x41:
      return "Kingston";
    case 0x74:
      return "Transcend";
    default:
      return "";
  }
}

}  // namespace ballast::probe
