#include "cli_common.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ballast::cli {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Unavailable(fmt::format("{}: read failed", path));
  return text.str();
}

Status WriteFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::NotFound(fmt::format("{}: cannot create file", path));
    out << text;
    if (!out.flush()) return Status::Unavailable(fmt::format("{}: write failed", path));
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) return Status::Unavailable(fmt::format("{}: {}", path, error.message()));
  return Status::Ok();
}

int ReportError(const Status& status) {
  fmt::print(stderr, "ballast: {}\n", status.message());
  const bool bad_input =
      status.code() == StatusCode::kInvalid || status.code() == StatusCode::kNotFound;
  return bad_input ? kExitBadInput : kExitFailure;
}

StatusOr<balance::PolicySpec> PolicyByName(const std::string& name) {
  balance::PolicySpec spec{name, "", {}};
  if (auto made = balance::MakePolicy(spec); !made.ok()) return made.status();
  return spec;
}

}  // namespace ballast::cli
