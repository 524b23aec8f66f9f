// Feeds every kept input of every fuzz target (its seeds and
// tests/fuzz/corpus/<target>/, where each input that once found a bug stays)
// through the target, built with gcc and no sanitizer: what the fuzzers
// found stays fixed in the normal suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/targets.h"

namespace ballast::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = BALLAST_SOURCE_DIR;

// The directories seeds.txt lists for `target`, and its own corpus folder.
std::vector<fs::path> SeedDirectories(const std::string& target) {
  std::vector<fs::path> dirs = {kSource / "tests/fuzz/corpus" / target};
  std::ifstream seeds(kSource / "tests/fuzz/seeds.txt");
  std::string line;
  while (std::getline(seeds, line)) {
    std::istringstream words(line);
    std::string name, dir;
    if (!(words >> name) || name != target) continue;
    while (words >> dir) dirs.push_back(kSource / dir);
  }
  return dirs;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class FuzzReplay : public testing::TestWithParam<NamedTarget> {};

TEST_P(FuzzReplay, EveryKeptInputRunsToTheEnd) {
  int inputs = 0;
  for (const auto& dir : SeedDirectories(GetParam().name)) {
    ASSERT_TRUE(fs::is_directory(dir)) << dir << " (listed in tests/fuzz/seeds.txt)";
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      SCOPED_TRACE(entry.path().string());
      GetParam().run(ReadAll(entry.path()));
      ++inputs;
    }
  }
  std::printf("%s: %d inputs\n", GetParam().name, inputs);
  EXPECT_GT(inputs, 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, testing::ValuesIn(AllTargets()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ballast::fuzz
