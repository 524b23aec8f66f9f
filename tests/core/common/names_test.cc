// Tests of the DNS-1123 name checks (core/common/names.h), table-driven, and
// of how a name is quoted in a message.
#include "core/common/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ballast {
namespace {

struct NameCase {
  std::string name;
  bool label_ok;
  bool subdomain_ok;
  std::string fault;  // the end of the message when refused as a subdomain (or label)
};

TEST(NamesTest, LabelsAndSubdomainsFollowKubernetes) {
  const std::vector<NameCase> cases = {
      {"pi4b-1", true, true, ""},
      {"a", true, true, ""},
      {"0", true, true, ""},
      {"primes-300000", true, true, ""},
      {"pi4b-1.rack-2", false, true, "'.' (character 7) is not allowed"},
      {std::string(63, 'a'), true, true, ""},
      {std::string(64, 'a'), false, true, "it has 64 characters, more than 63"},
      {std::string(253, 'a'), false, true, "it has 253 characters, more than 63"},
      {std::string(254, 'a'), false, false, "it has 254 characters, more than 253"},
      {"", false, false, "it is empty"},
      {"team/a", false, false, "'/' (character 5) is not allowed"},
      {"../x", false, false, "'.' (character 1) must sit between letters or digits"},
      {"Pi4B", false, false, "'P' (character 1) is not allowed"},
      {"-a", false, false, "'-' (character 1) must sit between letters or digits"},
      {"a-", false, false, "'-' (character 2) must sit between letters or digits"},
      {"a..b", false, false, "'.' (character 2) must sit between letters or digits"},
      {"a.-b", false, false, "'-' (character 3) must sit between letters or digits"},
      {"a b", false, false, "' ' (character 2) is not allowed"},
      {std::string("a\x01z", 3), false, false, "'\\x01' (character 2) is not allowed"},
      {"a\nb", false, false, "'\\x0a' (character 2) is not allowed"},
      {"caf\xc3\xa9", false, false, "'\\xc3' (character 4) is not allowed"},
  };
  for (const NameCase& c : cases) {
    SCOPED_TRACE(QuoteForMessage(c.name));
    const Status label = CheckName(c.name, NameKind::kDnsLabel);
    const Status subdomain = CheckName(c.name, NameKind::kDnsSubdomain);
    EXPECT_EQ(label.ok(), c.label_ok) << label.ToString();
    EXPECT_EQ(subdomain.ok(), c.subdomain_ok) << subdomain.ToString();
    const Status& refused = subdomain.ok() ? label : subdomain;
    if (refused.ok()) continue;
    EXPECT_EQ(refused.code(), StatusCode::kInvalid);
    const std::string& message = refused.message();
    ASSERT_GE(message.size(), c.fault.size()) << message;
    EXPECT_EQ(message.substr(message.size() - c.fault.size()), c.fault) << message;
    EXPECT_EQ(message.rfind("expected a DNS-1123 ", 0), 0u) << message;
  }
}

TEST(NamesTest, TheMessageSaysWhatWasExpectedAndGot) {
  EXPECT_EQ(CheckName("team/a", NameKind::kDnsLabel).message(),
            "expected a DNS-1123 label (1 to 63 characters: a-z, 0-9 and '-', starting and ending "
            "with a letter or digit), got 'team/a': '/' (character 5) is not allowed");
}

TEST(NamesTest, ALongOrBinaryNameIsQuotedShortAndPrintable) {
  EXPECT_EQ(QuoteForMessage("pi"), "'pi'");
  EXPECT_EQ(QuoteForMessage(std::string("\x1b[2J", 4)), "'\\x1b[2J'");
  EXPECT_EQ(QuoteForMessage("a\\b"), "'a\\x5cb'");
  const std::string quoted = QuoteForMessage(std::string(300, 'x'));
  EXPECT_EQ(quoted, "'" + std::string(80, 'x') + "'... (300 characters)");
}

// Regression: a node name of 252 or 253 characters is a valid subdomain,
// but "<node>.log" is over the 255 bytes of a file name; the log was never
// created. A long name gets a bounded name of its own.
TEST(NamesTest, FileNameOfALongNameIsBoundedAndStillItsOwn) {
  EXPECT_EQ(BoundedFileName("pi4b-1.rack-2", ".log"), "pi4b-1.rack-2.log");
  const std::string fits(251, 'a');  // 251 + 4 = 255
  EXPECT_EQ(BoundedFileName(fits, ".log"), fits + ".log");
  const std::string node = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                           std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_TRUE(CheckName(node, NameKind::kDnsSubdomain).ok());
  const std::string file = BoundedFileName(node, ".log");
  EXPECT_EQ(file.size(), kMaxFileNameBytes);
  EXPECT_EQ(file.substr(0, 234), node.substr(0, 234));  // 255 - "-" - 16 hex digits - ".log"
  EXPECT_EQ(file.substr(file.size() - 4), ".log");
  EXPECT_EQ(file.find('/'), std::string::npos);
  // The same name gives the same file; another with the same beginning another.
  EXPECT_EQ(BoundedFileName(node, ".log"), file);
  std::string other = node;
  other.back() = 'e';
  EXPECT_NE(BoundedFileName(other, ".log"), file);
  EXPECT_EQ(BoundedFileName(other, ".log").size(), kMaxFileNameBytes);
  EXPECT_LE(BoundedFileName(node, "", 200).size(), 200u);
}

}  // namespace
}  // namespace ballast
