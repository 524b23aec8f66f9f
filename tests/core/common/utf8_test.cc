// Tests of the project's one rule for text that is not UTF-8
// (core/common/utf8.h): what is valid, what each ill-formed sequence becomes,
// cutting between characters, and JSON that never throws type_error.316.
#include "core/common/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ballast {
namespace {

const std::string kFffd(kReplacementCharacter);

struct Utf8Case {
  std::string text;
  std::string valid;  // ToValidUtf8(text)
};

TEST(Utf8Test, EachIllFormedSequenceBecomesOneReplacementCharacter) {
  const std::vector<Utf8Case> cases = {
      {"", ""},
      {"plain ASCII", "plain ASCII"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"ACME board \xe9", "ACME board " + kFffd},           // Latin-1
      {"\xe9t\xe9", kFffd + "t" + kFffd},                   // Latin-1 in the middle
      {"\x80", kFffd},                                      // a lone continuation byte
      {"\xc0\xaf", kFffd + kFffd},                          // an overlong '/'
      {"\xe0\x80\xaf", kFffd + kFffd + kFffd},              // an overlong '/', 3 bytes
      {"\xed\xa0\x80", kFffd + kFffd + kFffd},              // a surrogate
      {"\xf4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\xe2\x82", kFffd},                                  // a cut character
      {"\xe2\x82x", kFffd + "x"},                           // ... followed by more
      {"\xf0\x9f\x98", kFffd},                              // a cut 4-byte character
      {"\xff\xfe", kFffd + kFffd},                          // never in UTF-8
      {std::string("a\0b", 3), std::string("a\0b", 3)},     // NUL is valid UTF-8
  };
  for (const Utf8Case& c : cases) {
    SCOPED_TRACE(nlohmann::json(c.valid).dump());
    EXPECT_EQ(ToValidUtf8(c.text), c.valid);
    EXPECT_EQ(IsValidUtf8(c.text), c.text == c.valid);
    EXPECT_TRUE(IsValidUtf8(ToValidUtf8(c.text)));
  }
}

TEST(Utf8Test, PrefixNeverEndsInsideACharacter) {
  const std::string text = "ab\xc3\xa9\xe2\x82\xac";  // a b é €
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  EXPECT_EQ(Utf8Prefix(text, 2), "ab");
  EXPECT_EQ(Utf8Prefix(text, 3), "ab");  // not half of é
  EXPECT_EQ(Utf8Prefix(text, 4), "ab\xc3\xa9");
  EXPECT_EQ(Utf8Prefix(text, 6), "ab\xc3\xa9");  // not two thirds of €
  EXPECT_EQ(Utf8Prefix(text, 0), "");
  // An invalid byte counts as one character.
  EXPECT_EQ(Utf8Prefix("a\xe9\xe9z", 2), "a\xe9");
}

// Regression: `ballast-worker probe -o json` aborted with type_error.316 on
// a Latin-1 byte; DumpJson replaces it and the text parses back.
TEST(Utf8Test, DumpJsonOfLatin1NeverThrowsAndParsesBack) {
  nlohmann::ordered_json value;
  value["model"] = "ACME board \xe9";
  value["nested"] = {{"list", {"\xff", "ok"}}};
  EXPECT_THROW((void)value.dump(), nlohmann::json::type_error);
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(value, 2));
  const auto back = nlohmann::json::parse(text);
  EXPECT_EQ(back["model"], "ACME board " + kFffd);
  EXPECT_EQ(back["nested"]["list"][0], kFffd);
  EXPECT_EQ(DumpJson(nlohmann::json("ACME board \xe9")),
            nlohmann::json(ToValidUtf8("ACME board \xe9")).dump());
}

}  // namespace
}  // namespace ballast
