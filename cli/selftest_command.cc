// ballast selftest: submits a tiny primes WeightedJob, waits for it to
// succeed, checks the exact result against the sieve here, deletes the job.
// The chart's `helm test` runs it. Everything it decides is in selftest.h;
// this file only talks to the API server and prints.
//
// Thread-safety: runs once on the main thread.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/selftest.h"
#include "cli/stop_signals.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"
#include "operator/runtime/resources.h"

namespace ballast::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct SelftestFlags {
  std::string kubeconfig;
  std::string context;
  selftest::Spec spec;
  std::vector<std::string> node_selector;  // KEY=VALUE
};

// --node-selector's KEY=VALUE words as a map; Invalid naming the bad one.
StatusOr<std::map<std::string, std::string>> ParseNodeSelector(
    const std::vector<std::string>& words) {
  std::map<std::string, std::string> labels;
  for (const std::string& word : words) {
    const auto equals = word.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status::Invalid(fmt::format("--node-selector: expected KEY=VALUE, got '{}'", word));
    }
    labels[word.substr(0, equals)] = word.substr(equals + 1);
  }
  return labels;
}

void Say(const std::string& line) {
  std::printf("selftest: %s\n", line.c_str());
  std::fflush(stdout);
}

// Sleeps `duration` in short steps; false when a stop signal came.
bool Pause(const StopSignals& stop, milliseconds duration) {
  const auto until = Clock::now() + duration;
  while (Clock::now() < until) {
    if (stop.signal() != 0) return false;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return stop.signal() == 0;
}

// Deletes the job `ref` names and waits (up to 60 s) until it is gone. Ok
// when it was not there, and at once once the deletion is requested when a
// stop signal came (the garbage collector finishes it).
Status DeleteAndWait(kube::KubeClient& client, const kube::ResourceRef& ref,
                     const StopSignals& stop) {
  kube::DeleteOptions options;
  options.propagation_policy = "Background";
  Status deleted = client.Delete(ref, options);
  if (deleted.code() == StatusCode::kNotFound) return Status::Ok();
  if (!deleted.ok()) return deleted;
  const auto deadline = Clock::now() + seconds(60);
  while (Clock::now() < deadline) {
    auto job = client.Get(ref);
    if (job.status().code() == StatusCode::kNotFound) return Status::Ok();
    if (!Pause(stop, milliseconds(200))) return Status::Ok();
  }
  return Status::Unavailable(
      fmt::format("{} still exists 60 s after its deletion", ref.Describe()));
}

// Polls the job until Assess says it passed or failed, printing each new
// progress line. Failed when the timeout or a stop signal comes first.
selftest::Assessment Watch(kube::KubeClient& client, const kube::ResourceRef& ref,
                           const selftest::Spec& spec, const workload::Result& expected,
                           const StopSignals& stop) {
  const auto start = Clock::now();
  const auto deadline = start + seconds(spec.timeout_seconds);
  std::string last_line;
  std::string last_error;
  while (Clock::now() < deadline) {
    auto job = client.Get(ref);
    if (job.ok()) {
      selftest::Assessment assessment = selftest::Assess(*job, expected);
      if (assessment.verdict != selftest::Verdict::kWaiting) return assessment;
      if (assessment.message != last_line) {
        last_line = assessment.message;
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        Say(fmt::format("{:5.1f} s  {}", elapsed, last_line));
      }
    } else if (job.status().code() == StatusCode::kUnavailable) {
      if (job.status().message() != last_error) Say("retrying: " + job.status().ToString());
      last_error = job.status().message();
    } else {
      return {selftest::Verdict::kFailed, "reading the job: " + job.status().ToString()};
    }
    if (!Pause(stop, seconds(1))) {
      return {selftest::Verdict::kFailed, fmt::format("stopped by signal {}", stop.signal())};
    }
  }
  std::string message =
      fmt::format("the job did not finish within --timeout {} s (last seen: {})",
                  spec.timeout_seconds, last_line.empty() ? last_error : last_line);
  if (last_line.rfind("waiting for the operator", 0) == 0) {
    message +=
        "; is the operator running? kubectl get pods -A -l app.kubernetes.io/component=operator";
  }
  return {selftest::Verdict::kFailed, message};
}

int Run(SelftestFlags flags) {
  StopSignals stop;
  selftest::Spec spec = flags.spec;
  auto node_selector = ParseNodeSelector(flags.node_selector);
  if (!node_selector.ok()) return ReportError(node_selector.status());
  spec.node_selector = *node_selector;
  // The flags first (the namespace may come from the config, checked below).
  selftest::Spec flags_only = spec;
  if (flags_only.ns.empty()) flags_only.ns = "default";
  if (Status valid = selftest::Validate(flags_only); !valid.ok()) return ReportError(valid);
  auto config = kube::FindClusterConfig(flags.kubeconfig, flags.context);
  if (!config.ok()) return ReportError(config.status());
  if (spec.ns.empty()) spec.ns = config->default_namespace;
  if (Status valid = selftest::Validate(spec); !valid.ok()) return ReportError(valid);
  kube::HttpClientOptions options;
  options.user_agent = "ballast-selftest";
  auto client = kube::HttpKubeClient::Create(*config, options);
  if (!client.ok()) return ReportError(client.status());

  const workload::Result expected = selftest::ExpectedPrimes(spec.limit);
  const kube::ResourceRef ref = runtime::WeightedJobs().In(spec.ns).Named(spec.name);
  Say(fmt::format("counting the primes below {} as WeightedJob {}/{} (API server {}); expected: {}",
                  spec.limit, spec.ns, spec.name, config->server, expected.Summary()));
  // A job of this name left by an earlier run that was killed goes first.
  if (Status gone = DeleteAndWait(**client, ref, stop); !gone.ok()) {
    return ReportError(Status(gone.code(), "removing an earlier selftest job: " + gone.message()));
  }
  if (stop.signal() != 0) return 128 + stop.signal();
  if (auto created = (*client)->Create(ref.Named(""), selftest::Job(spec)); !created.ok()) {
    return ReportError(
        Status(created.status().code(), "creating the job: " + created.status().message()));
  }
  const selftest::Assessment verdict = Watch(**client, ref, spec, expected, stop);
  const Status deleted = DeleteAndWait(**client, ref, stop);
  if (!deleted.ok()) Say("could not delete the job: " + deleted.ToString());
  if (stop.signal() != 0) {
    // As shells report a command a signal ended: 130 for SIGINT, 143 for SIGTERM.
    std::fprintf(stderr, "selftest: stopped by signal %d; the job's deletion is requested\n",
                 stop.signal());
    return 128 + stop.signal();
  }
  if (verdict.verdict != selftest::Verdict::kPassed) {
    std::fprintf(stderr, "selftest: FAILED: %s\n", verdict.message.c_str());
    return kExitFailure;
  }
  Say("passed: " + verdict.message + (deleted.ok() ? "; the job is deleted" : ""));
  return deleted.ok() ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterSelftest(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SelftestFlags>();
  flags->spec.ns.clear();  // empty: the kubeconfig's or the pod's namespace
  auto* cmd = app.add_subcommand(
      "selftest",
      "Check an installation end to end: run a tiny primes WeightedJob and compare its result "
      "with the primes counted here");
  cmd->add_option("--kubeconfig", flags->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the pod's service "
                  "account)");
  cmd->add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  cmd->add_option("-n,--namespace", flags->spec.ns,
                  "namespace of the job (default: the context's, or the pod's)");
  cmd->add_option("--name", flags->spec.name, "name of the WeightedJob")->capture_default_str();
  cmd->add_option("--limit", flags->spec.limit, "count the primes below this")
      ->check(CLI::Range(selftest::kMinLimit, selftest::kMaxLimit))
      ->capture_default_str();
  cmd->add_option("--profile", flags->spec.profile, "the WeightProfile the job names")
      ->capture_default_str();
  cmd->add_option("--node-selector", flags->node_selector,
                  "KEY=VALUE: only nodes with this label run the job's workers (repeatable)")
      ->delimiter(',');
  cmd->add_option("--timeout", flags->spec.timeout_seconds,
                  "seconds to wait for the job to succeed (also its activeDeadlineSeconds)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->footer(
      "\nIt deletes a job of the same name left by an earlier run, creates the job, prints its\n"
      "progress until it succeeds, compares the count and the checksum of the primes with its\n"
      "own sieve, and deletes the job. Exit code 0: the result is exact; 1: the job failed, did\n"
      "not finish in time or its result differs (the message says how); 2: a bad flag;\n"
      "130 or 143: SIGINT or SIGTERM, after which it deletes the job too.\n"
      "It needs the operator running (helm install, or `ballast operator`) and the right to\n"
      "create, get and delete WeightedJobs in the namespace.\n\n"
      "Examples:\n"
      "  ballast selftest -n ballast-system\n"
      "  ballast selftest --limit 300000 --node-selector ballast.io/pool=seed000 --timeout 120\n"
      "  helm test ballast -n ballast-system     # the chart runs it in a pod");
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace ballast::cli
