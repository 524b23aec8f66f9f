// The pure parts of `ballast-worker bundle` (bundle.h): reading
// /proc/self/maps, choosing the files, reading an ELF soname, checking the
// target directory's entries.
#include <elf.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

#include "worker/bundle.h"

namespace ballast::worker {
namespace {

constexpr std::string_view kDeleted = " (deleted)";

std::string_view NextField(std::string_view& line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  const size_t end = std::min(line.find(' '), line.size());
  std::string_view field = line.substr(0, end);
  line.remove_prefix(end);
  return field;
}

bool ParseHex(std::string_view text, uintptr_t& value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return error == std::errc() && end == text.data() + text.size();
}

// One line: "begin-end perms offset dev inode   path"; the path (which may
// hold spaces) is the rest of the line after the inode and its padding.
StatusOr<std::optional<MappedFile>> ParseMapsLine(std::string_view line, size_t number) {
  const auto bad = [&](const char* what) {
    return Status::Invalid(fmt::format("maps line {}: expected {}, got \"{}\"", number, what,
                                       std::string(line.substr(0, 200))));
  };
  std::string_view rest = line;
  const std::string_view range = NextField(rest);
  const size_t dash = range.find('-');
  MappedFile file;
  if (dash == std::string_view::npos || !ParseHex(range.substr(0, dash), file.begin) ||
      !ParseHex(range.substr(dash + 1), file.end) || file.end <= file.begin) {
    return bad("an address range BEGIN-END in hex");
  }
  for (const char* what : {"permissions", "an offset", "a device", "an inode"}) {
    if (NextField(rest).empty()) return bad(what);
  }
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty() || rest.front() != '/') return std::optional<MappedFile>();  // anonymous, [x]
  file.path = std::string(rest);
  return std::optional<MappedFile>(std::move(file));
}

// Mappings that are not files of the program: devices, System V shared
// memory, memfd.
bool IsSpecial(const std::string& path) {
  return path.starts_with("/dev/") || path.starts_with("/SYSV") || path.starts_with("/memfd:");
}

bool IsSharedObject(std::string_view path) {
  const std::string_view name = path.substr(path.rfind('/') + 1);
  for (size_t at = name.find(".so"); at != std::string_view::npos; at = name.find(".so", at + 1)) {
    if (at + 3 == name.size() || name[at + 3] == '.') return true;
  }
  return false;
}

StatusOr<std::string> FileAt(const std::vector<MappedFile>& files, uintptr_t address,
                             const char* what) {
  for (const MappedFile& file : files) {
    if (address >= file.begin && address < file.end) return file.path;
  }
  return Status::Invalid(
      fmt::format("the {} (address {:#x}) is in no file mapping", what, address));
}

Status RefuseDeleted(const std::string& path) {
  if (!path.ends_with(kDeleted)) return Status::Ok();
  return Status::Invalid(fmt::format(
      "{} was deleted or replaced after this process mapped it; restart the worker to bundle it",
      path.substr(0, path.size() - kDeleted.size())));
}

// `bytes[offset, offset + size)` when it is within the bytes.
std::optional<std::string_view> Slice(std::string_view bytes, uint64_t offset, uint64_t size) {
  if (offset > bytes.size() || size > bytes.size() - offset) return std::nullopt;
  return bytes.substr(offset, size);
}

template <typename T>
std::optional<T> ReadAt(std::string_view bytes, uint64_t offset) {
  const auto slice = Slice(bytes, offset, sizeof(T));
  if (!slice) return std::nullopt;
  T value;
  std::memcpy(&value, slice->data(), sizeof(T));
  return value;
}

// The file offset of virtual address `address`, by the PT_LOAD segments.
std::optional<uint64_t> FileOffset(const std::vector<ElfW(Phdr)>& headers, uint64_t address) {
  for (const ElfW(Phdr) & header : headers) {
    if (header.p_type == PT_LOAD && address >= header.p_vaddr &&
        address - header.p_vaddr < header.p_filesz) {
      return address - header.p_vaddr + header.p_offset;
    }
  }
  return std::nullopt;
}

}  // namespace

StatusOr<std::vector<MappedFile>> ParseMaps(std::string_view maps) {
  std::vector<MappedFile> files;
  size_t number = 0;
  while (!maps.empty()) {
    const size_t end = std::min(maps.find('\n'), maps.size());
    const std::string_view line = maps.substr(0, end);
    maps.remove_prefix(std::min(end + 1, maps.size()));
    ++number;
    if (line.empty()) continue;
    BALLAST_ASSIGN_OR_RETURN(std::optional<MappedFile> file, ParseMapsLine(line, number));
    if (file) files.push_back(std::move(*file));
  }
  return files;
}

StatusOr<BundlePlan> PlanBundle(std::string_view maps, uintptr_t program_address,
                                uintptr_t loader_address, const std::string& loader_path) {
  BALLAST_ASSIGN_OR_RETURN(const std::vector<MappedFile> files, ParseMaps(maps));
  BundlePlan plan;
  BALLAST_ASSIGN_OR_RETURN(plan.program, FileAt(files, program_address, "program"));
  if (loader_address != 0) {
    BALLAST_ASSIGN_OR_RETURN(plan.loader, FileAt(files, loader_address, "dynamic loader"));
  } else if (std::any_of(files.begin(), files.end(),
                         [&](const MappedFile& file) { return file.path == loader_path; })) {
    plan.loader = loader_path;
  } else {
    return Status::Invalid(fmt::format("the dynamic loader {} is not mapped", loader_path));
  }
  if (plan.program == plan.loader) {
    return Status::Invalid(fmt::format(
        "the program and the dynamic loader are one file, {}: a static program needs no bundle",
        plan.program));
  }
  BALLAST_RETURN_IF_ERROR(RefuseDeleted(plan.program));
  BALLAST_RETURN_IF_ERROR(RefuseDeleted(plan.loader));
  std::set<std::string> seen = {plan.program, plan.loader};
  for (const MappedFile& file : files) {
    if (IsSpecial(file.path) || !seen.insert(file.path).second) continue;
    if (!IsSharedObject(file.path)) {
      plan.skipped.push_back(file.path);
      continue;
    }
    BALLAST_RETURN_IF_ERROR(RefuseDeleted(file.path));
    plan.libraries.push_back(file.path);
  }
  return plan;
}

StatusOr<std::string> ElfSoname(std::string_view bytes) {
  const auto header = ReadAt<ElfW(Ehdr)>(bytes, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) {
    return Status::Invalid("not an ELF file");
  }
  const bool native_data =
      (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) == header->e_ident[EI_DATA];
  if (header->e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) || !native_data ||
      header->e_phentsize != sizeof(ElfW(Phdr))) {
    return Status::Invalid("an ELF file of another class or byte order than this process");
  }
  if (header->e_phoff > bytes.size()) return Status::Invalid("ELF program headers cut short");
  std::vector<ElfW(Phdr)> headers;
  for (uint64_t i = 0; i < header->e_phnum; ++i) {
    const auto phdr = ReadAt<ElfW(Phdr)>(bytes, header->e_phoff + i * sizeof(ElfW(Phdr)));
    if (!phdr) return Status::Invalid("ELF program headers cut short");
    headers.push_back(*phdr);
  }
  const auto dynamic = std::find_if(headers.begin(), headers.end(),
                                    [](const ElfW(Phdr) & h) { return h.p_type == PT_DYNAMIC; });
  if (dynamic == headers.end()) return std::string();
  uint64_t strtab = 0;
  std::optional<uint64_t> soname;
  for (uint64_t at = dynamic->p_offset; at < dynamic->p_offset + dynamic->p_filesz;
       at += sizeof(ElfW(Dyn))) {
    const auto entry = ReadAt<ElfW(Dyn)>(bytes, at);
    if (!entry) return Status::Invalid("ELF dynamic section cut short");
    if (entry->d_tag == DT_NULL) break;
    if (entry->d_tag == DT_STRTAB) strtab = entry->d_un.d_ptr;
    if (entry->d_tag == DT_SONAME) soname = entry->d_un.d_val;
  }
  if (!soname) return std::string();
  const auto table = FileOffset(headers, strtab);
  if (!table || *table >= bytes.size() || *soname >= bytes.size() - *table) {
    return Status::Invalid("ELF soname outside the file");
  }
  const std::string_view rest = bytes.substr(*table + *soname);
  const size_t nul = rest.find('\0');
  if (nul == std::string_view::npos) return Status::Invalid("ELF soname not terminated");
  return std::string(rest.substr(0, nul));
}

bool BundleEntryIsSafe(std::string_view entry) {
  if (entry == kBundleLoader || entry == kBundleProgram || entry == kBundleLibDir) return true;
  const std::string prefix = std::string(kBundleLibDir) + "/";
  if (!entry.starts_with(prefix)) return false;
  const std::string_view name = entry.substr(prefix.size());
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

StatusOr<std::vector<std::string>> CheckBundleTarget(const std::string& dir,
                                                     const std::vector<std::string>& entries,
                                                     const std::optional<std::string>& manifest) {
  if (!manifest) {
    if (entries.empty()) return std::vector<std::string>();
    return Status::Invalid(fmt::format(
        "{} is not empty (it holds {}) and is no ballast-worker bundle (no {}): refusing to "
        "write into it; give an empty or new directory",
        dir, entries.front(), kBundleManifest));
  }
  std::string_view text = *manifest;
  const size_t first = std::min(text.find('\n'), text.size());
  if (text.substr(0, first) != kBundleManifestHeader) {
    return Status::Invalid(fmt::format("{}/{}: expected first line \"{}\", got \"{}\"", dir,
                                       kBundleManifest, kBundleManifestHeader,
                                       std::string(text.substr(0, std::min<size_t>(first, 80)))));
  }
  text.remove_prefix(std::min(first + 1, text.size()));
  std::vector<std::string> listed;
  for (size_t line = 2; !text.empty(); ++line) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view entry = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (entry.empty()) continue;
    if (!BundleEntryIsSafe(entry)) {
      return Status::Invalid(fmt::format("{}/{} line {}: \"{}\" is not a file of a bundle", dir,
                                         kBundleManifest, line, std::string(entry.substr(0, 80))));
    }
    listed.emplace_back(entry);
  }
  for (const std::string& entry : entries) {
    if (entry == kBundleManifest || entry == kBundleLibDir) continue;
    if (std::find(listed.begin(), listed.end(), entry) == listed.end()) {
      return Status::Invalid(fmt::format(
          "{} holds {}, which its bundle manifest does not list: refusing to write into it", dir,
          entry));
    }
  }
  return listed;
}

}  // namespace ballast::worker
