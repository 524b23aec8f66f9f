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

Status Status::InvalidAt(std::string path, std::string_view detail) {
  Status status(StatusCode::kInvalid,
                path.empty() ? std::string(detail) : path + ": " + std::string(detail));
  status.detail_at_ = status.message_.size() - detail.size();
  status.path_ = std::move(path);
  return status;
}

bool Status::IsAbout(std::string_view field) const {
  if (field.empty() || !std::string_view(path_).starts_with(field)) return false;
  return path_.size() == field.size() || path_[field.size()] == '.' || path_[field.size()] == '[';
}

Status Status::WithPrefix(std::string_view prefix) const {
  Status status = *this;
  status.message_.insert(0, prefix);
  status.detail_at_ += prefix.size();
  return status;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace ballast
