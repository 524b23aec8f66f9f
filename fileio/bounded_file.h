// Reading a file a user names — a job, a cluster, a scenario, a profile, a
// list of items, a history, a speeds or nodes file, a kubeconfig, a token —
// within a bound, so that a careless or hostile name cannot make a program
// grow or wait without end: /dev/zero and /dev/urandom never end, a FIFO no
// one writes blocks its reader (and its open) for good, a directory has no
// text, and a file may grow while it is read.
//
// ReadBoundedFile looks at what the path names before it opens it and
// refuses anything but a regular file, naming it ("a directory", "a FIFO",
// "a device", "a socket"); it opens with O_NONBLOCK, so even a FIFO put in
// the file's place between the look and the open cannot block the open, and
// checks again on what it opened; it reads at most the bound plus one byte,
// so a file that grows under it is still refused at its bound.
//
// Thread-safety: reentrant; keeps no state.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::fileio {

// What `mode` (st_mode) names when it is not a regular file: "a directory",
// "a FIFO", "a socket", "a device", "a symbolic link"; "a regular file" for one.
std::string_view FileKind(mode_t mode);

// The whole text of the regular file `path` when it holds at most
// `max_bytes` bytes. Returns
//  - NotFound "<path>: no such file" when nothing is there (ENOENT, ENOTDIR);
//  - Invalid "<path>: <kind>, not a regular file" for a directory, FIFO,
//    device or socket (never read, and never opened when seen before the open);
//  - Invalid "<path>: larger than <max_bytes> bytes" when it holds more, or
//    grew past the bound while it was read;
//  - Invalid "<path>: cannot open: <reason>" (permission denied, ...);
//  - Unavailable "<path>: read failed: <reason>" for an I/O error.
// Requires nothing of `path`; symbolic links are followed (a user's link to a
// job file is a job file), what they lead to is judged.
StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes);

}  // namespace ballast::fileio
