// One libFuzzer program: BALLAST_FUZZ_TARGET names the target it runs
// (targets.h); tests/fuzz/CMakeLists.txt builds one program per target.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tests/fuzz/targets.h"

namespace {

ballast::fuzz::Target Find() {
  for (const auto& target : ballast::fuzz::AllTargets()) {
    if (std::strcmp(target.name, BALLAST_FUZZ_TARGET) == 0) return target.run;
  }
  __builtin_trap();  // a target missing from AllTargets: a build error in all but name
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ballast::fuzz::Target run = Find();
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
