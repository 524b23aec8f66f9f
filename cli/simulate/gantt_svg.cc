#include "cli/simulate/gantt_svg.h"

#include <fmt/format.h>

#include <algorithm>

namespace ballast::cli {
namespace {

constexpr double kLeft = 150;   // room for worker names
constexpr double kWidth = 760;  // plot width
constexpr double kRow = 14;
constexpr double kPanelGap = 46;

const char* Color(sim::Segment::Kind kind) {
  switch (kind) {
    case sim::Segment::Kind::kBusy:
      return "#2e9e4f";
    case sim::Segment::Kind::kTransfer:
      return "#3b7dd8";
    case sim::Segment::Kind::kIdle:
      return "#d9d9d9";
  }
  return "#d9d9d9";
}

}  // namespace

std::string EscapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// One policy's panel from `y` down: its title line, a row per worker (at
// most `max_rows`) and the ideal's line; returns the panel's SVG and moves
// `y` past it.
std::string Panel(const sim::SimResult& result, double scale, size_t max_rows, double& y) {
  std::string body = fmt::format(
      R"(<text x="10" y="{:.1f}" font-weight="bold">{} — makespan {:.2f} s, ideal {:.2f} s, efficiency {:.3f}</text>)"
      "\n",
      y, EscapeXml(result.policy), result.makespan_s, result.ideal_s, result.efficiency);
  y += 8;
  const size_t rows = std::min(max_rows, result.workers.size());
  const double top = y;
  for (size_t i = 0; i < rows; ++i) {
    const auto& worker = result.workers[i];
    body += fmt::format(R"(<text x="10" y="{:.1f}" font-size="10">{}</text>)"
                        "\n",
                        y + kRow - 4, EscapeXml(worker.name));
    for (const auto& segment : worker.timeline) {
      const double w = std::max(0.5, (segment.end - segment.start) * scale);
      body +=
          fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}" fill="{}"/>)"
                      "\n",
                      kLeft + segment.start * scale, y + 1, w, kRow - 2, Color(segment.kind));
    }
    y += kRow;
  }
  const double ideal_x = kLeft + result.ideal_s * scale;
  body += fmt::format(
      R"(<line x1="{:.2f}" y1="{:.1f}" x2="{:.2f}" y2="{:.1f}" stroke="#c0392b" stroke-dasharray="4 3"/>)"
      "\n",
      ideal_x, top, ideal_x, y);
  if (result.workers.size() > rows) {
    body += fmt::format(R"(<text x="10" y="{:.1f}" font-size="10">… and {} more workers</text>)"
                        "\n",
                        y + 10, result.workers.size() - rows);
    y += 12;
  }
  y += kPanelGap;
  return body;
}

}  // namespace

std::string RenderGantt(const std::string& title, const std::vector<sim::SimResult>& results,
                        size_t max_rows) {
  double horizon = 0;
  for (const auto& result : results) horizon = std::max(horizon, result.makespan_s);
  if (horizon <= 0) horizon = 1;
  const double scale = kWidth / horizon;
  std::string body;
  double y = 40;
  for (const auto& result : results) body += Panel(result, scale, max_rows, y);
  // Time axis labels at the bottom.
  std::string axis;
  for (int tick = 0; tick <= 10; ++tick) {
    const double t = horizon * tick / 10;
    axis += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="10" text-anchor="middle">{:.4g} s</text>)"
        "\n",
        kLeft + t * scale, y - kPanelGap + 22, t);
  }
  const double height = y;
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" font-family="sans-serif" font-size="12">)"
      "\n"
      R"(<rect width="100%" height="100%" fill="white"/>)"
      "\n"
      R"(<text x="10" y="20" font-size="14" font-weight="bold">{}</text>)"
      "\n"
      R"(<text x="{:.0f}" y="20" font-size="10"><tspan fill="#2e9e4f">■ busy</tspan>  <tspan fill="#3b7dd8">■ receiving data</tspan>  <tspan fill="#999">■ idle</tspan>  <tspan fill="#c0392b">┆ ideal</tspan></text>)"
      "\n{}{}</svg>\n",
      kLeft + kWidth + 20, height, EscapeXml(title), kLeft + kWidth - 300, body, axis);
}

}  // namespace ballast::cli
