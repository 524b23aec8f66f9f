// Names from outside — of jobs and of nodes — checked the way Kubernetes
// checks object names (DNS-1123), once, for every reader that takes one.
//
// A name ends up in places that give its characters meaning: a URL path
// (`/jobs/<job>/report`), a file name (`<node>.log` in the run's folder), a
// cgroup directory, a pod name and a label value. `team/a` or `../x` must not
// get that far. The rules are Kubernetes' own, so that a file that runs here
// also applies to a cluster, and the reverse:
//
//   DNS-1123 label      1 to 63 characters of a-z, 0-9 and '-', starting and
//                       ending with a letter or digit ("pi4b-1");
//   DNS-1123 subdomain  1 to 253 characters: labels joined by '.'
//                       ("pi4b-1.rack-2"), as Kubernetes names nodes.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast {

enum class NameKind {
  kDnsLabel,      // job names: they become label values and prefixes of pod names
  kDnsSubdomain,  // node names, as Kubernetes names nodes
};

inline constexpr size_t kMaxDnsLabelLength = 63;
inline constexpr size_t kMaxDnsSubdomainLength = 253;

// Returns Ok when `name` is a valid name of `kind`. Otherwise Invalid with a
// message that says what was expected, what was got (control bytes escaped,
// a long name shortened) and what is wrong with it, e.g.
//   expected a DNS-1123 label (1 to 63 characters: a-z, 0-9 and '-', starting
//   and ending with a letter or digit), got 'team/a': '/' at position 5 is not
//   allowed
// The caller adds where the name was written (file, line, field).
Status CheckName(std::string_view name, NameKind kind);

// The longest file name (one path component) Linux file systems take, in
// bytes (NAME_MAX).
inline constexpr size_t kMaxFileNameBytes = 255;

// A file name for `name` that ends in `suffix` and has at most `max_bytes`
// bytes: "<name><suffix>" when that fits (a node's "pi4b-1.log"), else the
// first bytes of `name`, '-' and 16 hex digits of a hash of the whole name
// (64-bit FNV-1a), then `suffix`, so that two long names with one beginning
// still get two files. A DNS-1123 subdomain of 252 or 253 characters is such
// a name: with ".log" it is over 255 bytes. Requires `name` without '/' or
// NUL (CheckName) and max_bytes > suffix.size() + 17.
std::string BoundedFileName(std::string_view name, std::string_view suffix,
                            size_t max_bytes = kMaxFileNameBytes);

// `text` quoted for a message: non-printable bytes as \xNN, and at most 80
// characters of it followed by "... (N characters)".
std::string QuoteForMessage(std::string_view text);

}  // namespace ballast
