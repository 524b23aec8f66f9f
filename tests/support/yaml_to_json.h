// YamlToJson: a YAML text (a manifest in tests/operator/crds/testdata, an
// example) as the JSON the API server would hand the operator for it, read by
// the project's own reader (config::ParseYaml), so the tests compare a file
// read as `ballast run` reads it with the same file as the operator gets it.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/config/document.h"

namespace ballast::testing {

// The tree of `text`; a test failure and null when it does not read.
inline nlohmann::json YamlToJson(const std::string& text) {
  auto document = config::ParseYaml(text, "manifest.yaml");
  EXPECT_TRUE(document.ok()) << document.status().ToString();
  return document.ok() ? document->tree : nlohmann::json();
}

}  // namespace ballast::testing
