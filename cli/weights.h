// What `ballast weights` prints, shared with `kubectl ballast weights` and
// `kubectl ballast fit`, which read the same nodes and profiles from the live
// cluster instead of files: the weights table or JSON, and a fitted profile.
//
// Thread-safety: run on the command's thread; they print to stdout/stderr.
#pragma once

#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/fit_speeds.h"
#include "core/fuzzy/profile.h"

namespace ballast::cli {

// Parses `nodes_text` (a NodeList as `kubectl get nodes -o yaml|json` prints,
// or `nodes: [...]`; `nodes_name` names it in messages), computes the weights
// under `profile` and prints them as `output` says, warnings on stderr, the
// labels the node probe set marked. Returns kExitOk, or ReportError's code.
int PrintNodeWeights(const fuzzy::Profile& profile, const std::string& nodes_text,
                     const std::string& nodes_name, Output output);

// Fits `profile`'s ranks to `speeds` of `nodes` and prints the fitted
// profile, preceded by where the speeds came from and each node's error
// before and after as YAML comments; the speeds' warnings on stderr.
// `source` names the speeds in a fit's error. Returns kExitOk, or
// ReportError's code.
int PrintFittedProfile(const fuzzy::Profile& profile, const std::vector<fuzzy::NodeFacts>& nodes,
                       const FitSpeeds& speeds, const std::string& source);

}  // namespace ballast::cli
