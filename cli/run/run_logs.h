// The folders of workers' logs that `ballast run` makes itself (no --logs):
// "<TMPDIR>/ballast-logs-<pid>-<job id>", named after the run's process, with
// a marker file that says `ballast run` made it. Each run makes one, so they
// would pile up; at its start a run removes the old ones:
//
// - only folders in the temporary directory that a run made itself: named as
//   LogDirName names them, holding the marker, owned by this user, not a
//   symbolic link. A folder named with --logs gets no marker and is never
//   removed, nor is a folder of an older version (named "ballast-<job id>",
//   no owner in its name);
// - never the folder of a run that is still running (its process runs);
// - of the others, the kKeptLogDirs most recently modified are kept.
//
// The decision (LogDirsToRemove) is a function of names, times and a
// predicate; the rest reads and changes the file system.
//
// Thread-safety: no state; the adapters may run from any thread (two runs
// pruning at once remove each folder at most once between them).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::cli {

// How many folders of finished runs a run's start keeps.
inline constexpr size_t kKeptLogDirs = 10;

// The file in each folder a run made itself.
inline constexpr char kLogDirMarker[] = ".ballast-run-logs";

// The temporary directory: $TMPDIR, or /tmp when it is unset or empty (an
// empty TMPDIR names no directory, as for mktemp(1); std::filesystem's
// temp_directory_path took it for the path "" and the run stopped).
std::string TemporaryDirectory();

// "ballast-logs-<owner>-<job id>": the folder process `owner` makes for the
// logs of job `job_id`.
std::string LogDirName(pid_t owner, const std::string& job_id);

// The owner of a folder LogDirName named; 0 for any other name.
pid_t LogDirOwner(const std::string& name);

// One folder found in the temporary directory.
struct LogDirEntry {
  std::string name;
  std::chrono::system_clock::time_point modified;
};

// The names among `dirs` to remove: those LogDirOwner names whose owner does
// not run (`runs`), but the `keep` most recently modified of them (equal
// times: the greater name is kept). Never a name of another form. Returns
// them sorted by name.
std::vector<std::string> LogDirsToRemove(const std::vector<LogDirEntry>& dirs,
                                         const std::function<bool(pid_t)>& runs, size_t keep);

// Makes the folder LogDirName(this process, job_id) in `parent`, with its
// marker. Returns its path; Unavailable, naming it, when it cannot be made
// (or exists already).
StatusOr<std::string> MakeLogDir(const std::string& parent, const std::string& job_id);

// Removes, in `parent`, what LogDirsToRemove picks among the folders a run
// made itself (see above; the owner runs: ProcessRuns). Returns the paths
// removed; a folder that cannot be removed is skipped. A missing `parent`
// removes nothing.
std::vector<std::string> PruneLogDirs(const std::string& parent, size_t keep = kKeptLogDirs);

// The last error a worker's log at `path` holds, for a message: of its last
// 16 KiB, the last line with " error " (spdlog's level; the text after it),
// else the last line that is not blank; control characters written out
// (EscapeControls) and at most 300 bytes of it. "" when the log is missing
// or empty.
std::string LastLogError(const std::string& path);

}  // namespace ballast::cli
