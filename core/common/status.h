// Status and StatusOr: how errors cross module boundaries in Ballast.
//
// A Status is a code plus a human message; the code is what callers act on
// (a reconciler retries Unavailable and Conflict, gives up on Invalid and
// Terminal). A reader's error may also carry the path of the field it is
// about ("spec.workload.primes.limit") as data (InvalidAt): the message is
// then formed from it, "<path>: <detail>", and whoever places the error (a
// file's line, config/document.h) reads the path, not the message. Library exceptions are caught in
// the one adapter file that calls each library and converted to a Status there.
//
// Thread-safety: values; safe to copy across threads, not to mutate concurrently.
#pragma once

#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ballast {

enum class StatusCode {
  kOk,
  kInvalid,      // the input is wrong; retrying will not help
  kNotFound,     // a named thing does not exist
  kConflict,     // someone else changed it first; re-read and retry
  kUnavailable,  // a transient failure; retry with backoff
  kTerminal,     // the job or object can never succeed
  kGone,         // a resource version is too old (HTTP 410); list again from scratch
};

// Returns the lower-case name of a code, e.g. "invalid".
const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string message) { return {StatusCode::kInvalid, std::move(message)}; }
  // Invalid about the field at `path` (as the user writes it,
  // "spec.tolerations[2].key"): message() is "<path>: <detail>" ("<detail>"
  // for an empty path), path() is `path` and detail() is `detail`.
  static Status InvalidAt(std::string path, std::string_view detail);
  static Status NotFound(std::string message) {
    return {StatusCode::kNotFound, std::move(message)};
  }
  static Status Unavailable(std::string message) {
    return {StatusCode::kUnavailable, std::move(message)};
  }
  static Status Conflict(std::string message) {
    return {StatusCode::kConflict, std::move(message)};
  }
  static Status Gone(std::string message) { return {StatusCode::kGone, std::move(message)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The path of the field the error is about, or "" when none was given.
  const std::string& path() const { return path_; }
  // Whether the error is about the field at `field` or one inside it: path()
  // is `field`, or `field` followed by '.' or '[' ("spec.policy" is about
  // spec.policy, spec.policy.chunk and spec.policy[0], not spec.policyX).
  // False for an error without a path, whatever its message says.
  bool IsAbout(std::string_view field) const;
  // The message without what precedes the detail: "<path>: " and any prefix
  // (the whole message when neither was given).
  std::string_view detail() const { return std::string_view(message_).substr(detail_at_); }
  // The same error with `prefix` before its message (where it was written:
  // "file:3:7: "), its code, path and detail kept.
  Status WithPrefix(std::string_view prefix) const;
  // "invalid: <message>", or "ok".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string path_;
  size_t detail_at_ = 0;  // where the detail starts in message_
};

// Either a value or a non-ok Status.
template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  StatusOr(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "StatusOr needs a value or an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  // Returns Ok when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }

  // Require ok().
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace ballast

// Returns early from the enclosing function when a Status is not ok.
#define BALLAST_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::ballast::Status ballast_status_ = (expr);        \
    if (!ballast_status_.ok()) return ballast_status_; \
  } while (0)

#define BALLAST_CONCAT_INNER(a, b) a##b
#define BALLAST_CONCAT(a, b) BALLAST_CONCAT_INNER(a, b)
// Declares `lhs` from a StatusOr expression, or returns its error.
#define BALLAST_ASSIGN_OR_RETURN(lhs, expr) \
  BALLAST_ASSIGN_OR_RETURN_IMPL(BALLAST_CONCAT(ballast_or_, __LINE__), lhs, expr)
#define BALLAST_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
