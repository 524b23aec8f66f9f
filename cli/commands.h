// Registration of the ballast subcommands. Each Register* adds one subcommand
// to `app`; when it runs, its exit code is written to *exit_code.
#pragma once

#include <CLI/CLI.hpp>

namespace ballast::cli {

// ballast weights --profile FILE --nodes FILE [-o json]
void RegisterWeights(CLI::App& app, int* exit_code);
// ballast simulate SCENARIO [-o json] [--gantt FILE.svg]
void RegisterSimulate(CLI::App& app, int* exit_code);

}  // namespace ballast::cli
