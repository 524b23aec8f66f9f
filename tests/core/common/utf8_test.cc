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

// Regression (issue 61): a command's error or output with escape sequences
// reached the terminal, Events and conditions raw: "\x1b[2J\x1b[H" cleared
// the screen and a forged result line came up at its top.
TEST(Utf8Test, EscapeControlsWritesOutEveryControlButLineFeedAndTab) {
  EXPECT_EQ(EscapeControls("\x1b[2J\x1b[Hresult: 0 primes"), "\\x1b[2J\\x1b[Hresult: 0 primes");
  EXPECT_EQ(EscapeControls("done\rresult: forged"), "done\\x0dresult: forged");
  EXPECT_EQ(EscapeControls(std::string("a\0b\x7f\x07", 5)), "a\\x00b\\x7f\\x07");
  EXPECT_EQ(EscapeControls("line one\n\tline two"), "line one\n\tline two");
  // C1 controls (U+0080 to U+009F; CSI is U+009B) as characters; U+00A0 is not one.
  EXPECT_EQ(EscapeControls("\xc2\x9b"
                           "2J \xc2\x85 \xc2\xa0"),
            "\\u009b2J \\u0085 \xc2\xa0");
  // Invalid UTF-8 first becomes U+FFFD, so a lone 0x9b byte is no control.
  EXPECT_EQ(EscapeControls("\x9b"
                           "2J"),
            kFffd + "2J");
  EXPECT_EQ(EscapeControls("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");
  const std::string once = EscapeControls("\x1b]0;title\x07\xc2\x9b");
  EXPECT_EQ(EscapeControls(once), once) << "escaping twice changes nothing more";
}

}  // namespace
}  // namespace ballast
