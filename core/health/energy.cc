#include "core/health/energy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/common/names.h"

namespace ballast::health {
namespace {

constexpr std::string_view kBoardLabel = "ballast.io/board";
constexpr std::string_view kCpuModelLabel = "ballast.io/cpu-model";

bool PositiveNumber(double x) { return std::isfinite(x) && x > 0; }

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::string* Label(const std::map<std::string, std::string>& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? nullptr : &it->second;
}

// The watts a label gives, or none for a value that is not a number in
// (0, kMaxBoardWatts].
std::optional<double> Watts(const std::map<std::string, std::string>& labels,
                            std::string_view key) {
  const std::string* text = Label(labels, key);
  if (!text || text->empty()) return std::nullopt;
  double value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || !PositiveNumber(value) || value > kMaxBoardWatts) {
    return std::nullopt;
  }
  return value;
}

const BoardPower* Board(std::string_view name) {
  for (const BoardPower& b : BoardPowers()) {
    if (b.board == name) return &b;
  }
  return nullptr;
}

// The board kind the labels name: ballast.io/board, else the ARM core.
const BoardPower* BoardOf(const std::map<std::string, std::string>& labels) {
  if (const std::string* board = Label(labels, kBoardLabel)) {
    if (const BoardPower* b = Board(Lower(*board))) return b;
  }
  if (const std::string* core = Label(labels, kCpuModelLabel)) {
    const std::string c = Lower(*core);
    if (c == "cortex-a53") return Board("pi-3b");
    if (c == "cortex-a72") return Board("pi-4b");
    if (c == "cortex-a76") return Board("pi-5");
  }
  return nullptr;
}

}  // namespace

const std::vector<BoardPower>& BoardPowers() {
  static const std::vector<BoardPower> kBoards = {
      {"pi-3b", 1.5, 4.3, false, "Raspberry Pi's published figures at 5.1 V"},
      {"pi-4b", 3.1, 6.1, false, "Raspberry Pi's published figures at 5.1 V"},
      {"pi-5", 2.7, 8.8, true,
       "estimate: no idle and load figures published by Raspberry Pi; load as the probe's "
       "ballast.io/power-w"},
  };
  return kBoards;
}

std::optional<BoardPower> NodePower(const std::map<std::string, std::string>& labels) {
  const BoardPower* board = BoardOf(labels);
  const std::optional<double> idle = Watts(labels, kIdlePowerLabel);
  const std::optional<double> load = Watts(labels, kLoadPowerLabel);
  if (!board && !(idle && load)) return std::nullopt;
  BoardPower power = board ? *board : BoardPower{};
  if (idle) power.idle_w = *idle;
  if (load) power.load_w = *load;
  if (idle || load) {
    // Labels describe this node; a half from the board keeps its standing.
    power.estimate = board && board->estimate && !(idle && load);
    power.source = board && !(idle && load) ? "node labels and " + board->source : "node labels";
  }
  return power;
}

std::vector<std::string> PowerLabelProblems(const std::map<std::string, std::string>& labels) {
  std::vector<std::string> problems;
  for (std::string_view key : {kIdlePowerLabel, kLoadPowerLabel}) {
    const std::string* text = Label(labels, key);
    if (text == nullptr || Watts(labels, key)) continue;
    problems.push_back(fmt::format(
        "label {}: {} is not a number of watts in (0, {:g}], ignored (the board kind's figure "
        "stands, if it has one)",
        key, QuoteForMessage(*text), kMaxBoardWatts));
  }
  return problems;
}

JobEnergy EstimateJobEnergy(const std::vector<NodeUsage>& usage, double span_seconds) {
  JobEnergy job;
  double span = PositiveNumber(span_seconds) ? span_seconds : 0;
  if (span == 0) {
    for (const NodeUsage& u : usage) {
      if (PositiveNumber(u.busy_seconds)) span = std::max(span, u.busy_seconds);
    }
  }
  job.span_seconds = span;
  for (const NodeUsage& u : usage) {
    NodeEnergy n;
    n.node = u.node;
    n.items = u.items;
    n.busy_seconds = PositiveNumber(u.busy_seconds) ? std::min(u.busy_seconds, span) : 0;
    n.idle_seconds = span - n.busy_seconds;
    if (u.power && PositiveNumber(u.power->idle_w) && PositiveNumber(u.power->load_w)) {
      n.known = true;
      n.estimate = u.power->estimate;
      n.idle_w = u.power->idle_w;
      n.load_w = u.power->load_w;
      n.joules = n.load_w * n.busy_seconds + n.idle_w * n.idle_seconds;
      job.joules += n.joules;
      job.items += n.items;
      job.estimate = job.estimate || n.estimate;
    } else {
      job.complete = false;
    }
    job.nodes.push_back(std::move(n));
  }
  job.joules_per_item = job.items > 0 ? job.joules / static_cast<double>(job.items) : 0;
  return job;
}

std::string DescribeEnergy(const JobEnergy& energy) {
  std::string text = fmt::format("{:.1f} J ({:.4g} Wh)", energy.joules, energy.joules / 3600);
  if (energy.items > 0) text += fmt::format(", {:.4g} J per item", energy.joules_per_item);
  if (energy.estimate) text += ", estimate";
  const size_t unknown = std::count_if(energy.nodes.begin(), energy.nodes.end(),
                                       [](const NodeEnergy& n) { return !n.known; });
  if (unknown > 0) {
    text += fmt::format(", {} node{} without power figures", unknown, unknown == 1 ? "" : "s");
  }
  return text;
}

}  // namespace ballast::health
