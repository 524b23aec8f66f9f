// The exec kernel's commands running in this process, process-wide, so that
// a worker that stops can end them all (StopExecCommands, kernel.h): each
// command's process group is listed while it runs, and once a stop came no
// command starts and each one listed or still starting gets SIGTERM.
//
// Thread-safety: every function may run on any thread.
#pragma once

#include <sys/types.h>

namespace ballast::kernels {

// True once StopExecCommands came: no command is to start.
bool CommandsStopping();
// Lists the command whose process group is `group` (its leader's pid) while
// it runs; when a stop came already (while it started), sends it SIGTERM.
void AddRunningCommand(pid_t group);
// Unlists it once it ended; returns true when a stop came meanwhile (the
// command was ended by it, and its run is no result).
bool RemoveRunningCommand(pid_t group);

}  // namespace ballast::kernels
