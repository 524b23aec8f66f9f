// Test helper shared by the YAML error tests: a test document marks the line
// an error must name with a "# <-" comment.
#pragma once

#include <sstream>
#include <string>

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

}  // namespace ballast::testing
