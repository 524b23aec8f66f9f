// The operator's /metrics as ballast_operator_bench reads them: a scrape into
// "name{labels}" -> value, and the figures taken from one scrape or from two.
// Functions only; each is safe to call from any thread.
#pragma once
#include <map>
#include <string>
#include <utility>

namespace ballast::operator_bench {

// One scrape: "name{labels}" -> value.
using Metrics = std::map<std::string, double>;

inline constexpr char kReconcileSeconds[] = "ballast_operator_reconcile_seconds";
// CPU time of the reconciling thread in a pass, when the operator exports it.
inline constexpr char kReconcileCpuSeconds[] = "ballast_operator_reconcile_cpu_seconds";

// The operator's /metrics at `url`; empty when unreachable (said on stderr).
Metrics Scrape(const std::string& url);

// The value under `key`; NAN when absent.
double Metric(const Metrics& metrics, const std::string& key);

// ballast_operator_api_requests_total by verb.
std::map<std::string, double> ApiRequests(const Metrics& metrics);

// Quantile `q` ("0.99") of `summary`; NAN when absent.
double Quantile(const Metrics& metrics, const char* q, const char* summary = kReconcileSeconds);

// A summary's mean between two scrapes: the _sum delta over the _count delta;
// NAN when nothing was counted.
double MeanBetween(const Metrics& before, const Metrics& after, const std::string& summary);

// API requests between two scrapes, per job: the total and "create 9.00, patch 2.22".
std::pair<double, std::string> RequestsPerJob(const Metrics& before, const Metrics& after,
                                              double jobs);

}  // namespace ballast::operator_bench
