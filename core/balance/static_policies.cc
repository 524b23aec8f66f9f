// equal and weighted: one static share per worker, no rebalancing.
//
// equal splits the job's cost into P equal contiguous shares (the domain
// decomposition baseline of seed 003); weighted splits it in proportion to the
// workers' prior speeds, the fuzzy weights of seed 000. Work whose worker was
// lost goes back to the pool and is leased whole to the next idle worker, so
// no item is lost even by a static policy. A worker that joins mid-job has
// no share: it computes only what comes back to the pool (a static split
// moves nothing to it).
#include <memory>
#include <string_view>

#include "core/balance/policies.h"
#include "core/balance/policy_base.h"

namespace ballast::balance {
namespace {

class StaticPolicy : public PolicyBase {
 public:
  // `name`: the options type's kName, a constant.
  StaticPolicy(std::string_view name, bool by_weight) : name_(name), by_weight_(by_weight) {}

  std::string_view name() const override { return name_; }

 protected:
  void Plan(double /*now*/) override {
    std::vector<double> shares;
    for (const WorkerPrior& worker : job().workers) shares.push_back(by_weight_ ? worker.speed : 1);
    ReserveProportional(shares);
  }

  Reply Assign(WorkerId worker, double now) override {
    const Range share = TakeReserved(worker);
    if (!share.empty()) return Grant(worker, share, now, 0);
    if (!pool().empty()) return Grant(worker, TakeFromPool(pool().First().size()), now, 0);
    return Wait();
  }

 private:
  std::string_view name_;
  bool by_weight_;
};

}  // namespace

std::unique_ptr<Policy> MakePolicyOf(const EqualOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(EqualOptions::kName, false);
}

std::unique_ptr<Policy> MakePolicyOf(const WeightedOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(WeightedOptions::kName, true);
}

}  // namespace ballast::balance
