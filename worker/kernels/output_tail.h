// OutputTail: what one run of an exec command writes (stdout and stderr
// together), passed on unchanged to this process's stderr as it comes (up to
// kMaxPassedBytes a run, and a LogBudget for all the job's runs), with
// its last lines kept, so that a failed item's record can say what the
// command said before it failed (ExecFailure::output): the worker's log may be
// gone with its pod by the time anyone looks.
//
//   OutputTail tail;                    // before fork: the pipe
//   child:  dup2(tail.write_fd(), 1); dup2(tail.write_fd(), 2); exec
//   parent: tail.Start(); wait for the command; std::string said = tail.Finish();
//
// The pipe's ends are close-on-exec, so other commands forked meanwhile do not
// hold them. A process the command left running that escaped its group (a new
// session, without a cgroup) may hold the write end open: Finish does not wait
// for it past kDrainAfterEnd.
//
// Thread-safety: one object per run; Start and Finish from the thread that
// runs the command; TakeKept from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace ballast::kernels {

// LogBudget: the bytes of output all the runs of one job's command on a
// worker may pass on to its log together, beside each run's own
// OutputTail::kMaxPassedBytes: a chatty command run for 1,000 items wrote
// 4 MiB each, 4 GB of log. Past it, output is counted, not logged, and the
// first run that finds it spent says so once.
//
// Thread-safety: every member may be called from any thread (the kernel's
// steps run on several).
class LogBudget {
 public:
  // A job's command logs at most this much on one worker.
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  explicit LogBudget(size_t max_bytes = kMaxBytes) : max_bytes_(max_bytes) {}

  // Of `bytes` a run would pass on, how many it may: all while the budget
  // lasts, then what is left of it, then 0.
  size_t Take(size_t bytes);
  // Notes `bytes` not passed on because the budget was spent; true for the
  // first call only, whose run then says the budget is spent.
  bool NoteDropped(size_t bytes);
  size_t max_bytes() const { return max_bytes_; }

 private:
  const size_t max_bytes_;
  std::atomic<size_t> taken_{0};
  std::atomic<bool> said_{false};
};

class OutputTail {
 public:
  // The bytes kept: the end of the output, from a line's start where one
  // begins within it.
  static constexpr size_t kKeptBytes = 256;
  static constexpr std::chrono::milliseconds kDrainAfterEnd{200};
  // The most of one run's output passed on to the worker's log; past it the
  // rest is counted, not logged, and one line says how much was dropped (a
  // command that prints 300 MB made a 300 MB log). The end is still kept.
  static constexpr size_t kMaxPassedBytes = size_t{4} << 20;

  // Makes the pipe. When that fails, write_fd() is -1 and the child should
  // write to the worker's stderr directly (Finish returns ""). With a
  // `budget`, what the run passes on is taken from it too (LogBudget).
  explicit OutputTail(LogBudget* budget = nullptr);
  ~OutputTail();
  OutputTail(const OutputTail&) = delete;
  OutputTail& operator=(const OutputTail&) = delete;

  int write_fd() const { return write_fd_; }
  // In the parent after fork: closes its write end and starts passing on.
  void Start();
  // After the command ended: reads what is left (at most kDrainAfterEnd
  // more), stops, and returns the last kKeptBytes of the output as valid
  // UTF-8, trailing blank lines removed. Call once.
  std::string Finish();
  // While it runs: the last kKeptBytes of the output since the call before
  // (or Start), as Finish returns them, and forgets them; what is in the
  // pipe is read first (at most kDrainAfterEnd). A served command's one
  // process writes for many runs (command_server.h); each run's record keeps
  // what was written during it. kMaxPassedBytes bounds such a process's
  // whole life.
  std::string TakeKept();

 private:
  void PassOn();

  LogBudget* budget_ = nullptr;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::atomic<bool> ended_{false};
  std::thread reader_;
  std::mutex tail_mutex_;
  std::string tail_;        // at most 2 x kKeptBytes, under tail_mutex_
  size_t passed_ = 0;       // bytes passed on to stderr, the reader's until joined
  size_t dropped_ = 0;      // bytes past kMaxPassedBytes, not passed on
  size_t over_budget_ = 0;  // bytes past the LogBudget, not passed on
};

// The last `max` bytes of `text` as kept: from the first line start within
// them when there is one, trailing newlines and spaces removed, valid UTF-8.
// Exposed for tests.
std::string KeptTail(const std::string& text, size_t max);

}  // namespace ballast::kernels
