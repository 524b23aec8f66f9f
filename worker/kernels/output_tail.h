// OutputTail: what one run of an exec command writes (stdout and stderr
// together), passed on unchanged to this process's stderr as it comes (up to
// kMaxPassedBytes a run), with
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
// runs the command.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace ballast::kernels {

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
  // write to the worker's stderr directly (Finish returns "").
  OutputTail();
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

 private:
  void PassOn();

  int read_fd_ = -1;
  int write_fd_ = -1;
  std::atomic<bool> ended_{false};
  std::thread reader_;
  std::string tail_;    // at most 2 x kKeptBytes, the reader's until joined
  size_t passed_ = 0;   // bytes passed on to stderr, the reader's until joined
  size_t dropped_ = 0;  // bytes past kMaxPassedBytes, not passed on
};

// The last `max` bytes of `text` as kept: from the first line start within
// them when there is one, trailing newlines and spaces removed, valid UTF-8.
// Exposed for tests.
std::string KeptTail(const std::string& text, size_t max);

}  // namespace ballast::kernels
