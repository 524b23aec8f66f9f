// The workload kernels against their own libraries' limits, on the same cores
// (a plain program that prints a table; it never fails on speed):
//   (a) primes by sieve below 10^10, cut into the workload's default items and
//       computed by the kernel on T threads that take 16 (or 64) items at a time, vs
//       primesieve::count_primes(0, 10^10) on T threads. Target: within 10 %.
//   (b) matmul n = 2048, block 128, computed block by block by the kernel on T
//       threads (OpenBLAS on one thread each), vs one cblas_dgemm of the whole
//       product with OpenBLAS on T threads. Target: >= 80 % of its GFLOPS.
//   (c) the distributed sieve end to end: `ballast run` of primes below 10^10
//       (`checksum: false`) on T emulated nodes of one core each, a
//       coordinator and T worker processes, vs primesieve::count_primes on T
//       threads, run by turns; medians. Target: within 10 %. Needs the
//       `ballast` binary (--ballast, default: beside this program).
// Each figure of (a) and (b) is the best of --repeat runs (the machine may be
// shared).
//
//   ballast_kernel_bench [--threads 2] [--limit 10000000000] [--n 2048] [--block 128] [--repeat 3]
//                        [--ballast PATH] [--end-to-end-runs 5]
#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <primesieve.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/stats.h"
#include "worker/kernels/kernel.h"

namespace {

using ballast::Median;
using ballast::balance::Range;
using ballast::kernels::Kernel;
using ballast::workload::Result;
using ballast::workload::WorkloadKind;
using ballast::workload::WorkloadSpec;
using Clock = std::chrono::steady_clock;

struct Options {
  int threads = 2;
  uint64_t limit = 10'000'000'000ULL;
  uint32_t n = 2048;
  uint32_t block = 128;
  int repeat = 3;
  std::string ballast;  // the ballast binary for (c); empty: beside this program
  int end_to_end_runs = 5;
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU seconds used by all of this process's threads so far. On a shared
// machine the ratio of CPU times is steadier than that of wall times.
double CpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// The best wall and CPU seconds of repeated runs.
struct Best {
  double wall = 1e300;
  double cpu = 1e300;
  template <typename F>
  void Time(F&& run) {
    const double cpu_start = CpuSeconds();
    const auto start = Clock::now();
    run();
    wall = std::min(wall, Seconds(start));
    cpu = std::min(cpu, CpuSeconds() - cpu_start);
  }
};

// Computes [0, items) on `threads` threads taking `chunk` items at a time, as
// a worker's threads would take the leases of a job; returns the merged result.
Result RunKernel(Kernel& kernel, WorkloadKind kind, uint64_t items, uint64_t chunk, int threads) {
  std::atomic<uint64_t> next{0};
  std::vector<Result> totals(threads, Result::Empty(kind));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t begin = next.fetch_add(chunk); begin < items; begin = next.fetch_add(chunk)) {
        auto part = kernel.Compute({begin, std::min(begin + chunk, items)});
        if (!part.ok()) {
          fmt::print(stderr, "kernel failed: {}\n", part.status().ToString());
          std::exit(1);
        }
        (void)totals[t].Merge(*part);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  for (int t = 1; t < threads; ++t) (void)totals[0].Merge(totals[t]);
  return totals[0];
}

// What the split alone costs: primesieve::count_primes (one thread) over the
// numbers of each `chunk`-item range, on `threads` threads; returns π.
uint64_t CountByRanges(const WorkloadSpec& spec, uint64_t chunk, int threads) {
  primesieve::set_num_threads(1);
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> total{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (uint64_t begin = next.fetch_add(chunk); begin < spec.items;
           begin = next.fetch_add(chunk)) {
        const Range span =
            ballast::workload::PrimesRangeSpan(spec, {begin, std::min(begin + chunk, spec.items)});
        total += primesieve::count_primes(span.begin, span.end - 1);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  return total;
}

void SieveBench(const Options& options) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kPrimes;
  spec.primes = {options.limit, ballast::workload::PrimesSpec::Method::kSieve};
  spec.items = ballast::workload::DefaultItems(spec);
  auto kernel = ballast::kernels::MakeKernel(spec);
  if (!kernel.ok()) std::exit(1);
  // Ranges of 16 items (67 M numbers) are a small lease; 64 items a typical one.
  const uint64_t chunks[] = {16, 64};
  Best library;
  Best kernel_runs[2];
  Best count_runs[2];
  uint64_t count = 0;
  uint64_t counts[2] = {0, 0};
  Result result = Result::Empty(WorkloadKind::kPrimes);
  for (int r = 0; r < options.repeat; ++r) {
    primesieve::set_num_threads(options.threads);
    library.Time([&] { count = primesieve::count_primes(0, options.limit - 1); });
    for (int c = 0; c < 2; ++c) {
      kernel_runs[c].Time([&] {
        result = RunKernel(**kernel, WorkloadKind::kPrimes, spec.items, chunks[c], options.threads);
      });
      count_runs[c].Time([&] { counts[c] = CountByRanges(spec, chunks[c], options.threads); });
    }
  }
  fmt::print("(a) primes below {} by sieve, {} threads, {} items of ~{} numbers\n", options.limit,
             options.threads, spec.items, options.limit / spec.items);
  fmt::print("  {:<46} {:>8} {:>7} {:>8} {:>7}\n", "", "wall s", "ratio", "CPU s", "ratio");
  const auto row = [&](const std::string& name, const Best& best) {
    fmt::print("  {:<46} {:>8.3f} {:>7.3f} {:>8.3f} {:>7.3f}\n", name, best.wall,
               best.wall / library.wall, best.cpu, best.cpu / library.cpu);
  };
  row("primesieve::count_primes (library)", library);
  for (int c = 0; c < 2; ++c) {
    row(fmt::format("sieve kernel, {}-item ranges (count + sum)", chunks[c]), kernel_runs[c]);
    row(fmt::format("count_primes per {}-item range (no checksum)", chunks[c]), count_runs[c]);
  }
  const bool same = result.primes().count == count && counts[0] == count && counts[1] == count;
  fmt::print("  target: kernel within 1.10 of the library; π = {}; kernel: {}{}\n\n", count,
             result.Summary(), same ? "" : "  COUNTS DIFFER");
}

void MatmulBench(const Options& options) {
  const uint32_t n = options.n;
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kMatmul;
  spec.matmul = {n, options.block, 7};
  spec.items = ballast::workload::DefaultItems(spec);
  const double flops = 2.0 * n * n * n;

  std::vector<double> a(size_t{n} * n), b(size_t{n} * n), c(size_t{n} * n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      a[size_t{i} * n + j] =
          ballast::workload::MatmulEntry(spec.matmul, ballast::workload::Matrix::kA, i, j);
      b[size_t{i} * n + j] =
          ballast::workload::MatmulEntry(spec.matmul, ballast::workload::Matrix::kB, i, j);
    }
  }
  double best_library = 1e300, best_cold = 1e300, best_warm = 1e300;
  Result result = Result::Empty(WorkloadKind::kMatmul);
  const uint64_t chunk =
      std::max<uint64_t>(1, ballast::workload::MatmulBlocksPerSide(spec.matmul) / 2);
  for (int r = 0; r < options.repeat; ++r) {
    openblas_set_num_threads(options.threads);
    auto start = Clock::now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0, a.data(), static_cast<int>(n), b.data(),
                static_cast<int>(n), 0.0, c.data(), static_cast<int>(n));
    best_library = std::min(best_library, Seconds(start));
    auto kernel = ballast::kernels::MakeKernel(spec);  // sets OpenBLAS to one thread
    if (!kernel.ok()) std::exit(1);
    start = Clock::now();
    result = RunKernel(**kernel, WorkloadKind::kMatmul, spec.items, chunk, options.threads);
    best_cold = std::min(best_cold, Seconds(start));
    start = Clock::now();
    result = RunKernel(**kernel, WorkloadKind::kMatmul, spec.items, chunk, options.threads);
    best_warm = std::min(best_warm, Seconds(start));
  }
  fmt::print("(b) matmul n = {}, block {}, {} threads, {} items, ranges of {} blocks\n", n,
             options.block, options.threads, spec.items, chunk);
  const double library = flops / best_library / 1e9;
  fmt::print("  {:<44} {:>9.3f} s  {:>7.1f} GFLOPS\n",
             "one cblas_dgemm, OpenBLAS threads (library)", best_library, library);
  fmt::print("  {:<44} {:>9.3f} s  {:>7.1f} GFLOPS  {:.0f} % of library (target >= 80 %)\n",
             "block kernel, panels cached", best_warm, flops / best_warm / 1e9,
             100 * best_library / best_warm);
  fmt::print("  {:<44} {:>9.3f} s  {:>7.1f} GFLOPS  {:.0f} % of library\n",
             "block kernel, generating A and B panels", best_cold, flops / best_cold / 1e9,
             100 * best_library / best_cold);
  fmt::print("  {}\n\n", result.Summary());
}

// One `ballast run` of `job` on `cluster`: its JSON output, or null when it failed.
nlohmann::json BallastRun(const std::string& ballast, const std::string& job,
                          const std::string& cluster) {
  const std::string command =
      fmt::format("'{}' run '{}' --cluster '{}' -o json 2>/dev/null", ballast, job, cluster);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return nullptr;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return nullptr;
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

// The job (the sieve below --limit, no checksum, adaptive) and the cluster
// (--threads nodes of speed 1) of the end-to-end runs, written in `dir`: the
// paths of the two files.
std::pair<std::string, std::string> WriteEndToEndInputs(const Options& options,
                                                        const std::filesystem::path& dir) {
  const std::string job = (dir / "job.yaml").string();
  const std::string cluster = (dir / "cluster.yaml").string();
  std::ofstream(job) << fmt::format(
      "workload:\n  primes: {{limit: {}, method: sieve, checksum: false}}\npolicy: adaptive\n",
      options.limit);
  std::ofstream nodes(cluster);
  nodes << "nodes:\n";
  for (int t = 0; t < options.threads; ++t) {
    nodes << fmt::format("  - {{name: core-{}, speed: 1, labels: {{}}}}\n", t);
  }
  return {job, cluster};
}

// What --end-to-end-runs turns of the library and of `ballast run` measured.
struct EndToEndSamples {
  std::vector<double> library, makespan, work;  // seconds, one per turn
  uint64_t count = 0;                           // the library's π
  bool same = true;                             // every run's count is the library's
};

// The library and `ballast run` of `job` on `cluster`, by turns; nullopt
// (said on stdout) when a run failed.
std::optional<EndToEndSamples> RunByTurns(const Options& options, const std::string& ballast,
                                          const std::string& job, const std::string& cluster) {
  EndToEndSamples samples;
  for (int r = 0; r < options.end_to_end_runs; ++r) {
    primesieve::set_num_threads(options.threads);
    const auto start = Clock::now();
    samples.count = primesieve::count_primes(0, options.limit - 1);
    samples.library.push_back(Seconds(start));
    const nlohmann::json run = BallastRun(ballast, job, cluster);
    if (!run.is_object()) {
      fmt::print("  ballast run failed: {} run {} --cluster {}\n\n", ballast, job, cluster);
      return std::nullopt;
    }
    samples.makespan.push_back(run.value("makespan_s", 0.0));
    samples.work.push_back(run.value("work_s", 0.0));
    samples.same &= run["result"]["primes"].value("count", uint64_t{0}) == samples.count;
  }
  return samples;
}

void EndToEndBench(const Options& options, const std::string& program) {
  namespace fs = std::filesystem;
  const std::string ballast = options.ballast.empty()
                                  ? (fs::path(program).parent_path() / "ballast").string()
                                  : options.ballast;
  fmt::print("(c) the distributed sieve end to end, primes below {}, {} cores\n", options.limit,
             options.threads);
  if (access(ballast.c_str(), X_OK) != 0) {
    fmt::print("  skipped: no ballast binary at {} (--ballast PATH)\n\n", ballast);
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("ballast-e2e-{}", getpid());
  fs::create_directories(dir);
  const auto [job, cluster] = WriteEndToEndInputs(options, dir);
  const std::optional<EndToEndSamples> samples = RunByTurns(options, ballast, job, cluster);
  fs::remove_all(dir);
  if (!samples) return;
  const double lib = Median(samples->library);
  const double makespan = Median(samples->makespan);
  const double work = Median(samples->work);
  fmt::print("  {:<46} {:>8} {:>7}\n", "", "wall s", "ratio");
  fmt::print("  {:<46} {:>8.3f} {:>7.3f}\n", "primesieve::count_primes (library)", lib, 1.0);
  fmt::print("  {:<46} {:>8.3f} {:>7.3f}\n", "ballast run, adaptive (makespan)", makespan,
             makespan / lib);
  fmt::print("  {:<46} {:>8.3f} {:>7.3f}\n", "  its workers' CPU seconds / cores",
             work / options.threads, work / options.threads / lib);
  fmt::print("  target: within 1.10 of the library; medians of {} runs by turns; π = {}{}\n\n",
             options.end_to_end_runs, samples->count, samples->same ? "" : "  COUNTS DIFFER");
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* flag = argv[i];
    const char* value = argv[i + 1];
    if (std::strcmp(flag, "--threads") == 0)
      options.threads = std::atoi(value);
    else if (std::strcmp(flag, "--limit") == 0)
      options.limit = std::strtoull(value, nullptr, 10);
    else if (std::strcmp(flag, "--n") == 0)
      options.n = static_cast<uint32_t>(std::atoi(value));
    else if (std::strcmp(flag, "--block") == 0)
      options.block = static_cast<uint32_t>(std::atoi(value));
    else if (std::strcmp(flag, "--repeat") == 0)
      options.repeat = std::atoi(value);
    else if (std::strcmp(flag, "--ballast") == 0)
      options.ballast = value;
    else if (std::strcmp(flag, "--end-to-end-runs") == 0)
      options.end_to_end_runs = std::atoi(value);
    else {
      fmt::print(stderr, "unknown flag {}\n", flag);
      return 2;
    }
  }
  SieveBench(options);
  MatmulBench(options);
  EndToEndBench(options, argv[0]);
  return 0;
}
