// fuzzy::ProfileFromJson (core/fuzzy/profile_json.h): a WeightProfile object
// from the API server means what the same YAML means to ParseProfile, and a
// refusal names the field's path.
#include "core/fuzzy/profile_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/operator/controller/yaml_to_json.h"

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
  EXPECT_EQ(from_json->name, from_yaml->name);
  EXPECT_EQ(from_json->rounding, from_yaml->rounding);
  EXPECT_EQ(from_json->scale, from_yaml->scale);
  ASSERT_EQ(from_json->criteria.size(), from_yaml->criteria.size());
  for (size_t i = 0; i < from_json->criteria.size(); ++i) {
    const Criterion& a = from_json->criteria[i];
    const Criterion& b = from_yaml->criteria[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.better, b.better);
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.optional, b.optional);
    EXPECT_EQ(a.default_level.value, b.default_level.value);
    EXPECT_EQ(a.default_level.term, b.default_level.term);
    ASSERT_EQ(a.terms.size(), b.terms.size());
    for (const auto& [value, level] : b.terms) {
      EXPECT_EQ(a.terms.at(value).value, level.value) << value;
      EXPECT_EQ(a.terms.at(value).term, level.term) << value;
    }
  }
}

TEST(ProfileJsonTest, RefusalsNameTheFieldPath) {
  const json shipped = testing::YamlToJson(ShippedProfileText());
  struct Case {
    const char* name;
    json patch;
    const char* message;
  };
  const Case cases[] = {
      {"kind", {{"kind", "Profile"}}, "kind: expected one of WeightProfile, got \"Profile\""},
      {"rounding",
       {{"spec", {{"rounding", "up"}}}},
       "spec.rounding: expected one of ceil, round, none, got \"up\""},
      {"scale term not a number",
       {{"spec", {{"scale", {{"norm", "five"}}}}}},
       "spec.scale.norm: expected a number > 0, got \"five\""},
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
            "spec.criteria[0].rank: expected a number > 0, got \"high\"");

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
  EXPECT_EQ(profile.status().message().rfind("spec.criteria[1].name: duplicate criterion name", 0),
            0u)
      << profile.status().message();
}

}  // namespace
}  // namespace ballast::fuzzy
