// `ballast-worker bundle --to DIR`: the running worker, its dynamic loader and
// every shared library it has mapped, copied into DIR so that
//
//   DIR/ld.so --library-path DIR/lib DIR/ballast-worker ...
//
// runs in any root file system of the same architecture, even one with no C
// library (the exec workload in the user's own image, docs/workloads.md).
//
// What to copy is read from /proc/self/maps, the files this process really
// has mapped, whatever the layout of the image it runs in; each library is
// stored under its ELF soname (the name the loader searches for), not the
// name of the file it was mapped from (libopenblas.so.0, not
// libopenblasp-r0.3.21.so). DIR holds a manifest, DIR/.ballast-bundle, written
// before anything else, listing every file the bundle may hold; a DIR that is
// not empty is written into only when it holds such a manifest and nothing
// else, so an interrupted bundle is finished by a second run and nothing else
// is ever overwritten or removed.
//
// The pure parts (ParseMaps, PlanBundle, ElfSoname, CheckBundleTarget,
// BundleEntryIsSafe) do no I/O; WriteBundle does the copying.
//
// Thread-safety: the pure functions are; WriteBundle must not run twice on the
// same DIR at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace ballast::worker {

// The manifest's name in DIR and its first line.
inline constexpr const char* kBundleManifest = ".ballast-bundle";
inline constexpr const char* kBundleManifestHeader = "ballast-worker bundle 1";
// The stable names in DIR (the pod spec names them).
inline constexpr const char* kBundleLoader = "ld.so";
inline constexpr const char* kBundleProgram = "ballast-worker";
inline constexpr const char* kBundleLibDir = "lib";

// One mapping of a file, a line of /proc/PID/maps.
struct MappedFile {
  uintptr_t begin = 0;
  uintptr_t end = 0;  // one past the last byte
  std::string path;   // as the kernel prints it, " (deleted)" included
};

// The file-backed mappings of `maps` (the text of /proc/PID/maps), in order;
// anonymous and special mappings ([heap], [vdso], ...) are left out. Returns
// Invalid naming the line when a line is not in the kernel's format.
StatusOr<std::vector<MappedFile>> ParseMaps(std::string_view maps);

// Which mapped files a bundle copies.
struct BundlePlan {
  std::string program;                 // the file the worker's code is mapped from
  std::string loader;                  // the dynamic loader's file
  std::vector<std::string> libraries;  // every other shared object, in order of first mapping
  std::vector<std::string> skipped;    // mapped files that are not shared objects (locale data)
};

// The plan for the process whose maps are `maps`: `program_address` is an
// address in the program's code, `loader_address` one in the loader's (its
// base, AT_BASE); both must fall in a file mapping. A loader_address of 0 (no
// AT_BASE: the kernel started the loader itself, `ld.so PROGRAM`) means the
// loader is the mapped file `loader_path` (/proc/self/exe). A mapped file is a shared object when
// its name holds ".so" at the end or before a '.'; device files, System V shared memory and memfd
// mappings are ignored. Returns Invalid when an address falls in no file mapping, when program and
// loader are one file, or when a file the plan needs was deleted or replaced since it was mapped ("
// (deleted)": the process's own files can no longer be copied consistently).
StatusOr<BundlePlan> PlanBundle(std::string_view maps, uintptr_t program_address,
                                uintptr_t loader_address, const std::string& loader_path);

// The DT_SONAME of the ELF shared object `bytes` (the whole file), of this
// process's ELF class and byte order; "" when it has none. Returns Invalid
// when the bytes are not such an ELF file or are cut short.
StatusOr<std::string> ElfSoname(std::string_view bytes);

// True when `entry` may be written or removed in DIR: "ld.so",
// "ballast-worker", "lib", or "lib/NAME" with NAME a plain file name (no '/',
// not "." or "..", no NUL, at most 255 bytes).
bool BundleEntryIsSafe(std::string_view entry);

// Whether a bundle may be written into a DIR whose entries (relative paths,
// "lib" and "lib/x" included, the manifest too) are `entries` and whose
// manifest, when present, reads `manifest`. Returns the entries the previous
// bundle listed (to be removed when not written again), empty for an empty
// DIR. Returns Invalid, naming DIR (`dir`, for the message) and the offending
// entry, when DIR holds anything the manifest does not list, when the
// manifest is not one of ours, or when it lists an unsafe entry.
StatusOr<std::vector<std::string>> CheckBundleTarget(const std::string& dir,
                                                     const std::vector<std::string>& entries,
                                                     const std::optional<std::string>& manifest);

// What WriteBundle wrote.
struct BundleSummary {
  std::vector<std::string> entries;  // relative to DIR, the manifest excluded
  uint64_t bytes = 0;                // their total size
};

// Copies this process's program, loader and libraries into `dir` (created
// when missing). Returns Invalid when `dir` holds something other than a
// previous bundle or a library's soname is not a plain file name, Unavailable
// on an I/O error (with the path).
StatusOr<BundleSummary> WriteBundle(const std::string& dir);

}  // namespace ballast::worker
