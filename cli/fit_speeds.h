// The measured speeds `ballast weights --fit SPEEDS` fits a profile's ranks
// to, and where they came from: a speeds file (fuzzy::ParseSpeeds), or, when
// SPEEDS is an http:// or https:// URL, Prometheus answering the operator's
// own history query (net::PrometheusHistory::History) for one
// workload kind over a window. From Prometheus the speed of a node is the
// query's `speed`: each job's last estimate of the node relative to that
// job's mean over its nodes, averaged over the window's jobs
// (core/history/prometheus_history.h).
//
// Nodes Prometheus knows but NODES does not list (it keeps every node the
// cluster ever had) are left out with a warning; so are the nodes of NODES
// without a speed in the window. Fewer than two nodes left is an error.
//
// Thread-safety: runs on the command's thread; SelectNodeSpeeds is pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/fuzzy/profile.h"

namespace ballast::cli {

struct FitSpeedsOptions {
  std::string source;    // --fit: a speeds file, or the URL of a Prometheus
  std::string workload;  // --workload (URL only): primes, matmul or exec
  std::string window;    // --window (URL only): seconds or "7d"; "" for the operator's default
  double timeout_s = 5;  // --timeout (URL only): seconds, in (0, 60]
  std::vector<std::string> url_flags;  // the URL-only flags given, to refuse them with a file
};

struct FitSpeeds {
  std::map<std::string, double> speeds;   // node of NODES -> measured speed, any scale
  std::map<std::string, double> samples;  // node -> weighted sample count; Prometheus only
  std::string origin;                     // "the file speeds.yaml", "Prometheus at URL, ..."
  std::vector<std::string> warnings;      // for stderr, one line each
};

// The window --fit URL reads without --window: the operator's default
// (--prometheus-window), in seconds.
double DefaultFitWindowSeconds();

// The seconds of --window (seconds, or a duration like 7d): the default when
// empty. Invalid naming --window when it does not parse or is under 60 s.
StatusOr<double> FitWindowSeconds(const std::string& window);

// Whether --fit names a Prometheus (http:// or https://) rather than a file.
bool IsPrometheusUrl(const std::string& source);

// Who holds a history and what lists the nodes, as the messages of
// SelectNodeSpeeds name them.
struct HistoryWording {
  std::string holder = "Prometheus";  // "Prometheus has speeds of ..."
  std::string nodes = "--nodes";      // "... node(s) not in --nodes"
};

// The speeds of `nodes` in `history` (Prometheus's answer, or the operator's
// store), with their samples and a warning for each group left out: nodes
// of the answer not in `nodes`, nodes of `nodes` not in the answer.
// `origin` describes the answer (FitSpeeds::origin). Unavailable, naming
// the nodes left, when fewer than two are left.
StatusOr<FitSpeeds> SelectNodeSpeeds(const std::vector<fuzzy::NodeHistory>& history,
                                     const std::vector<fuzzy::NodeFacts>& nodes,
                                     const std::string& origin, const HistoryWording& wording = {});

// The speeds options.source gives for `nodes`. Invalid naming the flag for
// a URL without --workload or with a bad --workload, --window or --timeout,
// or URL-only flags with a file; NotFound or Invalid naming the file for a
// missing or bad speeds file; Unavailable naming the URL and the cause when
// Prometheus is down, does not answer within the timeout or answers
// anything but the history query's answer, and as SelectNodeSpeeds.
StatusOr<FitSpeeds> LoadFitSpeeds(const FitSpeedsOptions& options,
                                  const std::vector<fuzzy::NodeFacts>& nodes);

}  // namespace ballast::cli
