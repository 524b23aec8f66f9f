// The efficiency figures a finished WeightedJob's status reports, computed
// with the one definition in core/balance/efficiency.h (ideal = W / Σ s_i,
// efficiency = ideal / makespan), two ways:
//
//   measured  W = the items' declared cost the workers delivered, s_i = each
//             node's cost / its busy time. Nodes that share a CPU each look
//             fast, so contention hides here (status.idealSeconds,
//             status.efficiency).
//   nominal   W = the CPU seconds the workers reported, s_i = each node's
//             declared speed in those cores: the node annotation
//             ballast.io/emulated-speed (kNodeSpeedAnnotation). Only when
//             every node of the job declares one (status.nominalIdealSeconds,
//             status.nominalEfficiency).
//
// A node counts only while it was in the job (balance::IdealSecondsOver):
// from joining (the start, or mid-job) until it left or was lost for good
// (WorkerView::joined_at, left_at); with no such changes the ideal is W / Σ s_i.
//
// A job resumed from a checkpoint ran its items in several sessions; only the
// last one's workers are known, so both ideals are scaled by items / the items
// this session finished.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "coordinator/job_session.h"
#include "operator/controller/kube_views.h"

namespace ballast::controller {

// The node annotation holding a node's declared speed, in cores of the
// machine whose CPU seconds its workers report ("0.5"). The test bed's node
// agent sets it on every emulated node (docs/testenv.md).
inline constexpr std::string_view kNodeSpeedAnnotation = "ballast.io/emulated-speed";

// The declared speed of `node`: the annotation's value when it is a finite
// number > 0, nullopt when absent or malformed.
std::optional<double> DeclaredSpeed(const NodeView& node);

struct EfficiencyFigures {
  double ideal_s = 0;     // measured; 0 when nothing was measured
  double efficiency = 0;  // measured ideal / makespan; 0 likewise
  std::optional<double> nominal_ideal_s;
  std::optional<double> nominal_efficiency;
};

// The figures of a finished session `view` whose job took `makespan_s` in
// all. `declared_speeds` holds the declared speed of each node that has one;
// the nominal figures are set only when every worker's node is in it and the
// workers reported CPU seconds.
EfficiencyFigures ComputeEfficiency(const coordinator::JobView& view, double makespan_s,
                                    const std::map<std::string, double>& declared_speeds);

// Why `figures` (of `view`, with `declared_speeds`) have no nominal
// efficiency, for people: "no ballast.io/emulated-speed annotation on node
// pi-1 (1 of 3 nodes)", naming at most 5 nodes, or "the workers reported no
// CPU seconds". "" when they have one.
std::string NominalMissing(const coordinator::JobView& view,
                           const std::map<std::string, double>& declared_speeds,
                           const EfficiencyFigures& figures);

}  // namespace ballast::controller
