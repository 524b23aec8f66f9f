// ballast: the command-line entry point. It only wires subcommands; each one
// lives in its own *_command.cc.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <thread>
#include <utility>

// After <utility>: boost's asio headers use std::exchange without including it.
#include <pplx/threadpool.h>

#include "ballast/version.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/stop_signals.h"

int main(int argc, char** argv) {
  // SIGINT and SIGTERM: blocked in every thread but this one, so that a
  // command either ends on them by default or takes them on a thread of its
  // own (stop_signals.h); never a pool thread by chance.
  ballast::cli::BlockStopSignals();
  ballast::cli::RaiseOpenFileLimit();
  if (ballast::cli::IsKubectlPluginName(argc > 0 ? argv[0] : nullptr)) {
    crossplat::threadpool::initialize_with_threads(2);
    ballast::cli::UnblockStopSignals();
    return ballast::cli::RunKubectlPlugin(argc, argv);
  }
  CLI::App app{
      "Ballast runs batch jobs on heterogeneous clusters so that every node finishes together.\n"
      "It weighs nodes with a fuzzy model of their labels, splits work by weight, learns real\n"
      "speeds while the job runs and steals the tail from slow workers.",
      "ballast"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ballast " + std::string(ballast::kVersion));
  int exit_code = ballast::cli::kExitOk;
  ballast::cli::RegisterWeights(app, &exit_code);
  ballast::cli::RegisterSimulate(app, &exit_code);
  ballast::cli::RegisterRun(app, &exit_code);
  ballast::cli::RegisterBench(app, &exit_code);
  ballast::cli::RegisterOperator(app, &exit_code);
  ballast::cli::RegisterSelftest(app, &exit_code);
  // cpprestsdk's shared pool (the coordinator's listener, the Kubernetes
  // client) defaults to 40 threads; on a small machine they spend their time
  // handing requests to each other. One per core serves 2-3 times as many
  // report round trips on 2 cores (docs/local-mode.md). Nothing here blocks a
  // pool thread: blocking waits run on threads of their own.
  crossplat::threadpool::initialize_with_threads(std::max(2U, std::thread::hardware_concurrency()));
  ballast::cli::UnblockStopSignals();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : ballast::cli::kExitBadInput;
  }
  return exit_code;
}
