// Test helper shared by the tests of `ballast run`'s cgroups: the groups a
// run made, found by the owner its name records (cli/run/run_cleanup.h).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "cli/run/run_cleanup.h"

namespace ballast::testing {

// The cgroups that run `owner` made, by path.
inline std::set<std::string> GroupsOf(pid_t owner) {
  std::set<std::string> groups;
  for (const std::string& parent : cli::RunGroupParents()) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
      if (entry.is_directory() && cli::GroupOwner(entry.path().filename().string()) == owner) {
        groups.insert(entry.path().string());
      }
    }
  }
  return groups;
}

}  // namespace ballast::testing
