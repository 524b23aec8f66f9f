// ParseBoundedJson: the one way JSON written by someone else (a worker's
// report, an object from the API server, a file a user gave) becomes an
// nlohmann::json. The size is checked before a byte is parsed and the nesting
// depth while parsing, so a hostile text can neither exhaust the stack of
// code that walks the result recursively (dump, comparison, our readers) nor
// make the process allocate far more than the text's own size.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/common/status.h"

namespace ballast {

struct JsonLimits {
  size_t max_bytes = size_t{16} << 20;  // 16 MiB
  int max_depth = 64;                   // arrays and objects nested in each other
};

// The parsed value of `text`. Invalid, naming `what`, when the text is longer
// than limits.max_bytes, nests deeper than limits.max_depth, or is not JSON
// (with the byte offset where parsing stopped). Never throws.
StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view what,
                                          const JsonLimits& limits = {});

}  // namespace ballast
