// Registration of the ballast subcommands. Each Register* adds one subcommand
// to `app`; when it runs, its exit code is written to *exit_code.
#pragma once

#include <CLI/CLI.hpp>

namespace ballast::cli {

// ballast weights --profile FILE --nodes FILE [-o json]
void RegisterWeights(CLI::App& app, int* exit_code);
// ballast simulate SCENARIO [-o json] [--gantt FILE.svg]
void RegisterSimulate(CLI::App& app, int* exit_code);

// ballast run JOB [--cluster FILE] [-o json] [--report FILE.html]
void RegisterRun(CLI::App& app, int* exit_code);
// ballast bench JOB [--cluster FILE] --policies LIST --repeat N [-o json]
void RegisterBench(CLI::App& app, int* exit_code);

// ballast operator [--kubeconfig FILE] [--namespace NS] [--coordinator-url URL]
void RegisterOperator(CLI::App& app, int* exit_code);
// ballast selftest [-n NS] [--limit N] [--timeout S]: a tiny job, its exact result checked
void RegisterSelftest(CLI::App& app, int* exit_code);

// Whether argv[0]'s base name is kubectl-ballast: the program runs as the
// kubectl plugin (`kubectl ballast ...`).
bool IsKubectlPluginName(const char* argv0);
// kubectl ballast weights|top|report|fit, with kubectl's cluster flags;
// returns the exit code.
int RunKubectlPlugin(int argc, char** argv);

}  // namespace ballast::cli
