// ProbeMetrics: the node probe's facts as Prometheus gauges, each with the
// one label {node}, served on /metrics (docs/probe.md):
//
//   ballast_node_throttled                  1 when the firmware throttles now, else 0
//   ballast_node_under_voltage              1 when the supply is under-voltage now, else 0
//                                           (get_throttled, else the rpi_volt alarm)
//   ballast_node_freq_capped                1 when the ARM frequency is capped now
//   ballast_node_soft_temp_limit            1 when the soft temperature limit holds now
//   ballast_node_throttled_since_boot       1 once throttling occurred since boot
//   ballast_node_under_voltage_since_boot   1 once under-voltage occurred since boot
//   ballast_node_freq_capped_since_boot     1 once the frequency was capped since boot
//   ballast_node_soft_temp_limit_since_boot 1 once the soft limit held since boot
//   ballast_node_soc_temperature_celsius    the SoC's thermal zone
//   ballast_node_cpu_cores                  CPUs
//   ballast_node_cpu_max_hertz              the highest maximum frequency of a CPU
//   ballast_node_memory_bytes               MemTotal
//   ballast_node_boot_disk_bytes            the boot disk's size
//   ballast_node_page_size_bytes            the kernel's page size
//   ballast_node_supply_max_current_amperes the supply limit the firmware reports
//   ballast_node_probe_warnings             warnings of the last probe
//   ballast_node_benchmark_score            runs per second of the benchmark
//                                           (--benchmark only; probe/benchmark.h)
//   ballast_node_benchmark_spread_ratio     (max - min) / median of its samples
//
// A gauge whose fact is unknown is not exported (the firmware's on a
// machine without get_throttled; cpufreq on a VM), rather than exported as 0.
// `ballast_node_throttled` and `ballast_node_under_voltage` are shared names
// other parts of Ballast read (history samples): keep them.
//
// Thread-safety: Update is called from one thread; serving runs on the
// exposer's own thread; prometheus-cpp's gauges are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "worker/probe/report.h"

namespace ballast::worker {

class ProbeMetrics {
 public:
  // Serves /metrics on `listen` ("host:port"; port 0 picks one) unless empty.
  // Returns Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<ProbeMetrics>> Create(const std::string& listen,
                                                        const std::string& node);
  ~ProbeMetrics();

  // The port /metrics is served on; 0 when not served.
  uint16_t port() const;

  // Sets every gauge from `report`.
  void Update(const ProbeReport& report);

  class Impl;

 private:
  explicit ProbeMetrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::worker
