// Helpers shared by the ballast subcommands: exit codes, file reading and
// error printing. The only place (with main.cc) where the CLI touches files.
//
// Thread-safety: functions are reentrant; none keep state.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/config/document.h"

namespace ballast::cli {

// Exit codes of every ballast command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran and something failed
inline constexpr int kExitBadInput = 2;  // a file or flag is wrong; the message says which
// The command did its work and printed its result, but an output file it was
// asked for (`ballast run --history`, `--report`) could not be written; the
// message says which, after the result.
inline constexpr int kExitOutputLost = 3;

// The most a file a user names is read to by default: what a YAML reader
// parses (config::YamlLimits), so nothing larger is read only to be refused.
inline constexpr size_t kMaxUserFileBytes = config::YamlLimits{}.max_bytes;

// Returns the whole text of the regular file `path` when it holds at most
// `max_bytes` (fileio::ReadBoundedFile): NotFound naming the path when there
// is none; Invalid naming the path and what it is instead of a regular file
// (a directory, a FIFO, a device), or the bound when it holds more.
StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes = kMaxUserFileBytes);
// Writes `text` to `path` atomically (a temporary file, then rename).
Status WriteFile(const std::string& path, const std::string& text);
// Ok when `path` can be written as an output file (by WriteFile or a rename
// beside it): its directory exists and is writable, and `path` is nothing
// or a regular file. Invalid "<flag> <path>: ..." naming what is not so
// (the directory missing, not a directory, not writable; `path` a
// directory, FIFO or device). What it checks can still change before the
// write: a writer must handle its own error too.
Status CheckWritable(const std::string& path, std::string_view flag);
// Prints "ballast: <message>" on stderr and returns the exit code for it:
// kExitBadInput for Invalid and NotFound, kExitFailure otherwise.
int ReportError(const Status& status);

// Raises the soft limit on open files to the hard one: a coordinator serving
// 1,000 workers holds two connections for each, past the usual soft 1,024.
void RaiseOpenFileLimit();
// The policy named on a command line: a name, with its default options, or
// name:key=value[:key=value...] (e.g. adaptive:backup=off), labelled with the
// whole text. Returns Invalid naming the known policies when the name is
// unknown, and the option when one is unknown, out of range or not key=value.
StatusOr<balance::PolicySpec> PolicyByName(const std::string& text);
// "NAMESPACE/NAME" split in two, as --history-configmap takes it; Invalid
// naming `flag` and the text when either half is empty or there is a second '/'.
StatusOr<std::pair<std::string, std::string>> SplitNamespacedName(const std::string& text,
                                                                  const std::string& flag);
// Output formats of -o.
enum class Output { kTable, kJson };

}  // namespace ballast::cli
