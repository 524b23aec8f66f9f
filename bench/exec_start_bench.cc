// What starting a user's command costs the worker that starts it: the exec
// kernel running /bin/true once per item, beside the two other ways this
// process could start it. Each prints, per command, the wall time and the CPU
// seconds of the starting process (the worker's own: on a board held to a
// fifth of a core, its quota) and of the command (which includes tearing
// down what a fork copied):
//   - ExecKernel: the kernel as the worker runs it (clone sharing memory
//     until exec, a process group, a pipe for the output's tail, its own
//     run directory and bookkeeping);
//   - ForkExec: fork, execve and waitpid, nothing else: how the kernel
//     started commands before, the alternative;
//   - PosixSpawn: glibc's posix_spawn and waitpid, nothing else: the floor
//     for starting a process from this one.
// The process is given a worker's footprint first (--footprint-mb of heap
// written, default 16, a worker's RSS bound; --threads idle threads, default
// 8, as a worker's client and server pools), since a fork's cost grows with
// the pages and mappings it copies. Google Benchmark; it never fails on speed.
//
//   ballast_exec_bench [--footprint-mb 16] [--threads 8] [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "worker/kernels/kernel.h"

extern char** environ;

namespace {

constexpr const char* kTrue = "/bin/true";
constexpr uint64_t kItemsPerRange = 50;

double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Runs `start_commands` (which starts and reaps `count` commands) for the
// benchmark's iterations and reports per command: wall (the benchmark's
// time), this process's CPU and the commands' CPU in microseconds.
template <typename Start>
void Measure(benchmark::State& state, uint64_t count, Start start_commands) {
  const double self_before = CpuSeconds(RUSAGE_SELF);
  const double children_before = CpuSeconds(RUSAGE_CHILDREN);
  uint64_t commands = 0;
  for (auto _ : state) {
    start_commands();
    commands += count;
  }
  const double per = 1e6 / static_cast<double>(commands);
  state.counters["self_us"] = (CpuSeconds(RUSAGE_SELF) - self_before) * per;
  state.counters["command_us"] = (CpuSeconds(RUSAGE_CHILDREN) - children_before) * per;
  state.SetItemsProcessed(static_cast<int64_t>(commands));
}

void ExecKernel(benchmark::State& state) {
  ballast::workload::WorkloadSpec spec;
  spec.kind = ballast::workload::WorkloadKind::kExec;
  spec.exec.command = {kTrue};
  spec.exec.per_item = true;
  spec.items = kItemsPerRange;
  auto kernel = ballast::kernels::MakeKernel(spec);
  if (!kernel.ok()) {
    state.SkipWithError(kernel.status().ToString().c_str());
    return;
  }
  Measure(state, kItemsPerRange, [&] {
    auto result = (*kernel)->Compute({0, kItemsPerRange});
    if (!result.ok() || !result->exec().failures.empty()) state.SkipWithError("a command failed");
  });
}

void WaitFor(pid_t child, benchmark::State& state) {
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || status != 0) {
    state.SkipWithError("a command failed");
  }
}

void ForkExec(benchmark::State& state) {
  char* const argv[] = {const_cast<char*>(kTrue), nullptr};
  Measure(state, 1, [&] {
    const pid_t child = fork();
    if (child == 0) {
      execve(kTrue, argv, environ);
      _exit(127);
    }
    WaitFor(child, state);
  });
}

void PosixSpawn(benchmark::State& state) {
  char* const argv[] = {const_cast<char*>(kTrue), nullptr};
  Measure(state, 1, [&] {
    pid_t child = -1;
    if (posix_spawn(&child, kTrue, nullptr, nullptr, argv, environ) != 0) child = -1;
    WaitFor(child, state);
  });
}

// Idle threads that live until the process ends, as a worker's pools do.
class IdleThreads {
 public:
  explicit IdleThreads(int count) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this] {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return done_; });
      });
    }
  }
  ~IdleThreads() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

int main(int argc, char** argv) {
  int footprint_mb = 16;
  int threads = 8;
  CLI::App app{
      "What starting a user's command costs the worker: the exec kernel beside fork + exec and "
      "posix_spawn, from a process of a worker's footprint. Other flags go to Google Benchmark "
      "(--benchmark_filter=REGEX, --benchmark_repetitions=N, ...)."};
  app.add_option("--footprint-mb", footprint_mb, "resident memory written before the runs")
      ->capture_default_str()
      ->check(CLI::Range(0, 65536));
  app.add_option("--threads", threads, "idle threads beside the runs, as a worker has")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  app.allow_extras();
  CLI11_PARSE(app, argc, argv);
  // Google Benchmark reads what CLI11 left, after the program's name.
  std::vector<std::string> rest = app.remaining();
  std::vector<char*> bench_argv = {argv[0]};
  for (std::string& arg : rest) bench_argv.push_back(arg.data());
  int bench_argc = static_cast<int>(bench_argv.size());
  std::vector<char> heap(static_cast<size_t>(footprint_mb) << 20);
  for (size_t at = 0; at < heap.size(); at += 4096) heap[at] = 1;  // resident, written
  IdleThreads idle(threads);
  benchmark::RegisterBenchmark("ExecKernel", ExecKernel)->UseRealTime();
  benchmark::RegisterBenchmark("ForkExec", ForkExec)->UseRealTime();
  benchmark::RegisterBenchmark("PosixSpawn", PosixSpawn)->UseRealTime();
  benchmark::Initialize(&bench_argc, bench_argv.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, bench_argv.data())) return 1;
  benchmark::AddCustomContext("footprint_mb", std::to_string(footprint_mb));
  benchmark::AddCustomContext("idle_threads", std::to_string(threads));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
