// The operator against the test control plane: issue 5's figures, each beside
// its target, in one run. bench/operator-bench starts the control plane and
// `ballast operator` and runs this with the operator's PID and /metrics URL.
//
// The phases, each in a file of its own (phases.h says what each measures):
//   apply -> pods  jobs applied one at a time (apply_phase.cc)
//   N at once      small jobs created back to back (concurrent_phase.cc)
//   efficiency     one job per policy on seed 000's boards (efficiency_phase.cc)
//   wide           (--wide N, instead of the above) one job on N light nodes
//                  (wide_phase.cc)
//   churn          (--churn N, instead of the others) N jobs made and deleted
//                  in waves, the operator's RSS sampled (churn_phase.cc)
// then the closing table of figures (figures.cc). What they share: the flags,
// the client, the watches and the steps they take alike (context.h).
//
// A plain program: it drives processes and an API server, nothing Google
// Benchmark could time. Figures only; it never fails on speed (exit 1 only
// when it could not measure).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "bench/operator_bench/context.h"
#include "bench/operator_bench/figures.h"
#include "bench/operator_bench/phases.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"

namespace ballast::operator_bench {
namespace {

// The watches started, the nodes counted, then the phases the flags ask for.
// Returns 0, or 1 when it could not measure (or a phase says so).
int Run(Context& context) {
  const Flags& flags = context.flags();
  if (!context.StartWatches()) return 1;
  const int nodes = context.EligibleNodes("");
  if (nodes == 0) {
    std::cerr << "operator_bench: no Ready, untainted node\n";
    return 1;
  }
  context.set_rss_idle(ProcStatusMb(flags.operator_pid, "VmRSS:"));
  std::cout << fmt::format(
                   "operator bench: namespace {}, {} eligible nodes, operator pid {} (VmRSS "
                   "{:.1f} MB idle)\n"
                   "\n",
                   flags.ns, nodes, flags.operator_pid, context.rss_idle())
            << std::flush;
  if (flags.wide > 0) return Wide(context);
  if (flags.churn > 0) return Churn(context, nodes);
  Results results;
  ApplyToPods(context, nodes, &results);
  Concurrent(context, nodes, &results);
  Efficiency(context, &results);
  PrintFigures(results, flags.concurrent);
  return 0;
}

}  // namespace
}  // namespace ballast::operator_bench

int main(int argc, char** argv) {
  using ballast::operator_bench::Context;
  ballast::operator_bench::Flags flags;
  CLI::App app{
      "The operator's figures against the test control plane; run through bench/operator-bench, "
      "which starts both."};
  app.add_option("--kubeconfig", flags.kubeconfig)->required();
  app.add_option("--namespace", flags.ns, "the namespace the operator reconciles")->required();
  app.add_option("--operator-pid", flags.operator_pid, "for its VmHWM")->required();
  app.add_option("--metrics-url", flags.metrics_url, "the operator's /metrics")->required();
  app.add_option("--sequential", flags.sequential, "jobs applied one at a time")
      ->capture_default_str();
  app.add_option("--concurrent", flags.concurrent, "jobs applied at once")->capture_default_str();
  app.add_option("--small-limit", flags.small_limit, "primes limit of those jobs")
      ->capture_default_str();
  app.add_option("--repeat", flags.repeat, "efficiency runs per policy")->capture_default_str();
  app.add_option("--limit", flags.limit, "primes limit of the efficiency job")
      ->capture_default_str();
  app.add_option("--policies", flags.policies)->capture_default_str();
  app.add_option("--wide", flags.wide,
                 "instead of the other phases: one job on this many nodes labelled "
                 "ballast.io/pool=wide (bench/operator-bench --wide N registers them)");
  app.add_option("--wide-limit", flags.wide_limit, "primes limit of the wide job")
      ->capture_default_str();
  app.add_option("--churn", flags.churn,
                 "instead of the other phases: this many jobs created, finished and deleted in "
                 "waves, the operator's VmRSS sampled as they go");
  app.add_option("--churn-wave", flags.churn_wave, "jobs at once in the churn phase")
      ->capture_default_str();
  app.add_option("--churn-every", flags.churn_every, "jobs between two samples of the churn phase")
      ->capture_default_str();
  app.add_option("--churn-pause", flags.churn_pause_s,
                 "seconds to wait after each sample of the churn phase, with no job in the "
                 "namespace (for a look at the operator at rest, e.g. malloc_stats through gdb)")
      ->capture_default_str();
  app.add_option("--pool", flags.pool,
                 "the efficiency jobs' nodeSelector ballast.io/pool (none when no node has it)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto config = ballast::kube::LoadKubeconfig(flags.kubeconfig);
  if (!config.ok()) {
    std::cerr << config.status().ToString() << "\n";
    return 2;
  }
  auto client = ballast::kube::HttpKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << client.status().ToString() << "\n";
    return 2;
  }
  Context context(**client, flags);
  return ballast::operator_bench::Run(context);
}
