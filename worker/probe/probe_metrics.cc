// The probe's gauges (probe_metrics.h).
#include "worker/probe/probe_metrics.h"

#include <fmt/format.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <map>
#include <optional>

#include "worker/metrics_server.h"

namespace ballast::worker {

class ProbeMetrics::Impl {
 public:
  explicit Impl(std::string node)
      : registry_(std::make_shared<prometheus::Registry>()), node_(std::move(node)) {}

  // Sets gauge `name` to `value`, or removes it when the fact is unknown.
  void Set(const std::string& name, const char* help, std::optional<double> value) {
    auto it = families_.find(name);
    if (it == families_.end()) {
      auto& family = prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
      it = families_.emplace(name, Entry{&family, nullptr}).first;
    }
    Entry& entry = it->second;
    if (!value) {
      if (entry.gauge != nullptr) entry.family->Remove(entry.gauge);
      entry.gauge = nullptr;
      return;
    }
    if (entry.gauge == nullptr) entry.gauge = &entry.family->Add({{"node", node_}});
    entry.gauge->Set(*value);
  }

  // The board's state now and since boot: the firmware's throttling flags,
  // under-voltage, the SoC's temperature (docs/probe.md).
  void SetBoardState(const probe::Facts& f);

  struct Entry {
    prometheus::Family<prometheus::Gauge>* family;
    prometheus::Gauge* gauge;
  };
  std::shared_ptr<prometheus::Registry> registry_;
  std::string node_;
  std::map<std::string, Entry> families_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

StatusOr<std::unique_ptr<ProbeMetrics>> ProbeMetrics::Create(const std::string& listen,
                                                             const std::string& node) {
  auto impl = std::make_unique<Impl>(node);
  if (!listen.empty()) {
    BALLAST_ASSIGN_OR_RETURN(impl->exposer_, ServeMetrics(listen, impl->registry_));
  }
  return std::unique_ptr<ProbeMetrics>(new ProbeMetrics(std::move(impl)));
}

ProbeMetrics::ProbeMetrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProbeMetrics::~ProbeMetrics() = default;

uint16_t ProbeMetrics::port() const { return MetricsPort(impl_->exposer_.get()); }

void ProbeMetrics::Impl::SetBoardState(const probe::Facts& f) {
  const auto bit = [&](bool (probe::Throttled::*get)() const) -> std::optional<double> {
    if (!f.throttled) return std::nullopt;
    return ((*f.throttled).*get)() ? 1.0 : 0.0;
  };
  Set("ballast_node_throttled", "1 when the firmware reports throttling now, else 0",
      bit(&probe::Throttled::throttled_now));
  // Under-voltage now: get_throttled's bit, else the rpi_volt hwmon alarm.
  std::optional<double> under_voltage = bit(&probe::Throttled::under_voltage_now);
  if (f.under_voltage_alarm && (!under_voltage || *f.under_voltage_alarm)) {
    under_voltage = *f.under_voltage_alarm ? 1.0 : 0.0;
  }
  Set("ballast_node_under_voltage",
      "1 when the firmware or the rpi_volt sensor reports under-voltage now, else 0",
      under_voltage);
  Set("ballast_node_freq_capped", "1 when the firmware caps the ARM frequency now, else 0",
      bit(&probe::Throttled::freq_capped_now));
  Set("ballast_node_throttled_since_boot", "1 once throttling occurred since boot, else 0",
      bit(&probe::Throttled::throttled_since_boot));
  Set("ballast_node_under_voltage_since_boot", "1 once under-voltage occurred since boot, else 0",
      bit(&probe::Throttled::under_voltage_since_boot));
  Set("ballast_node_freq_capped_since_boot",
      "1 once the firmware capped the ARM frequency since boot, else 0",
      bit(&probe::Throttled::freq_capped_since_boot));
  Set("ballast_node_soft_temp_limit",
      "1 when the firmware holds the soft temperature limit now, else 0",
      bit(&probe::Throttled::soft_temp_limit_now));
  Set("ballast_node_soft_temp_limit_since_boot",
      "1 once the soft temperature limit was reached since boot, else 0",
      bit(&probe::Throttled::soft_temp_limit_since_boot));
  Set("ballast_node_soc_temperature_celsius",
      "The SoC's temperature from its thermal zone, degrees Celsius", f.soc_temp_c);
}

void ProbeMetrics::Update(const ProbeReport& report) {
  const probe::Facts& f = report.facts;
  // `v` units of `unit` each, in a double: a product in 64 bits would wrap
  // on a garbled figure (MemTotal 2^54 + 1 kB read 1024 bytes).
  const auto known = [](uint64_t v, double unit = 1) -> std::optional<double> {
    return v == 0 ? std::nullopt : std::optional<double>(static_cast<double>(v) * unit);
  };
  Impl& m = *impl_;
  m.SetBoardState(f);
  m.Set("ballast_node_cpu_cores", "CPUs of the node", known(f.cpu_cores));
  m.Set("ballast_node_cpu_max_hertz", "The highest maximum frequency of the node's CPUs",
        known(f.cpu_max_khz, 1000));
  m.Set("ballast_node_memory_bytes", "MemTotal of the node", known(f.mem_total_kb, 1024));
  m.Set("ballast_node_boot_disk_bytes", "Size of the node's boot disk (the SD card on a Pi)",
        known(f.boot_disk_bytes));
  m.Set("ballast_node_page_size_bytes", "The kernel's page size", known(f.page_size));
  const auto amps = known(f.supply_max_current_ma);
  m.Set("ballast_node_supply_max_current_amperes", "Supply current limit the firmware reports",
        amps ? std::optional<double>(*amps / 1000) : std::nullopt);
  const auto& bench = report.benchmark;
  m.Set("ballast_node_benchmark_score",
        "Runs per second of the probe's benchmark (primes below 10000 by trial division, one "
        "core), the median sample; only with --benchmark",
        bench ? std::optional<double>(bench->median) : std::nullopt);
  m.Set("ballast_node_benchmark_spread_ratio",
        "(fastest - slowest) / median of the probe's benchmark samples; only with --benchmark",
        bench ? std::optional<double>(bench->spread) : std::nullopt);
  m.Set("ballast_node_probe_warnings", "Warnings of the last probe (facts it could not read)",
        static_cast<double>(report.warnings.size()));
}

}  // namespace ballast::worker
