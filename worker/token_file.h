// The job's token from a file: a worker pod gets it as the file of a Secret
// volume (BALLAST_TOKEN_FILE), which the kubelet mounts again within a second
// when the API server refuses it the Secret at first, where an environment
// variable from the Secret would fail the pod's sync for 10 s
// (operator/api/pod_template.h).
//
// Thread-safety: no state; callable from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::worker {

// The largest token file read (a token is 32 hex digits).
inline constexpr size_t kMaxTokenFileBytes = 4096;

// The token in `text`, a token file's contents: without the line end and
// spaces around it. Invalid when nothing is left, or when it holds a line
// end or space inside (a file of something else).
StatusOr<std::string> ParseTokenFile(std::string_view text);

// The token in the file at `path`: Unavailable when there is no such file
// (yet: the kubelet mounts a Secret late), Invalid when it is larger than
// kMaxTokenFileBytes, not a regular file (a directory, a FIFO, a device:
// fileio::ReadBoundedFile) or not a token (ParseTokenFile); each message
// names the file.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace ballast::worker
