// WriteBundle (bundle.h): the I/O of `ballast-worker bundle`.
#include "worker/bundle.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <utility>

#include "fileio/bounded_file.h"

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;

// An address in this program's code: this file is linked into the program
// (a static library), not into a shared one.
uintptr_t ProgramAddress() { return reinterpret_cast<uintptr_t>(&ProgramAddress); }

StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return Status::Unavailable(fmt::format("cannot open {}", path));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::Unavailable(fmt::format("cannot read {}", path));
  return out.str();
}

// A file mapped read-only: its soname is read from the few pages that hold
// it, not from a copy of the whole (OpenBLAS is 36 MB) in the init
// container's memory.
class MappedBytes {
 public:
  static StatusOr<MappedBytes> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::Unavailable(fmt::format("cannot open {}", path));
    struct stat info {};
    MappedBytes bytes;
    if (fstat(fd, &info) == 0 && info.st_size > 0) {
      void* data = mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) bytes.data_ = data, bytes.size_ = info.st_size;
    }
    close(fd);
    if (bytes.data_ == nullptr) return Status::Unavailable(fmt::format("cannot map {}", path));
    return bytes;
  }
  MappedBytes(MappedBytes&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(other.size_) {}
  MappedBytes& operator=(MappedBytes&&) = delete;
  ~MappedBytes() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  std::string_view view() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedBytes() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

Status IoError(const std::string& what, const fs::path& path, const std::error_code& error) {
  return Status::Unavailable(fmt::format("{} {}: {}", what, path.string(), error.message()));
}

// Where each planned file goes, relative to the bundle's directory.
StatusOr<std::map<std::string, std::string>> Destinations(const BundlePlan& plan) {
  std::map<std::string, std::string> to_source = {{kBundleProgram, plan.program},
                                                  {kBundleLoader, plan.loader}};
  for (const std::string& library : plan.libraries) {
    BALLAST_ASSIGN_OR_RETURN(const MappedBytes bytes, MappedBytes::Open(library));
    StatusOr<std::string> soname = ElfSoname(bytes.view());
    if (!soname.ok()) return Status::Invalid(library + ": " + soname.status().message());
    const std::string name = soname->empty() ? fs::path(library).filename().string() : *soname;
    const std::string entry = std::string(kBundleLibDir) + "/" + name;
    if (!BundleEntryIsSafe(entry)) {
      return Status::Invalid(
          fmt::format("{} names itself \"{}\", which is not a plain file name", library, name));
    }
    const auto [at, added] = to_source.emplace(entry, library);
    if (!added) {
      return Status::Invalid(
          fmt::format("{} and {} are both the library {}", at->second, library, name));
    }
  }
  return to_source;
}

// The entries of `dir` (relative paths), after creating it when missing.
StatusOr<std::vector<std::string>> Entries(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return IoError("cannot create", dir, error);
  std::vector<std::string> entries;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    entries.push_back(it->path().lexically_relative(dir).generic_string());
  }
  if (error) return IoError("cannot list", dir, error);
  std::sort(entries.begin(), entries.end());
  return entries;
}

Status WriteManifest(const fs::path& dir, const std::vector<std::string>& entries) {
  std::string text = std::string(kBundleManifestHeader) + "\n";
  for (const std::string& entry : entries) text += entry + "\n";
  const fs::path temporary = dir / (std::string(kBundleManifest) + ".new");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) return Status::Unavailable("cannot write " + temporary.string());
  }
  std::error_code error;
  fs::rename(temporary, dir / kBundleManifest, error);
  return error ? IoError("cannot write", dir / kBundleManifest, error) : Status::Ok();
}

// Copies `source` to `target`, unlinking any old file first (a process may
// still have it mapped); returns the bytes copied. A target that is the source
// (a bundle bundling itself into its own directory) is kept.
StatusOr<uint64_t> CopyFile(const fs::path& source, const fs::path& target) {
  std::error_code error;
  if (!fs::equivalent(source, target, error)) {
    fs::remove(target, error);
    if (error) return IoError("cannot remove", target, error);
    fs::copy_file(source, target, error);
    if (error) return IoError("cannot copy " + source.string() + " to", target, error);
  }
  const uint64_t size = fs::file_size(target, error);
  if (error) return IoError("cannot stat", target, error);
  return size;
}

}  // namespace

StatusOr<BundleSummary> WriteBundle(const std::string& dir_name) {
  const fs::path dir(dir_name);
  BALLAST_ASSIGN_OR_RETURN(const std::string maps, ReadWhole("/proc/self/maps"));
  const uintptr_t loader_base = getauxval(AT_BASE);
  std::error_code error;
  const std::string self =
      loader_base != 0 ? std::string() : fs::read_symlink("/proc/self/exe", error).string();
  BALLAST_ASSIGN_OR_RETURN(const BundlePlan plan,
                           PlanBundle(maps, ProgramAddress(), loader_base, self));
  BALLAST_ASSIGN_OR_RETURN(const auto to_source, Destinations(plan));
  BALLAST_ASSIGN_OR_RETURN(const std::vector<std::string> entries, Entries(dir));
  std::optional<std::string> manifest;
  if (fs::exists(dir / kBundleManifest, error)) {
    // A manifest lists a bundle's entries: a few dozen names, far below the
    // bound; a FIFO or device in its place is refused, not read.
    BALLAST_ASSIGN_OR_RETURN(
        manifest, fileio::ReadBoundedFile((dir / kBundleManifest).string(), size_t{1} << 20));
  }
  BALLAST_ASSIGN_OR_RETURN(const std::vector<std::string> previous,
                           CheckBundleTarget(dir_name, entries, manifest));

  BundleSummary summary;
  for (const auto& [entry, source] : to_source) summary.entries.push_back(entry);
  std::vector<std::string> both = summary.entries;
  both.insert(both.end(), previous.begin(), previous.end());
  // Every state of DIR from here on is a previous bundle to the next run.
  BALLAST_RETURN_IF_ERROR(WriteManifest(dir, both));
  for (const std::string& entry : previous) {
    if (to_source.count(entry) || entry == kBundleLibDir) continue;
    fs::remove(dir / entry, error);
    if (error) return IoError("cannot remove", dir / entry, error);
  }
  fs::create_directories(dir / kBundleLibDir, error);
  if (error) return IoError("cannot create", dir / kBundleLibDir, error);
  for (const auto& [entry, source] : to_source) {
    BALLAST_ASSIGN_OR_RETURN(const uint64_t bytes, CopyFile(source, dir / entry));
    summary.bytes += bytes;
  }
  BALLAST_RETURN_IF_ERROR(WriteManifest(dir, summary.entries));
  return summary;
}

}  // namespace ballast::worker
