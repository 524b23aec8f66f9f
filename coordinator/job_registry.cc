#include "coordinator/job_registry.h"

#include <fmt/format.h>

#include <random>

namespace ballast::coordinator {
namespace {

// 64 random bits in hex: a job session's name (JobConfig::session).
std::string NewSessionName() {
  std::random_device device;
  const uint64_t bits = (static_cast<uint64_t>(device()) << 32) | device();
  return fmt::format("{:016x}", bits);
}

// 64 random bits, never 0: a verification seed (VerifyOptions::seed).
uint64_t NewSeed() {
  std::random_device device;
  const uint64_t bits = (static_cast<uint64_t>(device()) << 32) | device();
  return bits == 0 ? 1 : bits;
}

}  // namespace

StatusOr<std::shared_ptr<JobEntry>> JobRegistry::Add(JobConfig config) {
  auto entry = std::make_shared<JobEntry>();
  entry->epoch = JobEntry::Clock::now();
  const std::string id = config.id;
  entry->workers = config.workers.size();
  if (config.session.empty()) config.session = NewSessionName();
  // Which ranges verification samples must be secret from the workers.
  if (config.verify.fraction > 0 && config.verify.seed == 0) config.verify.seed = NewSeed();
  BALLAST_ASSIGN_OR_RETURN(entry->session, JobSession::Create(std::move(config), 0));
  std::lock_guard lock(mutex_);
  if (!jobs_.emplace(id, entry).second) {
    return Status(StatusCode::kConflict, fmt::format("job '{}' exists", id));
  }
  return entry;
}

std::shared_ptr<JobEntry> JobRegistry::Remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  std::shared_ptr<JobEntry> entry = std::move(it->second);
  jobs_.erase(it);
  return entry;
}

std::map<std::string, std::shared_ptr<JobEntry>> JobRegistry::RemoveAll() {
  std::map<std::string, std::shared_ptr<JobEntry>> jobs;
  std::lock_guard lock(mutex_);
  jobs.swap(jobs_);
  return jobs;
}

std::shared_ptr<JobEntry> JobRegistry::Find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<JobEntry>> JobRegistry::All() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<JobEntry>> entries;
  entries.reserve(jobs_.size());
  for (const auto& [id, entry] : jobs_) entries.push_back(entry);
  return entries;
}

size_t JobRegistry::size() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

std::set<std::string> JobRegistry::SharedNodes(const std::string& id) const {
  std::vector<std::shared_ptr<JobEntry>> others;
  std::shared_ptr<JobEntry> own;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [other_id, entry] : jobs_) {
      (other_id == id ? own : others.emplace_back()) = entry;
    }
  }
  if (!own) return {};
  std::set<std::string> names;
  {
    std::lock_guard lock(own->mutex);
    names = own->session->NamesOfWorkers();
  }
  std::set<std::string> shared;
  // One job's lock at a time: never two, so no order to keep.
  for (const auto& other : others) {
    if (names.empty()) break;
    std::set<std::string> holding;
    {
      std::lock_guard lock(other->mutex);
      holding = other->session->HoldingLeases(names);
    }
    for (const auto& name : holding) {
      shared.insert(name);
      names.erase(name);
    }
  }
  return shared;
}

std::vector<JobSample> JobRegistry::Samples(double unix_now) const {
  const std::vector<std::shared_ptr<JobEntry>> entries = All();
  std::vector<JobSample> samples;
  samples.reserve(entries.size());
  for (const auto& entry : entries) {
    JobSample sample;
    {
      std::lock_guard lock(entry->mutex);
      sample.view = entry->session->View(/*segments=*/false);
      sample.view_now = entry->Now();
      const JobConfig& config = entry->session->config();
      sample.name = config.metric_name.empty() ? config.id : config.metric_name;
      sample.ns = config.metric_namespace;
      sample.history_key = config.history_key.empty() ? history::HistoryKey(config.workload.kind)
                                                      : config.history_key;
      sample.baseline = config.baseline;
      sample.deviation = config.deviation;
    }
    sample.unix_now = unix_now;
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace ballast::coordinator
