// `ballast-worker bundle`'s pure parts on sample /proc/self/maps text and on
// the real shared objects of this process, and WriteBundle into scratch
// directories.
#include "worker/bundle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;

// The maps of a worker started normally on Debian bookworm, x86-64, cut down:
// program, heap, loader, libraries (OpenBLAS through its alternatives link),
// the locale archive, anonymous mappings, a device, memfd, vdso.
constexpr char kMaps[] =
    "55d0c0000000-55d0c0400000 r--p 00000000 08:01 1001    /usr/bin/ballast-worker\n"
    "55d0c0400000-55d0c0c00000 r-xp 00400000 08:01 1001    /usr/bin/ballast-worker\n"
    "55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0       [heap]\n"
    "7f0000000000-7f0000200000 r--p 00000000 08:01 2001    "
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so\n"
    "7f0000200000-7f0002000000 r-xp 00200000 08:01 2001    "
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so\n"
    "7f0003000000-7f0003100000 r--p 00000000 08:01 2002    /usr/lib/locale/locale-archive\n"
    "7f0004000000-7f0004028000 r--p 00000000 08:01 2003    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f0004028000-7f000419d000 r-xp 00028000 08:01 2003    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f0005000000-7f0005001000 rw-s 00000000 00:01 3001    /dev/zero (deleted)\n"
    "7f0005100000-7f0005101000 rw-s 00000000 00:01 3002    /memfd:shared (deleted)\n"
    "7f0005200000-7f0005300000 rw-p 00000000 00:00 0 \n"
    "7f0006000000-7f0006020000 r--p 00000000 08:01 2004    /usr/lib/x86_64-linux-gnu/"
    "libstdc++.so.6.0.30\n"
    "7f0007000000-7f0007001000 r--p 00000000 08:01 2005    /opt/odd dir/libspace.so\n"
    "7f0008000000-7f0008001000 r--p 00000000 08:01 2006    /usr/lib/x86_64-linux-gnu/"
    "ld-linux-x86-64.so.2\n"
    "7f0008001000-7f0008027000 r-xp 00001000 08:01 2006    /usr/lib/x86_64-linux-gnu/"
    "ld-linux-x86-64.so.2\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0       [stack]\n"
    "7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0       [vdso]\n";

constexpr uintptr_t kInProgram = 0x55d0c0400123;
constexpr uintptr_t kLoaderBase = 0x7f0008000000;

TEST(ParseMaps, KeepsFileMappingsOnlyWithPathsAsPrinted) {
  const auto files = ParseMaps(kMaps);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 13u);
  EXPECT_EQ((*files)[0].begin, 0x55d0c0000000u);
  EXPECT_EQ((*files)[0].end, 0x55d0c0400000u);
  EXPECT_EQ((*files)[0].path, "/usr/bin/ballast-worker");
  EXPECT_EQ((*files)[7].path, "/dev/zero (deleted)");
  EXPECT_EQ((*files)[10].path, "/opt/odd dir/libspace.so");
}

TEST(ParseMaps, ALineNotInTheKernelsFormatIsNamedByNumber) {
  const auto bad = ParseMaps(std::string(kMaps).substr(0, 160) + "\nzz-10 r--p\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalid);
  EXPECT_NE(bad.status().message().find("maps line 3"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("address range"), std::string::npos);
  EXPECT_FALSE(ParseMaps("7f00-7f10 r--p 00000000\n").ok());     // no device, no inode
  EXPECT_FALSE(ParseMaps("7f10-7f00 r--p 0 0 0 /x.so\n").ok());  // end before begin
}

TEST(PlanBundle, CopiesProgramLoaderAndEveryMappedSharedObjectOnce) {
  const auto plan = PlanBundle(kMaps, kInProgram, kLoaderBase, "");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->program, "/usr/bin/ballast-worker");
  EXPECT_EQ(plan->loader, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  EXPECT_EQ(plan->libraries,
            (std::vector<std::string>{
                "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so",
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "/opt/odd dir/libspace.so"}));
  EXPECT_EQ(plan->skipped, std::vector<std::string>{"/usr/lib/locale/locale-archive"});
}

TEST(PlanBundle, WithoutALoaderBaseTheLoaderIsTheFileTheKernelStarted) {
  // `ld.so --library-path DIR/lib DIR/ballast-worker`: no AT_BASE, and
  // /proc/self/exe is the loader.
  const auto plan =
      PlanBundle(kMaps, kInProgram, 0, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->loader, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  EXPECT_EQ(plan->libraries.size(), 4u);
  const auto missing = PlanBundle(kMaps, kInProgram, 0, "/lib/ld-musl-x86_64.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("ld-musl-x86_64.so.1 is not mapped"),
            std::string::npos);
}

TEST(PlanBundle, RefusesDeletedFilesUnmappedAddressesAndAStaticProgram) {
  std::string deleted = kMaps;
  deleted.insert(deleted.find("libc.so.6\n") + 9, " (deleted)");
  const auto replaced = PlanBundle(deleted, kInProgram, kLoaderBase, "");
  ASSERT_FALSE(replaced.ok());
  EXPECT_NE(replaced.status().message().find(
                "/usr/lib/x86_64-linux-gnu/libc.so.6 was deleted or replaced"),
            std::string::npos)
      << replaced.status().message();

  const auto nowhere = PlanBundle(kMaps, 0x1000, kLoaderBase, "");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.status().message().find("program (address 0x1000) is in no file mapping"),
            std::string::npos)
      << nowhere.status().message();

  const auto same = PlanBundle(kMaps, kInProgram, kInProgram, "");
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.status().message().find("one file"), std::string::npos);
}

// The path of the first mapped file of this process whose name contains
// `part`.
std::string MappedFileNamed(const std::string& part) {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  const auto files = ParseMaps(text.str());
  if (files.ok()) {
    for (const MappedFile& file : *files) {
      if (fs::path(file.path).filename().string().find(part) != std::string::npos) {
        return file.path;
      }
    }
  }
  return "";
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(ElfSoname, ReadsTheNameTheLoaderSearchesForFromRealLibraries) {
  const std::string libc = MappedFileNamed("libc.so");
  ASSERT_FALSE(libc.empty());
  EXPECT_EQ(*ElfSoname(ReadBytes(libc)), "libc.so.6");
  // libstdc++'s file is libstdc++.so.6.0.NN; its soname is libstdc++.so.6.
  const std::string cxx = MappedFileNamed("libstdc++");
  ASSERT_FALSE(cxx.empty());
  EXPECT_EQ(*ElfSoname(ReadBytes(cxx)), "libstdc++.so.6") << cxx;
  // A program has no soname.
  EXPECT_EQ(*ElfSoname(ReadBytes("/proc/self/exe")), "");
}

TEST(ElfSoname, RefusesWhatIsNotAWholeElfFile) {
  EXPECT_EQ(ElfSoname("#!/bin/sh\n").status().message(), "not an ELF file");
  EXPECT_EQ(ElfSoname("").status().message(), "not an ELF file");
  const std::string libc = ReadBytes(MappedFileNamed("libc.so"));
  ASSERT_GT(libc.size(), 4096u);
  // Cut after the ELF header: the program headers are missing.
  const auto cut = ElfSoname(libc.substr(0, 80));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kInvalid);
  std::string other_class = libc;
  other_class[4] = other_class[4] == 2 ? 1 : 2;  // EI_CLASS: 32 <-> 64 bits
  EXPECT_FALSE(ElfSoname(other_class).ok());
}

TEST(BundleEntryIsSafe, OnlyTheBundlesOwnNamesAndPlainLibraryNames) {
  struct Case {
    const char* entry;
    bool safe;
  };
  for (const Case& c : std::vector<Case>{{"ld.so", true},
                                         {"ballast-worker", true},
                                         {"lib", true},
                                         {"lib/libc.so.6", true},
                                         {"lib/libstdc++.so.6", true},
                                         {"lib/", false},
                                         {"lib/.", false},
                                         {"lib/..", false},
                                         {"lib/../../etc/passwd", false},
                                         {"lib/sub/libx.so", false},
                                         {"../ld.so", false},
                                         {"/etc/passwd", false},
                                         {"etc/passwd", false},
                                         {"", false}}) {
    EXPECT_EQ(BundleEntryIsSafe(c.entry), c.safe) << c.entry;
  }
  EXPECT_FALSE(BundleEntryIsSafe("lib/" + std::string(256, 'x')));
  EXPECT_FALSE(BundleEntryIsSafe(std::string("lib/a\0b", 7)));
}

const std::string kManifest =
    std::string(kBundleManifestHeader) + "\nballast-worker\nld.so\nlib/libc.so.6\nlib/libm.so.6\n";

TEST(CheckBundleTarget, AnEmptyDirectoryOrAPreviousBundleOnly) {
  EXPECT_EQ(CheckBundleTarget("/b", {}, std::nullopt)->size(), 0u);
  const auto previous = CheckBundleTarget(
      "/b", {".ballast-bundle", "ballast-worker", "ld.so", "lib", "lib/libc.so.6"}, kManifest);
  ASSERT_TRUE(previous.ok()) << previous.status().ToString();
  EXPECT_EQ(*previous, (std::vector<std::string>{"ballast-worker", "ld.so", "lib/libc.so.6",
                                                 "lib/libm.so.6"}));

  const auto foreign = CheckBundleTarget("/b", {"data.txt"}, std::nullopt);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), StatusCode::kInvalid);
  EXPECT_NE(foreign.status().message().find("/b is not empty (it holds data.txt)"),
            std::string::npos)
      << foreign.status().message();

  const auto extra = CheckBundleTarget("/b", {".ballast-bundle", "ld.so", "lib/mine"}, kManifest);
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("/b holds lib/mine, which its bundle manifest"),
            std::string::npos)
      << extra.status().message();
}

TEST(CheckBundleTarget, AManifestNotOursOrNamingPathsOutsideIsRefused) {
  const auto header = CheckBundleTarget("/b", {".ballast-bundle"}, "something else\nld.so\n");
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.status().message().find("/b/.ballast-bundle: expected first line"),
            std::string::npos)
      << header.status().message();
  const auto outside =
      CheckBundleTarget("/b", {".ballast-bundle"},
                        std::string(kBundleManifestHeader) + "\nld.so\nlib/../../etc/passwd\n");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find(
                "/b/.ballast-bundle line 3: \"lib/../../etc/passwd\" is not a file of a bundle"),
            std::string::npos)
      << outside.status().message();
}

class WriteBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ballast-bundle-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WriteBundleTest, CopiesThisProcessesClosureUnderSonamesAndRewritesItsOwnBundle) {
  const auto first = WriteBundle((dir_ / "b").string());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string libc = MappedFileNamed("libc.so");
  EXPECT_EQ(fs::file_size(dir_ / "b" / "lib" / "libc.so.6"), fs::file_size(libc));
  EXPECT_EQ(fs::file_size(dir_ / "b" / "ballast-worker"), fs::file_size("/proc/self/exe"));
  EXPECT_TRUE(fs::exists(dir_ / "b" / "ld.so"));
  uint64_t bytes = 0;
  for (const std::string& entry : first->entries) bytes += fs::file_size(dir_ / "b" / entry);
  EXPECT_EQ(first->bytes, bytes);
  std::string manifest = std::string(kBundleManifestHeader) + "\n";
  for (const std::string& entry : first->entries) manifest += entry + "\n";
  EXPECT_EQ(ReadBytes((dir_ / "b" / kBundleManifest).string()), manifest);
  // A second run finds its own bundle and writes it again; a stale library
  // the manifest lists is removed.
  std::ofstream(dir_ / "b" / "lib" / "libgone.so.1") << "old";
  std::ofstream(dir_ / "b" / kBundleManifest, std::ios::app) << "lib/libgone.so.1\n";
  const auto second = WriteBundle((dir_ / "b").string());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->entries, first->entries);
  EXPECT_FALSE(fs::exists(dir_ / "b" / "lib" / "libgone.so.1"));
}

TEST_F(WriteBundleTest, RefusesADirectoryHoldingSomethingElseAndLeavesItAlone) {
  fs::create_directories(dir_ / "c");
  std::ofstream(dir_ / "c" / "notes.txt") << "mine";
  const auto refused = WriteBundle((dir_ / "c").string());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("holds notes.txt"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(ReadBytes((dir_ / "c" / "notes.txt").string()), "mine");
  EXPECT_FALSE(fs::exists(dir_ / "c" / "ld.so"));
}

}  // namespace
}  // namespace ballast::worker
