#include "core/common/status.h"

namespace ballast {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalid:
      return "invalid";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kTerminal:
      return "terminal";
    case StatusCode::kGone:
      return "gone";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace ballast
