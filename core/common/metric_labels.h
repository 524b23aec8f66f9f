// The names of the labels that tie an exported series to its WeightedJob
// (docs/metrics.md, "Labels"), in one place for the processes that export
// them (the coordinator, the worker, the operator) and the PromQL that reads
// them (core/history/prometheus_history.h).
//
// They are not `job` and `namespace`: Prometheus gives every scraped series
// those two target labels of its own (the scrape job, the target's
// namespace), and without `honor_labels` renames a series' own to
// `exported_job` and `exported_namespace`; a shared Prometheus, such as
// kube-prometheus-stack's, may refuse to honour them. `weightedjob` and
// `job_namespace` are names no scrape sets, so they arrive as exported under
// any scrape configuration.
//
// Thread-safety: constants.
#pragma once

namespace ballast {

// The WeightedJob's metadata.name (`ballast run`: the job file's name).
inline constexpr const char* kWeightedJobLabel = "weightedjob";
// The WeightedJob's namespace (`ballast run`: "local").
inline constexpr const char* kJobNamespaceLabel = "job_namespace";

}  // namespace ballast
