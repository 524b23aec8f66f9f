// selfsched, guided and factoring: master-slave policies that hand a chunk of
// the pool to whichever worker asks.
//
//   selfsched  a fixed chunk (the MS algorithm of seed 003 uses one task)
//   guided     chunk = ceil(remaining / P)       (guided self-scheduling)
//   factoring  batches of P chunks; each batch hands out half of what remains,
//              chunk = ceil(remaining / 2P)      (Hummel, Schonberg & Flynn 1992)
// Chunks are counted in items, as these algorithms are classically defined;
// where the job gives each item's cost (JobInfo::item_costs), in cost (an item
// of mean cost counts 1), so that chunks of skewed items cost alike. P counts
// the workers that joined mid-job and those lost alike (the classic rules
// know no other P).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string_view>

#include "core/balance/policies.h"
#include "core/balance/policy_base.h"

namespace ballast::balance {
namespace {

enum class ChunkRule { kFixed, kGuided, kFactoring };

class ChunkPolicy : public PolicyBase {
 public:
  // `name`: the options type's kName, a constant.
  ChunkPolicy(std::string_view name, ChunkRule rule, double chunk)
      : name_(name), rule_(rule), chunk_(chunk) {}

  std::string_view name() const override { return name_; }

 protected:
  void Plan(double /*now*/) override {
    batch_left_ = 0;
    if (rule_ == ChunkRule::kFixed && chunk_ <= 0) {
      // Default: about a hundred chunks per worker, so that the tail is short
      // and the master is not flooded.
      chunk_ = std::max<double>(1, std::floor(job().items / (100.0 * worker_count())));
    }
  }

  Reply Assign(WorkerId worker, double now) override {
    if (pool().empty()) return Wait();
    const bool by_cost = cost().per_item();
    const double remaining = by_cost ? pool_cost() : static_cast<double>(pool().size());
    const double workers = static_cast<double>(worker_count());
    double amount = 1;
    switch (rule_) {
      case ChunkRule::kFixed:
        amount = chunk_;
        break;
      case ChunkRule::kGuided:
        amount = std::max(chunk_, Whole(remaining / workers, by_cost));
        break;
      case ChunkRule::kFactoring:
        if (batch_left_ == 0) {
          batch_chunk_ = std::max(chunk_, Whole(remaining / (2 * workers), by_cost));
          batch_left_ = worker_count();
        }
        --batch_left_;
        amount = batch_chunk_;
        break;
    }
    const Range chunk =
        by_cost ? TakeCostFromPool(amount) : TakeFromPool(static_cast<uint64_t>(amount));
    return Grant(worker, chunk, now, 0);
  }

 private:
  // An amount of items is whole (rounded up); an amount of cost is not.
  static double Whole(double amount, bool by_cost) { return by_cost ? amount : std::ceil(amount); }

  std::string_view name_;
  ChunkRule rule_;
  double chunk_;  // items, or with per-item costs, cost
  size_t batch_left_ = 0;
  double batch_chunk_ = 1;
};

}  // namespace

std::unique_ptr<Policy> MakePolicyOf(const SelfSchedOptions& options) {
  return std::make_unique<ChunkPolicy>(SelfSchedOptions::kName, ChunkRule::kFixed,
                                       static_cast<double>(options.chunk));
}

std::unique_ptr<Policy> MakePolicyOf(const GuidedOptions& options) {
  return std::make_unique<ChunkPolicy>(GuidedOptions::kName, ChunkRule::kGuided,
                                       static_cast<double>(options.min_chunk));
}

std::unique_ptr<Policy> MakePolicyOf(const FactoringOptions& options) {
  return std::make_unique<ChunkPolicy>(FactoringOptions::kName, ChunkRule::kFactoring,
                                       static_cast<double>(options.min_chunk));
}

}  // namespace ballast::balance
