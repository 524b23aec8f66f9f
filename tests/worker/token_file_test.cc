// The job's token from a file (worker/token_file.h): a worker pod reads it
// from the file of a Secret volume; what is not one token is refused with
// the file named, whatever the file holds.
#include "worker/token_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ballast::worker {
namespace {

TEST(TokenFileTest, TheTokenIsTheFileWithoutItsLineEnd) {
  EXPECT_EQ(ParseTokenFile("0123abcd").value(), "0123abcd");
  EXPECT_EQ(ParseTokenFile("0123abcd\n").value(), "0123abcd");
  EXPECT_EQ(ParseTokenFile("  0123abcd \r\n").value(), "0123abcd");
}

TEST(TokenFileTest, AFileOfSomethingElseIsNoToken) {
  EXPECT_EQ(ParseTokenFile("").status().message(), "it is empty");
  EXPECT_EQ(ParseTokenFile(" \n\n").status().message(), "it is empty");
  EXPECT_EQ(ParseTokenFile("token: abc\n").status().message(), "it holds more than one word");
  EXPECT_EQ(ParseTokenFile("abc\ndef").status().message(), "it holds more than one word");
  EXPECT_EQ(ParseTokenFile(std::string("ab\0c", 4)).status().message(),
            "it holds a control character");
}

class TokenFileOnDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("ballast-token-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TokenFileOnDiskTest, ReadsTheTokenASecretVolumeHolds) {
  const std::string path = Write("token", "5f0e9d2c4b1a39887766554433221100");
  EXPECT_EQ(ReadTokenFile(path).value(), "5f0e9d2c4b1a39887766554433221100");
}

TEST_F(TokenFileOnDiskTest, AMissingFileIsNamed) {
  const std::string path = (dir_ / "absent").string();
  const auto token = ReadTokenFile(path);
  EXPECT_EQ(token.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(token.status().message(), "the token file " + path + ": no such file");
}

TEST_F(TokenFileOnDiskTest, ALargeFileIsRefusedWithoutReadingItWhole) {
  const std::string path = Write("large", std::string(kMaxTokenFileBytes + 1, 'a'));
  const auto token = ReadTokenFile(path);
  EXPECT_EQ(token.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(token.status().message(), "the token file " + path + ": larger than 4096 bytes");
  EXPECT_EQ(ReadTokenFile(Write("fits", std::string(kMaxTokenFileBytes, 'a'))).value().size(),
            kMaxTokenFileBytes);
}

// A FIFO in the token file's place blocked the worker's start for good.
TEST_F(TokenFileOnDiskTest, AFifoIsRefusedAtOnceNamingIt) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto token = ReadTokenFile(path);
  EXPECT_EQ(token.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(token.status().message(), "the token file " + path + ": a FIFO, not a regular file");
}

TEST_F(TokenFileOnDiskTest, AFileOfSomethingElseIsNamedWithWhatItHolds) {
  const std::string path = Write("yaml", "token: abc\n");
  EXPECT_EQ(ReadTokenFile(path).status().message(),
            "the token file " + path + " holds no token: it holds more than one word");
}

}  // namespace
}  // namespace ballast::worker
