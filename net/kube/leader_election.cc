#include "net/kube/leader_election.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

namespace ballast::kube {
namespace {

using Clock = std::chrono::steady_clock;

enum class Outcome { kHeld, kHeldByOther, kError };

int64_t DurationSeconds(std::chrono::milliseconds duration) {
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(duration).count());
}

}  // namespace

std::string MicroTimeNow() {
  const auto now = std::chrono::system_clock::now();
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     micros % 1000000);
}

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionConfig config)
    : client_(client),
      config_(std::move(config)),
      lease_(Leases().In(config_.lease_namespace).Named(config_.lease_name)) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
  if (leading_.load()) {
    Release();
    SetLeading(false);
  }
}

std::string LeaderElector::Leader() const {
  std::lock_guard lock(mu_);
  return observed_holder_;
}

void LeaderElector::SetLeading(bool leading) {
  if (leading_.exchange(leading) == leading) return;
  spdlog::info("leader election transition lease={} identity={} leading={}", lease_.Describe(),
               config_.identity, leading);
  const auto& callback = leading ? config_.on_started_leading : config_.on_stopped_leading;
  if (callback) callback();
}

void LeaderElector::Run() {
  while (!cancel_.cancelled()) {
    const bool held = TryAcquireOrRenew();
    const auto now = Clock::now();
    if (held) {
      last_renew_ = now;
      SetLeading(true);
    } else if (leading_.load()) {
      // Another holder (a lost race) or no renewal within the deadline.
      const bool other = !Leader().empty() && Leader() != config_.identity;
      if (other || now - last_renew_ > config_.renew_deadline) SetLeading(false);
    }
    cancel_.WaitFor(config_.retry_period);
  }
}

void LeaderElector::Observe(const nlohmann::json& spec) {
  std::string holder = spec.value("holderIdentity", "");
  bool changed_holder = false;
  {
    std::lock_guard lock(mu_);
    if (spec != observed_spec_) {
      observed_spec_ = spec;
      observed_at_ = Clock::now();
    }
    changed_holder = holder != observed_holder_;
    observed_holder_ = holder;
  }
  if (changed_holder && config_.on_new_leader) config_.on_new_leader(holder);
}

// The Lease, created with this elector as the holder when there is none.
StatusOr<nlohmann::json> LeaderElector::ReadLease(bool* created) {
  *created = false;
  auto lease = client_.Get(lease_);
  if (lease.status().code() != StatusCode::kNotFound) return lease;
  const std::string now = MicroTimeNow();
  nlohmann::json fresh = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
      {"spec",
       {{"holderIdentity", config_.identity},
        {"leaseDurationSeconds", DurationSeconds(config_.lease_duration)},
        {"acquireTime", now},
        {"renewTime", now},
        {"leaseTransitions", 0}}}};
  *created = true;
  return client_.Create(lease_, fresh);
}

bool LeaderElector::TryAcquireOrRenew() {
  bool created = false;
  auto lease = ReadLease(&created);
  if (!lease.ok()) {
    spdlog::debug("leader election read failed lease={} error={}", lease_.Describe(),
                  lease.status().ToString());
    return false;
  }
  nlohmann::json spec = lease->value("spec", nlohmann::json::object());
  Observe(spec);
  if (created) return true;
  const std::string holder = spec.value("holderIdentity", "");
  if (holder != config_.identity && !holder.empty()) {
    const auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", int64_t{1}));
    std::lock_guard lock(mu_);
    if (observed_at_ + duration > Clock::now()) return false;  // still valid
  }
  const std::string now = MicroTimeNow();
  if (holder != config_.identity) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = spec.value("leaseTransitions", int64_t{0}) + 1;
  }
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = DurationSeconds(config_.lease_duration);
  spec["renewTime"] = now;
  (*lease)["spec"] = spec;
  auto updated = client_.Update(lease_, *lease);  // conditional on resourceVersion
  if (!updated.ok()) return false;
  Observe(updated->value("spec", nlohmann::json::object()));
  return true;
}

void LeaderElector::Release() {
  auto lease = client_.Get(lease_);
  if (!lease.ok()) return;
  nlohmann::json& spec = (*lease)["spec"];
  if (spec.value("holderIdentity", "") != config_.identity) return;
  spec.erase("holderIdentity");
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = MicroTimeNow();
  auto updated = client_.Update(lease_, *lease);
  if (!updated.ok()) {
    spdlog::info("leader election release failed lease={} error={}", lease_.Describe(),
                 updated.status().ToString());
  }
}

}  // namespace ballast::kube
