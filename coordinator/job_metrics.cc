#include "coordinator/job_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "coordinator/recorded_speeds.h"
#include "core/common/metric_labels.h"

namespace ballast::coordinator {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// A family's name, help and type; its series are added per job.
struct FamilySpec {
  const char* name;
  const char* help;
  MetricType type;
};

// The job families, in the order JobMetricFamilies returns them.
enum JobFamily {
  kItems,
  kItemsCompleted,
  kProgress,
  kStarted,
  kFinished,
  kFirstReport,
  kPredictedFinish,
  kFailedItems,
  kSteals,
  kRebalances,
  kMovedItems,
  kMessages,
  kWeight,
  kSpeed,
  kRecordedSpeed,
  kWork,
  kNodeItems,
  kBusy,
  kLeases,
  kLeaseCuts,
  kLost,
  kReports,
  kHoldingLease,
  kLastReport,
  kSpeedMeasured,  // per workload kind and node, across the jobs
  kFamilies,
};

constexpr FamilySpec kSpecs[kFamilies] = {
    {"ballast_job_items", "Items in the job", MetricType::Gauge},
    {"ballast_job_items_completed_total",
     "Items whose results are merged (a resumed job starts at its checkpoint's)",
     MetricType::Counter},
    {"ballast_job_progress_ratio", "Items completed over items, 0 to 1", MetricType::Gauge},
    {"ballast_job_started_timestamp_seconds", "When the coordinator added the job, unix seconds",
     MetricType::Gauge},
    {"ballast_job_finished_timestamp_seconds",
     "When the job's last result was merged, unix seconds; only once finished", MetricType::Gauge},
    {"ballast_job_first_report_timestamp_seconds",
     "When the first worker of the job reported, unix seconds: the start of its compute; once one "
     "has",
     MetricType::Gauge},
    {"ballast_job_predicted_finish_timestamp_seconds",
     "When the job will finish at the measured speeds, unix seconds; its finish once done",
     MetricType::Gauge},
    {"ballast_job_failed_items",
     "Items that failed all their attempts (exec; 0 for primes and matmul)", MetricType::Gauge},
    {"ballast_job_steals_total", "Tail steals: items taken from a lease's end for an idle node",
     MetricType::Counter},
    {"ballast_job_rebalances_total", "Leases shrunk by rebalancing", MetricType::Counter},
    {"ballast_job_moved_items_total", "Items taken from one node's lease for another",
     MetricType::Counter},
    {"ballast_job_messages_total", "Reports, replies and signals of the job", MetricType::Counter},
    {"ballast_node_weight",
     "The node's prior speed the job started from (fuzzy weight or history), relative",
     MetricType::Gauge},
    {"ballast_node_speed_cost_units_per_second",
     "The node's measured speed: cost units computed per second of computing", MetricType::Gauge},
    {"ballast_node_recorded_speed_cost_units_per_second",
     "The node's measured speed as history counts it; 0 while history would leave it out "
     "(computed too briefly, shared with another job's workers, or fewer than two such nodes)",
     MetricType::Gauge},
    {"ballast_node_work_cost_units_total",
     "Cost units the node computed (merged results; an item of mean cost is 1)",
     MetricType::Counter},
    {"ballast_node_items_total", "Items whose results the node delivered", MetricType::Counter},
    {"ballast_node_busy_seconds_total", "Seconds the node reported computing", MetricType::Counter},
    {"ballast_node_leases_total", "Leases granted to the node", MetricType::Counter},
    {"ballast_node_lease_cuts_total", "Times the node's lease was shrunk (stolen from, rebalanced)",
     MetricType::Counter},
    {"ballast_node_lost_total", "Times the node's worker was declared lost", MetricType::Counter},
    {"ballast_node_reports_total", "Reports the node's worker sent", MetricType::Counter},
    {"ballast_node_holding_lease", "1 while the node holds work (a lease or a check), else 0",
     MetricType::Gauge},
    {"ballast_node_last_report_timestamp_seconds",
     "When the node's worker last reported, unix seconds; once it has", MetricType::Gauge},
    {"ballast_node_speed_timestamp_seconds",
     "When a job of the workload kind hosted now last measured the node's speed, unix seconds",
     MetricType::Gauge},
};

void Add(MetricFamily& family, const std::vector<ClientMetric::Label>& labels, double value) {
  ClientMetric metric;
  metric.label = labels;
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

// The first report of any of the job's workers, in the view's seconds.
std::optional<double> FirstReport(const JobView& view) {
  std::optional<double> first;
  for (const WorkerView& worker : view.workers) {
    if (worker.contacted && (!first || worker.first_contact < *first)) first = worker.first_contact;
  }
  return first;
}

void AddJob(std::vector<MetricFamily>& families, const JobSample& job,
            const RecordedSpeeds& recorded) {
  const JobView& view = job.view;
  const auto unix_time = [&](double t) { return job.unix_now - (job.view_now - t); };
  const std::vector<ClientMetric::Label> labels = {{kWeightedJobLabel, job.name},
                                                   {kJobNamespaceLabel, job.ns},
                                                   {"workload", job.history_key.text()}};
  Add(families[kItems], labels, static_cast<double>(view.items));
  Add(families[kItemsCompleted], labels, static_cast<double>(view.completed));
  Add(families[kProgress], labels,
      view.items == 0 ? 0 : static_cast<double>(view.completed) / static_cast<double>(view.items));
  Add(families[kStarted], labels, unix_time(view.started_at));
  if (view.done) Add(families[kFinished], labels, unix_time(view.finished_at));
  if (const auto first = FirstReport(view)) Add(families[kFirstReport], labels, unix_time(*first));
  Add(families[kFailedItems], labels, static_cast<double>(view.result.FailedItems()));
  if (const double finish = PredictedFinish(view, job.view_now); finish >= 0) {
    Add(families[kPredictedFinish], labels, unix_time(finish));
  }
  Add(families[kSteals], labels, static_cast<double>(view.policy.steals));
  Add(families[kRebalances], labels, static_cast<double>(view.policy.rebalances));
  Add(families[kMovedItems], labels, static_cast<double>(view.policy.moved_items));
  Add(families[kMessages], labels, static_cast<double>(view.messages));
  for (const WorkerView& worker : view.workers) {
    std::vector<ClientMetric::Label> node = labels;
    node.push_back({"node", worker.name});
    Add(families[kWeight], node, worker.prior_speed);
    if (const double speed = MeasuredSpeed(worker); speed > 0) {
      Add(families[kSpeed], node, speed);
      const auto kept = recorded.speeds.find(worker.name);
      Add(families[kRecordedSpeed], node, kept == recorded.speeds.end() ? 0 : kept->second);
    }
    Add(families[kWork], node, worker.cost);
    Add(families[kNodeItems], node, static_cast<double>(worker.items));
    Add(families[kBusy], node, worker.busy_s);
    Add(families[kLeases], node, static_cast<double>(worker.leases));
    Add(families[kLeaseCuts], node, static_cast<double>(worker.cuts));
    Add(families[kLost], node, static_cast<double>(worker.lost));
    Add(families[kReports], node, static_cast<double>(worker.reports));
    Add(families[kHoldingLease], node, worker.holds_lease ? 1 : 0);
    if (worker.contacted) Add(families[kLastReport], node, unix_time(worker.last_contact));
  }
}

// Per (history key's text, node): the newest unix time a job measured the node's
// speed, over the nodes whose speeds count as history (`recorded`, by job).
std::map<std::pair<std::string, std::string>, double> SpeedMeasuredAt(
    const std::vector<JobSample>& jobs, const std::vector<RecordedSpeeds>& recorded) {
  std::map<std::pair<std::string, std::string>, double> newest;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobSample& job = jobs[i];
    for (const WorkerView& worker : job.view.workers) {
      if (!recorded[i].speeds.contains(worker.name)) continue;
      const double unix_time = job.unix_now - (job.view_now - worker.last_measured);
      auto [it, added] = newest.try_emplace({job.history_key.text(), worker.name}, unix_time);
      if (!added) it->second = std::max(it->second, unix_time);
    }
  }
  return newest;
}

}  // namespace

double PredictedFinish(const JobView& view, double view_now) {
  if (view.done) return view.finished_at;
  double cost_done = 0;
  uint64_t items_done = 0;
  double speeds = 0;
  for (const WorkerView& worker : view.workers) {
    cost_done += worker.cost;
    items_done += worker.items;
    if (worker.lost == 0 || worker.holds_lease) speeds += MeasuredSpeed(worker);
  }
  if (speeds <= 0) return -1;
  // Items of a resumed checkpoint count at the mean cost, 1.
  const double resumed = static_cast<double>(view.completed - std::min(view.completed, items_done));
  const double remaining = std::max(0.0, static_cast<double>(view.items) - resumed - cost_done);
  return view_now + remaining / speeds;
}

std::vector<MetricFamily> JobMetricFamilies(const std::vector<JobSample>& jobs) {
  std::vector<MetricFamily> families(kFamilies);
  for (int i = 0; i < kFamilies; ++i) {
    families[i].name = kSpecs[i].name;
    families[i].help = kSpecs[i].help;
    families[i].type = kSpecs[i].type;
  }
  std::vector<RecordedSpeeds> recorded;
  recorded.reserve(jobs.size());
  for (const JobSample& job : jobs) {
    recorded.push_back(SpeedsToRecord(job.view));
    recorded.back().speeds = EnteredSpeeds(recorded.back(), job.view, job.baseline, job.deviation);
    AddJob(families, job, recorded.back());
  }
  for (const auto& [kind_node, unix_time] : SpeedMeasuredAt(jobs, recorded)) {
    Add(families[kSpeedMeasured], {{"workload", kind_node.first}, {"node", kind_node.second}},
        unix_time);
  }
  std::erase_if(families, [](const MetricFamily& family) { return family.metric.empty(); });
  return families;
}

}  // namespace ballast::coordinator
