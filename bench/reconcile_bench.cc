// ballast_reconcile_bench: the computing part of one reconcile pass of a
// running WeightedJob, by the number of nodes: what the operator does between
// reading its caches and writing to the API server.
//
//   pass/N           ReadNode and ReadPod of N nodes and N worker pods (the
//                    cache's JSON into views), Decide on them with the
//                    coordinator's view of N workers, mid-run
//   status_json/N    StatusToJson of that pass's status (the body of the
//                    status write, at most 100 node rows: docs/crds.md)
//
// at N = 4, 100, 1,000 and 5,000. bench/operator-bench --wide measures the
// whole reconcile (this, plus the API server's replies and the machine's
// load) on a control plane; this bench says how much of that is the
// operator's own computing. It prints figures; it never fails on speed.
//
//   build/ballast_reconcile_bench [--benchmark_filter=/1000]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/document.h"
#include "operator/api/job_status.h"
#include "operator/controller/decide.h"
#include "operator/controller/worker_objects.h"

namespace ballast::controller {
namespace {

using nlohmann::json;

constexpr double kWall = 1'800'000'000;
constexpr uint64_t kItems = 10'000'000;

// A Pi 3B, 4B and 5 in turn, with every label the shipped profile reads (as
// bench/operator-bench --wide labels its nodes).
json NodeJson(size_t i) {
  struct Board {
    const char *cpu, *ram, *power;
  };
  static constexpr Board kBoards[] = {
      {"cortex-a53", "1024", "4.0"}, {"cortex-a72", "2048", "6.4"}, {"cortex-a76", "8192", "8.8"}};
  const Board& board = kBoards[i % 3];
  const std::string name = fmt::format("wide-{:04}", i);
  return {{"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/arch", "arm64"},
              {"kubernetes.io/os", "linux"},
              {"kubernetes.io/hostname", name},
              {"ballast.io/pool", "wide"},
              {"ballast.io/cpu-model", board.cpu},
              {"ballast.io/os-bits", "64"},
              {"ballast.io/ram-mb", board.ram},
              {"ballast.io/sd-gb", "32"},
              {"ballast.io/power-w", board.power},
              {"ballast.io/os-release", "2024-07-04"}}},
            {"annotations", {{"ballast.io/emulated-speed", "1.0"}}}}},
          {"status",
           {{"capacity", {{"cpu", "1"}, {"memory", std::string(board.ram) + "Mi"}}},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json PodJson(const std::string& node, size_t i) {
  return {{"metadata",
           {{"name", WorkerPodName("wide", node)},
            {"uid", fmt::format("pod-uid-{}", i)},
            {"ownerReferences", json::array({{{"uid", "job-uid"}}})}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", "Running"}}}};
}

json ShippedProfile() {
  std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/crds/profiles/raspberry-pi.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto document = config::ParseYaml(text.str(), "raspberry-pi.yaml");
  if (!document.ok()) throw std::runtime_error(document.status().ToString());
  return document->tree;
}

// A job of kItems primes mid-run on n nodes: the cache's JSON, and the
// operator's memory after the passes that registered it and made its pods.
struct World {
  json job = {
      {"metadata", {{"name", "wide"}, {"namespace", "ns"}, {"uid", "job-uid"}, {"generation", 1}}},
      {"spec",
       {{"workload", {{"primes", {{"limit", kItems}}}}},
        {"nodeSelector", {{"ballast.io/pool", "wide"}}}}}};
  api::ParsedSpec spec;
  std::vector<json> nodes, pods;
  json profile = ShippedProfile();
  coordinator::JobView view;
  JobMemory memory;
  DecideOptions options;
  double wall = kWall;

  explicit World(size_t n) : spec(api::ParseWeightedJobSpec(job["spec"], "wide")) {
    for (size_t i = 0; i < n; ++i) nodes.push_back(NodeJson(i));
    view.items = kItems;
    view.started_at = 0;
    Pass(/*with_view=*/false);  // registers the job
    for (size_t i = 0; i < n; ++i) {
      coordinator::WorkerView worker;
      worker.name = nodes[i]["metadata"]["name"];
      worker.items = 1000 + i;
      worker.cost = static_cast<double>(worker.items);
      worker.busy_s = 10;
      worker.cpu_s = 9;
      view.completed += worker.items;
      view.workers.push_back(worker);
    }
    Pass(true);  // creates the pods
    for (size_t i = 0; i < n; ++i) pods.push_back(PodJson(nodes[i]["metadata"]["name"], i));
    Pass(true);
    // A registered session weighed every node (whether it runs is the
    // coordinator's view now, not memory).
    if (memory.session.NodeCount() != n) throw std::runtime_error("the job did not register");
  }

  Decision Pass(bool with_view) {
    wall += 3;  // past the status pacing: every pass writes its status
    DecideInput input;
    input.ns = "ns";
    input.name = "wide";
    input.id = "ns.wide";
    input.job = api::ReadJob(job);
    input.spec = &spec;
    for (const json& pod : pods) input.pods.push_back(api::ReadPod(pod));
    for (const json& node : nodes) input.nodes.push_back(api::ReadNode(node));
    input.profile = profile;
    if (with_view) {
      input.view = view;
      input.checkpoint = coordinator::Checkpoint{};
    }
    input.fresh_token = "fresh";
    input.now = {wall, SteadyTime{} + std::chrono::seconds(static_cast<int64_t>(wall - kWall)),
                 "2027-01-15T08:00:00Z"};
    Decision decision = Decide(input, memory, options);
    memory = decision.memory;
    return decision;
  }
};

void BM_Pass(benchmark::State& state) {
  World world(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(world.Pass(true));
  state.counters["nodes"] = static_cast<double>(state.range(0));
}

void BM_StatusJson(benchmark::State& state) {
  World world(static_cast<size_t>(state.range(0)));
  const Decision decision = world.Pass(true);
  size_t bytes = 0;
  for (auto _ : state) {
    const json status = api::StatusToJson(decision.status);
    bytes = status.dump().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["status_kib"] = static_cast<double>(bytes) / 1024;
}

BENCHMARK(BM_Pass)->Name("pass")->Arg(4)->Arg(100)->Arg(1000)->Arg(5000)->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_StatusJson)
    ->Name("status_json")
    ->Arg(4)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(5000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ballast::controller

BENCHMARK_MAIN();
