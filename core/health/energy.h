// Energy per job: what a job cost in energy, estimated from each board
// kind's idle and load power and each node's busy and idle time over the
// job's span (docs/history.md, "Energy per job"). A bare Pi has no power
// sensor (no RAPL, no current sense), so this is an estimate from published
// figures, not a reading.
//
//   node energy  = load_w * busy + idle_w * (span - busy)     busy within [0, span]
//   job energy   = the sum over the nodes whose power is known
//   per item     = job energy / items finished
//
// A node's power: the labels ballast.io/power-idle-w and
// ballast.io/power-load-w (watts, each overriding its half), else its board
// kind's figures (BoardPowers: the label ballast.io/board the probe writes,
// else the ARM core of ballast.io/cpu-model), else unknown: that node is
// left out of the total and the job's energy says it is incomplete.
//
// Thread-safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ballast::health {

inline constexpr std::string_view kIdlePowerLabel = "ballast.io/power-idle-w";
inline constexpr std::string_view kLoadPowerLabel = "ballast.io/power-load-w";
inline constexpr double kMaxBoardWatts = 1000;  // a label above is ignored

struct BoardPower {
  std::string board;      // "pi-4b"; "" for a node described by labels alone
  double idle_w = 0;      // watts, idle
  double load_w = 0;      // watts, all cores computing
  bool estimate = false;  // no published figure: an estimate
  std::string source;     // where the figures come from, for reports
};

// The built-in board kinds: Pi 3B and Pi 4B from Raspberry Pi's published
// figures (at 5.1 V), the Pi 5 an estimate. docs/history.md has the table.
const std::vector<BoardPower>& BoardPowers();

// The power of a node with `labels` (see above), or none when neither its
// labels nor its board kind give both figures. A label that is not a number
// in (0, kMaxBoardWatts] is ignored.
std::optional<BoardPower> NodePower(const std::map<std::string, std::string>& labels);

// What is wrong with the power labels among `labels`: one line per label
// of ballast.io/power-idle-w and ballast.io/power-load-w that is set but not
// a number of watts in (0, kMaxBoardWatts], which NodePower ignores:
// "label ballast.io/power-load-w: '5000' is not a number of watts in (0,
// 1000], ignored (the board kind's figure stands, if it has one)". Empty
// when both are absent or usable.
std::vector<std::string> PowerLabelProblems(const std::map<std::string, std::string>& labels);

// What one node did in a job.
struct NodeUsage {
  std::string node;
  std::optional<BoardPower> power;  // NodePower's answer
  double busy_seconds = 0;          // computing (wall) seconds in the job
  uint64_t items = 0;               // items it finished
};

struct NodeEnergy {
  std::string node;
  bool known = false;     // false: no power figure, joules 0
  bool estimate = false;  // its figures are an estimate
  double idle_w = 0;
  double load_w = 0;
  double busy_seconds = 0;  // within [0, span]
  double idle_seconds = 0;  // span - busy
  double joules = 0;
  uint64_t items = 0;
};

struct JobEnergy {
  std::vector<NodeEnergy> nodes;  // in the order of the usage given
  double span_seconds = 0;
  double joules = 0;           // over the nodes whose power is known
  uint64_t items = 0;          // finished by those nodes
  double joules_per_item = 0;  // 0 without items
  bool complete = true;        // every node's power known
  bool estimate = false;       // some figure is an estimate
};

// The energy of a job that ran `span_seconds` (start to end, every node
// counted over the whole span: an idle board draws its idle power). Busy
// time is brought into [0, span]; a span that is not a finite positive
// number reads as the longest busy time. Never fails; no NaN.
JobEnergy EstimateJobEnergy(const std::vector<NodeUsage>& usage, double span_seconds);

// "412.5 J (0.115 Wh), 0.0825 J per item" plus ", estimate" and
// ", 1 node without power figures" as they apply.
std::string DescribeEnergy(const JobEnergy& energy);

}  // namespace ballast::health
