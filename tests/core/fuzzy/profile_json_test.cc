// fuzzy::ProfileFromJson (core/fuzzy/profile_json.h): a WeightProfile object
// from the API server means what the same YAML means to ParseProfile, and a
// refusal names the field's path.
#include "core/fuzzy/profile_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/yaml_to_json.h"

namespace ballast::fuzzy {
namespace {

using nlohmann::json;

std::string ShippedProfileText() {
  std::ifstream in(std::string(BALLAST_SOURCE_DIR) + "/crds/profiles/raspberry-pi.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProfileJsonTest, TheShippedProfileReadsAsFromYaml) {
  const std::string text = ShippedProfileText();
  auto from_yaml = ParseProfile(text, "raspberry-pi.yaml");
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.status().ToString();
  auto from_json = ProfileFromJson(testing::YamlToJson(text));
  ASSERT_TRUE(from_json.ok()) << from_json.status().ToString();
  EXPECT_TRUE(*from_json == *from_yaml);
  EXPECT_EQ(from_json->name, "raspberry-pi");
  EXPECT_EQ(from_json->criteria.size(), 7u);
}

TEST(ProfileJsonTest, RefusalsNameTheFieldPath) {
  const json shipped = testing::YamlToJson(ShippedProfileText());
  struct Case {
    const char* name;
    json patch;
    const char* message;
  };
  const Case cases[] = {
      {"kind", {{"kind", "Profile"}}, "kind: expected WeightProfile, got \"Profile\""},
      {"apiVersion missing", {{"apiVersion", nullptr}}, "apiVersion: missing"},
      {"unknown top-level key",
       {{"spek", json::object()}},
       "spek: unknown field \"spek\" (allowed: apiVersion, kind, metadata, spec, status)"},
      {"name missing", {{"metadata", {{"name", nullptr}}}}, "metadata.name: missing"},
      {"rounding",
       {{"spec", {{"rounding", "up"}}}},
       "spec.rounding: expected one of ceil, round, none, got \"up\""},
      {"scale term not a number",
       {{"spec", {{"scale", {{"norm", "five"}}}}}},
       "spec.scale.norm: expected a number in [1e-06, 1e+12], got \"five\""},
      {"scale number too large",
       {{"spec", {{"scale", {{"norm", 1e300}}}}}},
       "spec.scale.norm: expected a number in [1e-06, 1e+12], got 1e+300"},
      {"criteria empty",
       {{"spec", {{"criteria", json::array()}}}},
       "spec.criteria: expected a non-empty list of criteria, got []"},
      {"unknown spec key", {{"spec", {{"weights", 1}}}}, "spec.weights: unknown field \"weights\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json object = shipped;
    object.merge_patch(c.patch);
    auto profile = ProfileFromJson(object);
    ASSERT_FALSE(profile.ok());
    EXPECT_EQ(profile.status().message().substr(0, std::string(c.message).size()), c.message)
        << profile.status().message();
  }
}

TEST(ProfileJsonTest, ACriterionIsCheckedFieldByField) {
  json object = testing::YamlToJson(ShippedProfileText());
  json& first = object["spec"]["criteria"][0];
  first["rank"] = "high";
  auto profile = ProfileFromJson(object);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().message(),
            "spec.criteria[0].rank: expected a number > 0 and <= 100, got \"high\"");

  first["rank"] = 1;
  first["default"] = "enormous";
  profile = ProfileFromJson(object);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().message().rfind("spec.criteria[0].default: expected a term of the "
                                             "scale (",
                                             0),
            0u)
      << profile.status().message();

  first["default"] = "2.5";  // a number written as a string counts, as in YAML
  profile = ProfileFromJson(object);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->criteria[0].default_level.value, 2.5);

  object["spec"]["criteria"][1]["name"] = first["name"];
  profile = ProfileFromJson(object);
  ASSERT_FALSE(profile.ok());
  // From the API server there is no line: the first one is named by its path.
  EXPECT_EQ(profile.status().message(),
            "spec.criteria[1].name: duplicate criterion name \"cpu\" (first at "
            "spec.criteria[0].name)");
}

// The server adds metadata and, with the status subresource, a status; both
// are the server's, not the profile's.
TEST(ProfileJsonTest, WhatTheServerAddsIsIgnored) {
  json object = testing::YamlToJson(ShippedProfileText());
  auto plain = ProfileFromJson(object);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  object["metadata"]["uid"] = "0b6f3c4e-0000-0000-0000-000000000001";
  object["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
  object["status"] = {{"conditions", json::array()}};
  auto served = ProfileFromJson(object);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_TRUE(*served == *plain);
}

}  // namespace
}  // namespace ballast::fuzzy
