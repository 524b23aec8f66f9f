// LineSplitter: lines split across chunks, CRLF, the bound on one line.
#include "net/kube/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ballast::kube {
namespace {

struct Collected {
  std::vector<std::string> lines;
  LineSplitter::LineCallback callback() {
    return [this](const std::string& line) {
      lines.push_back(line);
      return true;
    };
  }
};

TEST(LineSplitter, LinesSplitAcrossChunksAreJoined) {
  LineSplitter splitter(100);
  Collected got;
  bool stopped = false;
  for (std::string_view chunk : {"{\"a\"", ":1}\n{\"b\":2}\r", "\n\n{\"c\"", ":3}\n"}) {
    ASSERT_TRUE(splitter.Feed(chunk, got.callback(), "test", &stopped).ok());
  }
  EXPECT_EQ(got.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_TRUE(splitter.pending().empty());
}

TEST(LineSplitter, CallbackReturningFalseStopsBeforeTheNextLine) {
  LineSplitter splitter(100);
  std::vector<std::string> lines;
  bool stopped = false;
  ASSERT_TRUE(splitter
                  .Feed(
                      "one\ntwo\nthree\n",
                      [&](const std::string& line) {
                        lines.push_back(line);
                        return false;
                      },
                      "test", &stopped)
                  .ok());
  EXPECT_TRUE(stopped);
  EXPECT_EQ(lines, std::vector<std::string>{"one"});
}

TEST(LineSplitter, LineOfExactlyTheLimitIsKept) {
  LineSplitter splitter(8);
  Collected got;
  bool stopped = false;
  ASSERT_TRUE(splitter.Feed("1234", got.callback(), "test", &stopped).ok());
  ASSERT_TRUE(splitter.Feed("5678\n", got.callback(), "test", &stopped).ok());
  EXPECT_EQ(got.lines, std::vector<std::string>{"12345678"});
}

TEST(LineSplitter, EndlessLineIsRefusedOnceItPassesTheLimitNotHeldInMemory) {
  LineSplitter splitter(8);
  Collected got;
  bool stopped = false;
  ASSERT_TRUE(splitter.Feed("12345", got.callback(), "WATCH /x", &stopped).ok());
  Status status = splitter.Feed("6789", got.callback(), "WATCH /x", &stopped);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("WATCH /x: a line longer than 8 bytes"), std::string::npos)
      << status.message();
  EXPECT_TRUE(splitter.pending().empty());
  EXPECT_TRUE(got.lines.empty());
}

}  // namespace
}  // namespace ballast::kube
