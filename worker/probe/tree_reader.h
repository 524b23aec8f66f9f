// TreeReader: reads the files the probe needs (probe::ProbeFiles) from a root
// directory into a probe::Snapshot — the I/O half of `ballast-worker probe`
// (docs/probe.md); core/probe derives the facts from what it returns.
//
// The root is `/`, a host's root mounted into a pod (the chart mounts the
// host's /proc, /sys and a few files under /host), or a captured tree under
// tests/probe/trees. Paths are resolved inside the root: a symbolic link,
// absolute or relative, is followed as if the root were `/` and never leads
// out of it (/proc/device-tree links to /sys/firmware/devicetree/base). Each
// file is read up to its limit; only regular files are read, and a path is
// checked to be one (lstat) before it is opened, so a FIFO, a socket or a
// device node in the tree is never opened (which could block, wake a writer
// of the FIFO or reset the device); a glob component matches at most
// kMaxGlobMatches entries.
//
// Thread-safety: pure functions over the file system; safe from any thread.
#pragma once

#include <string>

#include "core/common/status.h"
#include "core/probe/facts.h"

namespace ballast::worker {

// Reads every probe file under `root`. A file that is missing, unreadable or
// too long is recorded as such (FileRead::State); only a root that is not a
// directory fails (Invalid naming it). Sets the snapshot's live values when
// `root` is the running system's root ("/").
StatusOr<probe::Snapshot> ReadSnapshot(const std::string& root);

// The host path of `relative` (no leading '/') inside `root`, every symbolic
// link followed within the root (at most 40). Returns NotFound when a
// component does not exist, Invalid for a loop, Unavailable for another
// error of the file system.
StatusOr<std::string> ResolveInRoot(const std::string& root, const std::string& relative);

}  // namespace ballast::worker
