// The node labels the probe writes (docs/probe.md): the ones the shipped
// raspberry-pi WeightProfile reads, and a few more that describe the board,
// each under ballast.io/, as a pure function of the facts.
//
//   label                    from
//   ballast.io/cpu-model     the ARM core ("cortex-a72") or the x86 model name
//   ballast.io/os-bits       the userland's word size (the kernel's when unknown)
//   ballast.io/ram-mb        the board's RAM by its revision code, else MemTotal
//                            rounded up to a power of two of MB
//   ballast.io/sd-gb         the boot disk in GB (1e9 bytes), to the nearest
//                            power of two (a "32 GB" card holds 31.9e9 bytes)
//   ballast.io/power-w       watts at 400 % load of the board model, where
//                            known (Pi 3B 5.1 and Pi 4B 6.4 from seed 000's
//                            Table 1, Pi 5 8.8)
//   ballast.io/os-release    the Raspberry Pi OS image date, else ID-VERSION_ID
//   ballast.io/board         "pi-4b", "pi-zero-2-w", ...; or the device tree's model
//   ballast.io/cpu-cores, ballast.io/cpu-mhz, ballast.io/kernel-bits,
//   ballast.io/page-size-kb  as the facts say
//   ballast.io/power-ok      "false" once under-voltage, capping or throttling
//                            occurred since boot, else "true"
//   ballast.io/bench-score   only with `probe --benchmark`: the benchmark's
//                            bucketed score (probe/benchmark.h); set by the
//                            worker (report.cc), not by ProbeLabels
//
// A fact that is unknown leaves its label out (the profile then uses its
// default), with a warning naming the label and the default the profile
// gives it. Every value is a valid label value: longer text is cut to 63
// characters, with a warning.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/fuzzy/profile.h"
#include "core/probe/facts.h"

namespace ballast::probe {

inline constexpr std::string_view kLabelPrefix = "ballast.io/";
inline constexpr size_t kMaxLabelValue = 63;

// Every label the probe may write, for the metrics and docs.
const std::set<std::string>& ProbeLabelKeys();

struct LabelResult {
  std::map<std::string, std::string> labels;
  std::vector<Warning> warnings;  // fact: the label key; file: ""
};

// The labels of `facts`. `profile` only names the default used for a label
// that is left out (a criterion reading it); pass the built-in raspberry-pi.
LabelResult ProbeLabels(const Facts& facts, const fuzzy::Profile& profile);

// `text` made a valid Kubernetes label value: lower case, "(r)" and "(tm)"
// dropped, runs of other characters than [a-z0-9._] turned into one '-',
// starting and ending with a letter or digit, at most kMaxLabelValue
// characters. Sets *cut when it had to shorten it. Returns "" for text with
// no letter or digit.
std::string ToLabelValue(std::string_view text, bool* cut);

// Returns true when `value` is a valid label value (Kubernetes' rule: at most
// 63 characters of [A-Za-z0-9._-], starting and ending with [A-Za-z0-9], or
// empty).
bool IsValidLabelValue(std::string_view value);

}  // namespace ballast::probe
