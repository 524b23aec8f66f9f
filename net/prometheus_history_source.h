// PrometheusHistory: the history of measured speeds from Prometheus
// (--prometheus-url): one instant query (/api/v1/query, history::HistoryQuery)
// per job start, answering for every node at once; the answer read with
// bounded size and depth (history::ParseHistoryAnswer). When that answer has
// none of the asked nodes, a second query asks what coordinators older than
// the recorded gauge measured (history::LegacyHistoryQuery, dearer): after an
// upgrade, until a job of the kind has been recorded. `ballast weights --fit
// URL` asks the same through History.
//
// A lookup never takes longer than `timeout` (--prometheus-timeout; twice
// that when it asks the second query): a
// Prometheus that is down (connection refused), slow (no answer in time),
// answers an HTTP error or garbage gives a lookup without nodes whose
// `trouble` says which — the job starts on the fuzzy prior and Decide posts a
// HistoryUnavailable event. Request and answer run on cpprestsdk's pool; a
// request past its time is cancelled and left to finish there. After a
// failure Prometheus is not asked again for `retry_after`: the jobs that
// start meanwhile get the same trouble at once, so a burst of job starts
// never waits a timeout each.
//
// Thread-safety: safe from several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/history/history_source.h"
#include "core/history/prometheus_history.h"

namespace ballast::net {

using history::HistoryLookup;
using history::HistorySource;

struct PrometheusHistoryOptions {
  std::string url;  // "http://prometheus.monitoring:9090" (a path prefix is kept)
  std::string flag = "--prometheus-url";    // what Create's errors name as the URL's source
  double window_seconds = 7 * 24 * 3600;    // --prometheus-window
  std::chrono::milliseconds timeout{2000};  // --prometheus-timeout
  std::chrono::milliseconds retry_after{30000};
  history::AnswerLimits limits = {};
};

class PrometheusHistory final : public HistorySource {
 public:
  // Invalid, naming options.flag, when options.url is not an http(s) URL
  // or names a port past 65535.
  static StatusOr<std::unique_ptr<PrometheusHistory>> Create(PrometheusHistoryOptions options);
  ~PrometheusHistory() override;

  HistoryLookup Lookup(const history::HistoryKey& key, const std::vector<std::string>& nodes,
                       double now) override;
  // Ok: Prometheus scrapes the speeds from the coordinator.
  Status Record(const history::HistoryKey& key, const std::map<std::string, double>& speeds,
                double now) override;

  // Every node's history kept under `key` over the window, as
  // Prometheus answers the history query at `time` (seconds since the
  // epoch), sorted by node; when no node was recorded, the legacy query's
  // answer. The errors of Query and of ParseHistoryAnswer.
  // Asks whatever the last failure was (retry_after is Lookup's) and
  // within the timeout.
  StatusOr<std::vector<fuzzy::NodeHistory>> History(const history::HistoryKey& key, double time);

  // The body of Prometheus's answer to `query` evaluated at `time` (seconds
  // since the epoch). Unavailable for a connection that fails, no answer
  // within the timeout, an HTTP status other than 200 and 4xx/422 (whose
  // body is Prometheus's error, returned as the body), or a body past
  // limits.max_bytes.
  StatusOr<std::string> Query(const std::string& query, double time);

  struct Impl;

 private:
  // Query's answer parsed (history::ParseHistoryAnswer); its errors.
  StatusOr<std::vector<fuzzy::NodeHistory>> Ask(const std::string& query, double now);

  explicit PrometheusHistory(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::net
