// STAND-IN for history-core's BlendHistoryPrior; drop on merge (see
// history_prior.h). A plain shrinkage: trust = samples / full_trust_samples
// (at most 1, 0 when stale), history rescaled to the fuzzy weights' scale on
// the nodes that have both.
#include <algorithm>
#include <cmath>

#include "fuzzy/history_prior.h"

namespace ballast::fuzzy {

std::vector<NodePrior> BlendHistoryPrior(const std::map<std::string, double>& fuzzy,
                                         const std::vector<NodeHistory>& history,
                                         const HistoryPriorOptions& options) {
  std::map<std::string, const NodeHistory*> known;
  double fuzzy_sum = 0, speed_sum = 0;
  for (const auto& entry : history) {
    const bool usable = entry.speed > 0 && std::isfinite(entry.speed) && entry.samples > 0 &&
                        entry.age_seconds <= options.max_age_seconds && fuzzy.contains(entry.node);
    if (!usable) continue;
    known[entry.node] = &entry;
    fuzzy_sum += fuzzy.at(entry.node);
    speed_sum += entry.speed;
  }
  const double scale = speed_sum > 0 ? fuzzy_sum / speed_sum : 0;
  std::vector<NodePrior> priors;
  for (const auto& [node, weight] : fuzzy) {
    NodePrior prior{node, weight, PriorSource::kProfile, 0, 0};
    auto it = known.find(node);
    if (it != known.end() && scale > 0) {
      const NodeHistory& entry = *it->second;
      const double trust =
          std::min(1.0, entry.samples / std::max(1e-9, options.full_trust_samples));
      prior.value = (1 - trust) * weight + trust * entry.speed * scale;
      prior.source = trust >= 1 ? PriorSource::kHistory : PriorSource::kBlended;
      prior.samples = entry.samples;
      prior.age_seconds = entry.age_seconds;
    }
    if (!(prior.value > 0)) prior.value = weight;
    priors.push_back(prior);
  }
  return priors;
}

}  // namespace ballast::fuzzy
