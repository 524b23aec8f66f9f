// Renders simulation timelines as an SVG Gantt chart: one panel per policy,
// one row per worker, busy time green, data transfer blue, idle grey, with the
// ideal makespan marked.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "core/sim/simulator.h"

namespace ballast::cli {

// `text` with <, >, & and " escaped for XML and HTML.
std::string EscapeXml(const std::string& text);

// Returns the SVG document. At most `max_rows` workers are drawn per panel
// (the rest are named in a note), so that large clusters stay readable.
std::string RenderGantt(const std::string& title, const std::vector<sim::SimResult>& results,
                        size_t max_rows = 48);

}  // namespace ballast::cli
