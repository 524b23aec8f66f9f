// Loads a scenario file with everything it refers to: its profile (a built-in
// name, or a file path relative to the scenario) and the fuzzy weights of its
// nodes, which become the policies' prior speeds.
//
// Thread-safety: reentrant; reads files.
#pragma once

#include <string>
#include <vector>

#include "core/balance/policy.h"
#include "core/common/status.h"
#include "core/fuzzy/model.h"
#include "core/history/history_key.h"
#include "core/job/job_spec.h"
#include "core/sim/scenario.h"

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
// `base_dir` (or absolute). NotFound when it is neither; the reader's error
// (ReadFile) for a path that names something not to read (a directory, a
// FIFO, a device, a file too large).
StatusOr<fuzzy::Profile> LoadProfile(const std::string& reference, const std::string& base_dir);

// A job file with the cluster it runs on and its profile.
struct LoadedJob {
  job::JobSpec job;
  job::ClusterSpec cluster;
  fuzzy::Profile profile;
  // What the job's history is kept under, as the operator keeps it
  // (api::HistoryKey): the workload kind, for exec "exec:" and the
  // worker container's image without tag or digest ("exec" without one).
  history::HistoryKey history_key;
};

// Reads the items a job lists in a file (spec.itemsFrom.file, relative to
// `base_dir`, the job file's directory) into it. Ok when the job lists none
// outside itself; Invalid for a ConfigMap (Kubernetes only), a file too
// large (more than 4 * workload::kMaxItemListBytes), what is not a regular
// file (a directory, a FIFO, a device: never read), or a bad line
// ("file:line: ..."); NotFound when there is no such file.
Status ReadListedItems(job::JobSpec* job, const std::string& job_path, const std::string& base_dir);

// Loads the job, the cluster (the built-in seed-000 cluster when
// `cluster_path` is empty), the job's profile (relative to the job file) and
// its history key (the file's spec read as the operator reads a WeightedJob's;
// a spec the operator would refuse, for a template field `ballast run`
// ignores, is kept under the workload kind).
// Returns the readers' errors, "file:line:col: ..." (a file that is not
// UTF-8 among them: what a job says reaches the workers as JSON).
StatusOr<LoadedJob> LoadJob(const std::string& job_path, const std::string& cluster_path);

}  // namespace ballast::cli
