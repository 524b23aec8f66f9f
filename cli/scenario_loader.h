// Loads a scenario file with everything it refers to: its profile (a built-in
// name, or a file path relative to the scenario) and the fuzzy weights of its
// nodes, which become the policies' prior speeds.
//
// Thread-safety: reentrant; reads files.
#pragma once

#include <string>
#include <vector>

#include "balance/policy.h"
#include "common/status.h"
#include "fuzzy/model.h"
#include "sim/scenario.h"

namespace ballast::cli {

struct LoadedScenario {
  sim::Scenario scenario;
  fuzzy::Profile profile;
  fuzzy::WeightResult weights;
  std::vector<balance::WorkerPrior> priors;  // one per node: its fuzzy weight
};

// Returns the loaded scenario, or the first error (file, line, expectation).
StatusOr<LoadedScenario> LoadScenario(const std::string& path);

// Resolves a profile reference: a built-in name, else a file path relative to
// `base_dir` (or absolute).
StatusOr<fuzzy::Profile> LoadProfile(const std::string& reference, const std::string& base_dir);

}  // namespace ballast::cli
