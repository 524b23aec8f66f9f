// FreePort for the tests: the test bed's (testbed/free_port.h).
#pragma once

#include "testbed/free_port.h"

namespace ballast::testing_support {

using testing::FreePort;

}  // namespace ballast::testing_support
