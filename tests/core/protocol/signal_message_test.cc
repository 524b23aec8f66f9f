// The signal message: what a held signal poll answers, and what a worker
// accepts from it (the coordinator is a network peer: anything may come).
#include <gtest/gtest.h>

#include "core/protocol/messages.h"

namespace ballast::protocol {
namespace {

TEST(SignalMessageTest, ALeaseGoesOutAndComesBackAsItWas) {
  SignalMessage signal;
  signal.signalled = true;
  signal.lease = balance::Range{100, 180};
  const nlohmann::json json = ToJson(signal);
  EXPECT_EQ(json.dump(), R"({"lease":{"begin":100,"end":180},"signalled":true})");
  auto parsed = ParseSignal(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->signalled);
  EXPECT_FALSE(parsed->done);
  ASSERT_TRUE(parsed->lease.has_value());
  EXPECT_EQ(*parsed->lease, (balance::Range{100, 180}));
}

TEST(SignalMessageTest, WithoutALeaseItIsTheSignalOfBefore) {
  // What coordinators without leases in signals send, and a timed-out poll.
  auto done = ParseSignal(nlohmann::json{{"signalled", true}, {"done", true}});
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->done);
  EXPECT_FALSE(done->lease.has_value());
  auto timed_out = ParseSignal(nlohmann::json{{"signalled", false}, {"lease", nullptr}});
  ASSERT_TRUE(timed_out.ok());
  EXPECT_FALSE(timed_out->signalled);
  EXPECT_FALSE(timed_out->lease.has_value());
}

TEST(SignalMessageTest, AMalformedSignalNamesItsField) {
  const auto error = [](std::string_view text) {
    auto json = ParseJsonText(text);
    EXPECT_TRUE(json.ok()) << text;
    return ParseSignal(*json).status().message();
  };
  EXPECT_NE(error("[]").find("signal"), std::string::npos);
  EXPECT_NE(error(R"({"signalled": "yes"})").find("signalled"), std::string::npos);
  EXPECT_NE(error(R"({"signalled": true, "lease": 5})").find("lease"), std::string::npos);
  EXPECT_NE(error(R"({"signalled": true, "lease": {"begin": 9, "end": 3}})").find("lease.end"),
            std::string::npos);
  EXPECT_NE(error(R"({"signalled": true, "lease": {"begin": -1, "end": 3}})").find("lease.begin"),
            std::string::npos);
  EXPECT_NE(error(R"({"signalled": true, "lease": {"end": 3}})").find("lease.begin"),
            std::string::npos);
}

}  // namespace
}  // namespace ballast::protocol
