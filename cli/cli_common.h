// Helpers shared by the ballast subcommands: exit codes, file reading and
// error printing. The only place (with main.cc) where the CLI touches files.
//
// Thread-safety: functions are reentrant; none keep state.
#pragma once

#include <string>
#include <utility>

#include "core/balance/policy_options.h"
#include "core/common/status.h"

namespace ballast::cli {

// Exit codes of every ballast command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran and something failed
inline constexpr int kExitBadInput = 2;  // a file or flag is wrong; the message says which

// Returns the whole file, or NotFound naming the path.
StatusOr<std::string> ReadFile(const std::string& path);
// Writes `text` to `path` atomically (a temporary file, then rename).
Status WriteFile(const std::string& path, const std::string& text);
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
