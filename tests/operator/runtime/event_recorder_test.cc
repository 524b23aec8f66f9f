// The Event the operator's recorder posts (operator/runtime/event_recorder.h),
// built without a cluster: what `kubectl describe` and `kubectl get events`
// print of it.
#include "operator/runtime/event_recorder.h"

#include <gtest/gtest.h>

namespace ballast::runtime {
namespace {

using nlohmann::json;

const json kJob = {{"apiVersion", "ballast.io/v1alpha1"},
                   {"kind", "WeightedJob"},
                   {"metadata", {{"name", "convert"}, {"namespace", "ns"}, {"uid", "u"}}}};

TEST(EventObjectTest, NamesTheObjectAndItsNamespace) {
  const json event =
      EventObject(kJob, true, "ItemsFailed", "1 item failed", "convert.1a", "t", "operator-0");
  EXPECT_EQ(event["metadata"]["namespace"], "ns");
  EXPECT_EQ(event["involvedObject"]["name"], "convert");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["reason"], "ItemsFailed");
  EXPECT_EQ(event["message"], "1 item failed");
  EXPECT_EQ(event["reportingInstance"], "operator-0");
  const json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "pi5-a"}}}};
  EXPECT_EQ(EventObject(node, false, "R", "m", "n", "t", "i")["metadata"]["namespace"], "default");
}

// Regression (issue 61): a failed item's output with escape sequences went
// into an Event's message raw; `kubectl get events` printed it to a terminal,
// which cleared its screen.
TEST(EventObjectTest, AMessageHasItsControlCharactersWrittenOut) {
  const json event = EventObject(
      kJob, true, "ItemsFailed",
      "1 item failed all attempts so far: item 7 (exit code 1; it wrote \"\x1b[2J\x1b[Hdone\")",
      "convert.1a", "t", "i");
  EXPECT_EQ(event["message"],
            "1 item failed all attempts so far: item 7 (exit code 1; it wrote "
            "\"\\x1b[2J\\x1b[Hdone\")");
}

// The object is the API server's: a field absent or of another type is left
// empty in the Event, and nothing throws.
TEST(EventObjectTest, FieldsOfAnotherTypeLeaveTheirPlaceEmpty) {
  const json odd = {{"apiVersion", 1}, {"metadata", {{"name", 5}, {"namespace", json::array()}}}};
  const json event = EventObject(odd, false, "R", "m", "n", "t", "i");
  EXPECT_EQ(event["metadata"]["namespace"], "default");
  EXPECT_EQ(event["involvedObject"]["name"], "");
  EXPECT_EQ(event["involvedObject"]["apiVersion"], "");
  EXPECT_EQ(event["involvedObject"]["kind"], "");
  const json bare = EventObject(json::object(), false, "R", "m", "n", "t", "i");
  EXPECT_EQ(bare["involvedObject"]["uid"], "");
  EXPECT_EQ(EventObject(json("x"), false, "R", "m", "n", "t", "i")["metadata"]["namespace"],
            "default");
}

}  // namespace
}  // namespace ballast::runtime
