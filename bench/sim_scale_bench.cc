// ballast_sim_bench: how long the simulator takes on a large cluster, and what
// each policy achieves there against the physical limit.
//
// Target (the issue): `adaptive` on 10,000 workers and 10^8 items simulates in
// under 30 s on one core. Each row prints sim_seconds (wall clock of one
// Simulate call) beside target_s = 30, with the makespan, the limit
// (ideal_s), the efficiency, and the messages and events simulated. It prints
// figures; it never fails on speed.
//
//   scale/10000x1e8/<policy>  adaptive, and weighted, guided and factoring
//                             side by side
//   scale/1000x1e7/<policy>   every policy side by side
//
// The scenario is built in code: nodes of three speed classes in fixed
// proportions — Pi 3B (0.1), Pi 4B (0.5), Pi 5 (1.0), a third each,
// interleaved — no labels, 1 ms latency, items of 10^-4 s at speed 1 with a
// linear cost. The policies are told each node's true speed times a seeded
// factor in [0.7, 1.3], so that balancing matters.
//
//   build-release/ballast_sim_bench [--benchmark_filter=1000x]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/balance/policy_options.h"
#include "core/sim/scenario.h"
#include "core/sim/simulator.h"

namespace ballast::sim {
namespace {

constexpr double kTargetSeconds = 30;
constexpr uint64_t kSeed = 20261120;
constexpr double kPriorError = 0.3;
constexpr double kLatency = 0.001;
constexpr double kItemSeconds = 1e-4;

struct SpeedClass {
  const char* board;
  double speed;
};
constexpr SpeedClass kClasses[] = {{"pi3b", 0.1}, {"pi4b", 0.5}, {"pi5", 1.0}};

struct Cluster {
  Scenario scenario;
  std::vector<balance::WorkerPrior> priors;
};

Cluster MakeCluster(size_t nodes, uint64_t items) {
  Cluster cluster;
  Scenario& scenario = cluster.scenario;
  scenario.name = fmt::format("scale-{}x{}", nodes, items);
  scenario.workload.items = items;
  scenario.workload.item_seconds = kItemSeconds;
  scenario.workload.cost = balance::CostShape::kLinear;
  scenario.seed = kSeed;
  std::mt19937_64 random(kSeed);
  std::uniform_real_distribution<double> noise(1 - kPriorError, 1 + kPriorError);
  scenario.nodes.reserve(nodes);
  for (size_t i = 0; i < nodes; ++i) {
    const SpeedClass& type = kClasses[i % std::size(kClasses)];
    EmulatedNode node;
    node.name = fmt::format("{}-{}", type.board, i);
    node.speed = type.speed;
    node.latency = kLatency;
    scenario.nodes.push_back(std::move(node));
    cluster.priors.push_back({scenario.nodes.back().name, type.speed * noise(random)});
  }
  return cluster;
}

void BM_Simulate(benchmark::State& state, size_t nodes, uint64_t items, const std::string& policy) {
  const Cluster cluster = MakeCluster(nodes, items);
  const balance::PolicySpec spec = *balance::PolicyFromJson(policy, "policy");  // a known name
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<SimResult> result = Simulate(cluster.scenario, cluster.priors, spec);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      break;
    }
    state.counters["sim_seconds"] = wall.count();
    state.counters["target_s"] = kTargetSeconds;
    state.counters["makespan_s"] = result->makespan_s;
    state.counters["ideal_s"] = result->ideal_s;
    state.counters["efficiency"] = result->efficiency;
    state.counters["messages"] = static_cast<double>(result->messages);
    state.counters["events"] = static_cast<double>(result->events);
    state.counters["steals"] = static_cast<double>(result->steals);
    state.counters["rebalances"] = static_cast<double>(result->rebalances);
  }
}

void Register(size_t nodes, uint64_t items, const std::vector<std::string>& policies) {
  for (const std::string& policy : policies) {
    const std::string name =
        fmt::format("scale/{}x1e{}/{}", nodes,
                    static_cast<int>(std::log10(static_cast<double>(items)) + 0.5), policy);
    benchmark::RegisterBenchmark(name.c_str(), BM_Simulate, nodes, items, policy)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kSecond);
  }
}

}  // namespace
}  // namespace ballast::sim

int main(int argc, char** argv) {
  fmt::print(
      "Simulator at scale: Pi 3B/4B/5 nodes (speeds 0.1/0.5/1.0, a third each), latency {} s,\n"
      "items of {} s at speed 1, linear cost, priors wrong by up to ±{:.0f} % (seed {}).\n"
      "Target: adaptive, 10,000 workers, 10^8 items, sim_seconds < {} s on one core.\n"
      "efficiency = ideal_s / makespan_s (the physical limit over the makespan).\n\n",
      ballast::sim::kLatency, ballast::sim::kItemSeconds, 100 * ballast::sim::kPriorError,
      ballast::sim::kSeed, ballast::sim::kTargetSeconds);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ballast::sim::Register(1000, 10'000'000, ballast::balance::PolicyNames());
  ballast::sim::Register(10000, 100'000'000, {"adaptive", "weighted", "guided", "factoring"});
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
