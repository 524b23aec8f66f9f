// A kernel test's scratch directory: made for each test (named for this
// process and the test), removed at its end; the commands under test write
// there, and the test reads the lines they appended.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ballast::kernels::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ballast-kernel-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The lines the commands appended to `name` in the scratch directory, in
  // the order they were written.
  std::vector<std::string> LinesOf(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::filesystem::path dir_;
};

}  // namespace ballast::kernels::testing
