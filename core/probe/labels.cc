#include "core/probe/labels.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/common/names.h"

namespace ballast::probe {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string Key(std::string_view name) { return std::string(kLabelPrefix) + std::string(name); }

// Watts at 400 % load: seed 000's Table 1 for the Pi 3B and 4B; for the Pi 5
// the figure docs/getting-started.md's example uses. Other boards: unknown.
double BoardWatts(const std::string& model) {
  if (model == "3B") return 5.1;
  if (model == "4B") return 6.4;
  if (model == "5") return 8.8;
  return 0;
}

// The smallest power of two >= x (x >= 1).
uint64_t CeilPowerOfTwo(uint64_t x) {
  uint64_t p = 1;
  while (p < x && p < (uint64_t{1} << 62)) p <<= 1;
  return p;
}

class Labeller {
 public:
  Labeller(const Facts& facts, const fuzzy::Profile& profile) : facts_(facts), profile_(profile) {}

  LabelResult Run();

 private:
  // Sets `name` to `text` made a label value, or leaves it out saying why.
  void Set(std::string_view name, std::string_view text, std::string_view unknown_reason) {
    if (text.empty()) return Leave(name, unknown_reason);
    bool cut = false;
    std::string value = ToLabelValue(text, &cut);
    if (value.empty()) {
      return Leave(name, fmt::format("no letter or digit in {}", QuoteForMessage(text)));
    }
    if (cut) {
      Note(name, fmt::format("{} is longer than a label value; cut to '{}'", QuoteForMessage(text),
                             value));
    }
    result_.labels[Key(name)] = std::move(value);
  }
  void SetNumber(std::string_view name, uint64_t value, std::string_view unknown_reason) {
    if (value == 0) return Leave(name, unknown_reason);
    result_.labels[Key(name)] = std::to_string(value);
  }
  // Leaves label `name` out; warns when a criterion of the profile reads it
  // (the fact's own warning covers the others).
  void Leave(std::string_view name, std::string_view reason) {
    for (const fuzzy::Criterion& criterion : profile_.criteria) {
      if (criterion.label != Key(name)) continue;
      Note(name, fmt::format("{}; label not set, the profile {} uses its default {}", reason,
                             profile_.name, criterion.default_level.ToString()));
    }
  }
  void Note(std::string_view name, std::string message) {
    result_.warnings.push_back(
        {Key(name), "", fmt::format("label {}: {}", Key(name), std::move(message))});
  }

  const Facts& facts_;
  const fuzzy::Profile& profile_;
  LabelResult result_;
};

LabelResult Labeller::Run() {
  Set("cpu-model", facts_.cpu_model, "CPU model unknown");
  const int os_bits = facts_.userland_bits != 0 ? facts_.userland_bits : facts_.kernel_bits;
  SetNumber("os-bits", static_cast<uint64_t>(os_bits), "word size unknown");
  uint64_t ram_mb = facts_.board ? facts_.board->ram_mb : 0;
  if (ram_mb == 0 && facts_.mem_total_kb != 0) {
    ram_mb = CeilPowerOfTwo((facts_.mem_total_kb + 1023) / 1024);
  }
  SetNumber("ram-mb", ram_mb, "RAM unknown");
  uint64_t sd_gb = 0;
  if (facts_.boot_disk_bytes != 0) {
    const double gb = std::max(1.0, static_cast<double>(facts_.boot_disk_bytes) / 1e9);
    sd_gb = uint64_t{1} << static_cast<int>(std::lround(std::log2(gb)));
  }
  SetNumber("sd-gb", sd_gb, "boot disk size unknown");
  const std::string model = facts_.board ? facts_.board->model : "";
  const double watts = BoardWatts(model);
  if (watts > 0) {
    result_.labels[Key("power-w")] = fmt::format("{}", watts);
  } else {
    Leave("power-w", model.empty() ? "no power figure for an unknown board"
                                   : fmt::format("no power figure for a Pi {}", model));
  }
  std::string os_release = facts_.os_image_date;
  if (os_release.empty() && !facts_.os_id.empty()) {
    os_release =
        facts_.os_version_id.empty() ? facts_.os_id : facts_.os_id + "-" + facts_.os_version_id;
  }
  Set("os-release", os_release, "OS release unknown");
  if (facts_.board) {
    result_.labels[Key("board")] = ToLabelValue("pi-" + model, nullptr);
  } else if (!facts_.board_model.empty()) {
    Set("board", facts_.board_model, "");
  }
  SetNumber("cpu-cores", facts_.cpu_cores, "CPU count unknown");
  SetNumber("cpu-mhz", facts_.cpu_max_khz / 1000, "maximum CPU frequency unknown");
  SetNumber("kernel-bits", static_cast<uint64_t>(facts_.kernel_bits), "kernel word size unknown");
  SetNumber("page-size-kb", facts_.page_size / 1024, "page size unknown");
  if (facts_.throttled) {
    const Throttled& t = *facts_.throttled;
    const bool trouble =
        t.under_voltage_since_boot() || t.freq_capped_since_boot() || t.throttled_since_boot();
    result_.labels[Key("power-ok")] = trouble ? "false" : "true";
  }
  return std::move(result_);
}

}  // namespace

const std::set<std::string>& ProbeLabelKeys() {
  static const std::set<std::string> keys = {
      Key("cpu-model"),    Key("os-bits"),  Key("ram-mb"),     Key("sd-gb"),   Key("power-w"),
      Key("os-release"),   Key("board"),    Key("cpu-cores"),  Key("cpu-mhz"), Key("kernel-bits"),
      Key("page-size-kb"), Key("power-ok"), Key("bench-score")};
  return keys;
}

LabelResult ProbeLabels(const Facts& facts, const fuzzy::Profile& profile) {
  return Labeller(facts, profile).Run();
}

std::string ToLabelValue(std::string_view text, bool* cut) {
  std::string lower;
  for (char c : text.substr(0, 4096)) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (std::string_view mark : {"(r)", "(tm)"}) {
    for (size_t at; (at = lower.find(mark)) != std::string::npos;) lower.erase(at, mark.size());
  }
  std::string value;
  for (char c : lower) {
    const bool keep = IsAlnum(c) || c == '.' || c == '_';
    if (keep) {
      value.push_back(c);
    } else if (!value.empty() && value.back() != '-') {
      value.push_back('-');
    }
  }
  const auto trim_end = [&] {
    while (!value.empty() && !IsAlnum(value.back())) value.pop_back();
  };
  trim_end();
  size_t start = 0;
  while (start < value.size() && !IsAlnum(value[start])) ++start;
  value.erase(0, start);
  const bool too_long = value.size() > kMaxLabelValue;
  if (too_long) {
    value.resize(kMaxLabelValue);
    trim_end();
  }
  if (cut != nullptr) *cut = too_long;
  return value;
}

bool IsValidLabelValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > kMaxLabelValue || !IsAlnum(value.front()) || !IsAlnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace ballast::probe
