#include "worker/kernels/output_tail.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "core/common/utf8.h"

namespace ballast::kernels {
namespace {

// Writes all of `data` to fd, as far as it takes it (a closed stderr drops it).
void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string KeptTail(const std::string& text, size_t max) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) {
    --end;
  }
  size_t begin = end > max ? end - max : 0;
  if (begin > 0) {
    const size_t line = text.find('\n', begin);
    if (line != std::string::npos && line + 1 < end) begin = line + 1;
  }
  return ToValidUtf8(std::string_view(text).substr(begin, end - begin));
}

size_t LogBudget::Take(size_t bytes) {
  size_t taken = taken_.load();
  while (true) {
    const size_t granted = std::min(bytes, max_bytes_ - std::min(taken, max_bytes_));
    if (granted == 0) return 0;
    if (taken_.compare_exchange_weak(taken, taken + granted)) return granted;
  }
}

bool LogBudget::NoteDropped(size_t bytes) { return bytes > 0 && !said_.exchange(true); }

OutputTail::OutputTail(LogBudget* budget) : budget_(budget) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) == 0) {
    read_fd_ = fds[0];
    write_fd_ = fds[1];
  }
}

OutputTail::~OutputTail() {
  if (reader_.joinable()) Finish();
  if (read_fd_ >= 0) close(read_fd_);
  if (write_fd_ >= 0) close(write_fd_);
}

void OutputTail::Start() {
  if (write_fd_ < 0) return;
  close(write_fd_);
  write_fd_ = -1;
  reader_ = std::thread([this] { PassOn(); });
}

std::string OutputTail::Finish() {
  ended_ = true;
  if (reader_.joinable()) reader_.join();
  if (dropped_ > 0) {
    const std::string note = fmt::format(
        "\nballast-worker: the command wrote {} bytes more than the {} MiB a run may log; they "
        "were not logged (its last lines are kept with a failed item)\n",
        dropped_, kMaxPassedBytes >> 20);
    WriteAll(STDERR_FILENO, note.data(), note.size());
  }
  if (budget_ != nullptr && budget_->NoteDropped(over_budget_)) {
    const std::string note = fmt::format(
        "\nballast-worker: the job's commands have logged {} MiB on this worker, the most they "
        "may; from here their output is not logged (a failed item still keeps its last lines)\n",
        budget_->max_bytes() >> 20);
    WriteAll(STDERR_FILENO, note.data(), note.size());
  }
  std::lock_guard lock(tail_mutex_);
  return KeptTail(tail_, kKeptBytes);
}

std::string OutputTail::TakeKept() {
  // What the command wrote before it answered is in the pipe or kept: wait
  // (a little) until the pipe holds nothing unread.
  const auto deadline = std::chrono::steady_clock::now() + kDrainAfterEnd;
  std::unique_lock lock(tail_mutex_);
  int unread = 0;
  while (reader_.joinable() && ioctl(read_fd_, FIONREAD, &unread) == 0 && unread > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
  std::string kept = KeptTail(tail_, kKeptBytes);
  tail_.clear();
  return kept;
}

void OutputTail::PassOn() {
  using Clock = std::chrono::steady_clock;
  char buffer[4096];
  std::optional<Clock::time_point> drain_until;
  while (true) {
    if (ended_ && !drain_until) drain_until = Clock::now() + kDrainAfterEnd;
    // The command ended but something it started still holds the pipe.
    if (drain_until && Clock::now() >= *drain_until) return;
    pollfd ready{read_fd_, POLLIN, 0};
    const int polled = poll(&ready, 1, 50);
    if (polled < 0 && errno != EINTR) return;
    if (polled <= 0) continue;
    std::lock_guard lock(tail_mutex_);  // a read and its keeping, whole (TakeKept)
    const ssize_t n = read(read_fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // every writer closed its end (or an error): all read
    const size_t got = static_cast<size_t>(n);
    const size_t share = std::min(got, kMaxPassedBytes - std::min(passed_, kMaxPassedBytes));
    const size_t pass = budget_ != nullptr ? budget_->Take(share) : share;
    WriteAll(STDERR_FILENO, buffer, pass);
    passed_ += pass;
    dropped_ += got - share;
    over_budget_ += share - pass;
    tail_.append(buffer, static_cast<size_t>(n));
    if (tail_.size() > 2 * kKeptBytes) tail_.erase(0, tail_.size() - 2 * kKeptBytes);
  }
}

}  // namespace ballast::kernels
