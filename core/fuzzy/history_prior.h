// STAND-IN for history-core's BlendHistoryPrior (core/fuzzy/history_prior.h):
// the interface of the shared names, so that the operator's side builds
// before history-core's branch is merged. Drop this file and
// history_prior_standin.cc on merge; history-core's header replaces it.
//
// Thread-safety: values and a pure function.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ballast::fuzzy {

struct NodeHistory {
  std::string node;
  double speed = 0;        // relative speed, any scale
  double samples = 0;      // weighted sample count
  double age_seconds = 0;  // age of the newest sample
};

enum class PriorSource { kProfile, kHistory, kBlended };

struct HistoryPriorOptions {
  double full_trust_samples = 10;
  double max_age_seconds = 7 * 24 * 3600;
};

struct NodePrior {
  std::string node;
  double value = 0;
  PriorSource source = PriorSource::kProfile;
  double samples = 0;
  double age_seconds = 0;
};

// One NodePrior per fuzzy node, never zero; the fuzzy weight where history is
// missing or stale.
std::vector<NodePrior> BlendHistoryPrior(const std::map<std::string, double>& fuzzy,
                                         const std::vector<NodeHistory>& history,
                                         const HistoryPriorOptions& options);

}  // namespace ballast::fuzzy
