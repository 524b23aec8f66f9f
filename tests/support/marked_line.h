// Test helper shared by the YAML error tests: a test document marks the line
// an error must name with a "# <-" comment.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/common/status.h"

namespace ballast::testing {

// The 1-based line of `text` holding the "# <-" marker; 0 when there is none.
inline int MarkedLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find("# <-") != std::string::npos) return number;
  }
  return 0;
}

// Expects `status` Invalid, its message starting with "`file`:<the marked
// line of `text`>:".
inline void ExpectInvalidAtMarkedLine(const Status& status, const std::string& text,
                                      const std::string& file) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  const int line = MarkedLine(text);
  ASSERT_GT(line, 0) << "the test document needs a '# <-' marker";
  const std::string where = file + ":" + std::to_string(line) + ":";
  EXPECT_EQ(status.message().rfind(where, 0), 0u)
      << "message does not start with " << where << ": " << status.message();
}

}  // namespace ballast::testing
