// fileio::ReadBoundedFile (fileio/bounded_file.h): the one reader of a file a
// user names. What never ends (/dev/zero), what blocks (a FIFO nobody
// writes), what has no text (a directory) is refused at once, naming the file
// and what it is; a regular file is read to its bound and refused one byte past.
#include "fileio/bounded_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace ballast::fileio {
namespace {

namespace fs = std::filesystem;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ballast-bounded-file-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(BoundedFileTest, AFileOfExactlyTheBoundIsReadWhole) {
  const std::string text(4096, 'a');
  EXPECT_EQ(ReadBoundedFile(Write("fits", text), 4096).value(), text);
  EXPECT_EQ(ReadBoundedFile(Write("empty", ""), 4096).value(), "");
}

TEST_F(BoundedFileTest, AFileOfTheBoundPlusOneIsRefusedNamingTheFileAndTheBound) {
  const std::string path = Write("large", std::string(4097, 'a'));
  const auto read = ReadBoundedFile(path, 4096);
  EXPECT_EQ(read.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(read.status().message(), path + ": larger than 4096 bytes");
}

// /dev/zero never ends and says it holds nothing (st_size 0): it is a device,
// refused without a byte read.
TEST_F(BoundedFileTest, DevZeroIsRefusedAsADevice) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const auto read = ReadBoundedFile(device, 4096);
    EXPECT_EQ(read.status().code(), StatusCode::kInvalid) << device;
    EXPECT_EQ(read.status().message(), std::string(device) + ": a device, not a regular file");
  }
}

// A FIFO nobody writes blocked its reader's open for good: it is refused at
// once, and neither the look nor the open waits for a writer.
TEST_F(BoundedFileTest, AFifoNobodyWritesReturnsAtOnceWithAnError) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto read = ReadBoundedFile(path, 4096);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(read.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(read.status().message(), path + ": a FIFO, not a regular file");
  EXPECT_LT(took, std::chrono::seconds(5));  // a bound on a hang, not a timing target
}

TEST_F(BoundedFileTest, ADirectoryIsRefusedAsOne) {
  const auto read = ReadBoundedFile(dir_.string(), 4096);
  EXPECT_EQ(read.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(read.status().message(), dir_.string() + ": a directory, not a regular file");
}

TEST_F(BoundedFileTest, NothingThereIsNotFound) {
  const std::string path = (dir_ / "absent").string();
  const auto read = ReadBoundedFile(path, 4096);
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(), path + ": no such file");
  const auto under_a_file = ReadBoundedFile(Write("file", "x") + "/below", 4096);
  EXPECT_EQ(under_a_file.status().code(), StatusCode::kNotFound);
}

// A link to a job file is a job file; a link to /dev/zero is a device.
TEST_F(BoundedFileTest, ALinkIsJudgedByWhatItLeadsTo) {
  const std::string target = Write("job.yaml", "items: 3\n");
  fs::create_symlink(target, dir_ / "link.yaml");
  EXPECT_EQ(ReadBoundedFile((dir_ / "link.yaml").string(), 4096).value(), "items: 3\n");
  fs::create_symlink("/dev/zero", dir_ / "zero.yaml");
  EXPECT_EQ(ReadBoundedFile((dir_ / "zero.yaml").string(), 4096).status().message(),
            (dir_ / "zero.yaml").string() + ": a device, not a regular file");
}

TEST(FileKindTest, NamesWhatIsNotARegularFile) {
  EXPECT_EQ(FileKind(S_IFREG | 0644), "a regular file");
  EXPECT_EQ(FileKind(S_IFDIR | 0755), "a directory");
  EXPECT_EQ(FileKind(S_IFIFO | 0600), "a FIFO");
  EXPECT_EQ(FileKind(S_IFCHR | 0666), "a device");
  EXPECT_EQ(FileKind(S_IFBLK | 0660), "a device");
  EXPECT_EQ(FileKind(S_IFSOCK | 0777), "a socket");
}

}  // namespace
}  // namespace ballast::fileio
