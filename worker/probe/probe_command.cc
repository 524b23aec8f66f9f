#include "worker/probe/probe_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "worker/probe/report.h"

namespace ballast::worker {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

void Print(const ProbeReport& report, const std::string& output) {
  if (output == "json") {
    std::printf("%s\n", ReportToJson(report).dump(2).c_str());
  } else {
    for (const probe::Warning& warning : report.warnings) {
      std::fprintf(stderr, "warning: %s\n", warning.message.c_str());
    }
    for (const auto& [key, value] : report.labels) {
      std::printf("%s=%s\n", key.c_str(), value.c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace

CLI::App* AddProbeCommand(CLI::App& app, ProbeOptions* options) {
  options->root = EnvOr("BALLAST_PROBE_ROOT", options->root);
  options->node = EnvOr("NODE_NAME", "");
  options->metrics_listen = EnvOr("BALLAST_METRICS_LISTEN", "");
  CLI::App* probe = app.add_subcommand(
      "probe",
      "read this node's facts (board, CPU, RAM, word sizes, OS, boot disk, power) from\n"
      "ROOT's /proc, /sys and OS files and print the ballast.io/ labels they give, as\n"
      "key=value lines (warnings on stderr) or as JSON with the facts. With --apply, label\n"
      "the Node by server-side apply and keep doing so every --interval (docs/probe.md).");
  probe
      ->add_option("--root", options->root,
                   "the root to read: / or a host's root mounted in a pod [BALLAST_PROBE_ROOT]")
      ->capture_default_str();
  probe->add_option("-o,--output", options->output, "text: key=value lines; json: everything")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return probe;
}

int RunProbeCommand(const ProbeOptions& options) {
  auto report = Probe(options.root);
  if (!report.ok()) {
    std::fprintf(stderr, "ballast-worker probe: %s\n", report.status().message().c_str());
    return 2;
  }
  Print(*report, options.output);
  return 0;
}

}  // namespace ballast::worker
