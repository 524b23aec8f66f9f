// `kubectl ballast top`'s live view (cli/plugin/plugin_live.h): the
// coordinator's figures laid over the status's view, the proxy's answers read
// into figures or a one-line reason, where the coordinator's Service is found,
// and how the view says where its figures come from.
#include "cli/plugin/plugin_live.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/plugin/plugin_cluster.h"
#include "cli/plugin/plugin_top.h"
#include "core/protocol/messages.h"

namespace ballast::cli {
namespace {

using nlohmann::json;

// 2026-11-26T06:00:00Z
constexpr double kT0 = 1795672800;

json StatusRow(const std::string& name, double weight, uint64_t items = 0, double speed = 0) {
  return {{"name", name},
          {"weight", weight},
          {"score", 1},
          {"estimatedSpeed", speed},
          {"items", items}};
}

// A running job of 150000 items whose status has its three nodes and
// `completed` items done.
json RunningStatusJob(uint64_t completed, std::vector<json> rows) {
  json status = {{"phase", "Running"}, {"completedItems", completed},         {"items", 150000},
                 {"workers", 3},       {"startTime", "2026-11-26T06:00:00Z"}, {"nodes", rows}};
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", "primes"}, {"namespace", "jobs"}}},
          {"spec", {{"workload", {{"primes", {{"limit", 300000}}}}}, {"policy", "adaptive"}}},
          {"status", status}};
}

std::vector<json> SeedRows() {
  return {StatusRow("pi4b-0", 5), StatusRow("pi4b-1", 5), StatusRow("pi3b-0", 1)};
}

TopView StatusViewAt(const json& job, double now) {
  auto view = TopViewFromJob(job, now);
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  return *view;
}

// The coordinator's figures of that job 12 s in: 9000 items done.
protocol::JobProgress LiveProgressOfSeed() {
  protocol::JobProgress live;
  live.job = "jobs.primes";
  live.items = 150000;
  live.completed = 9000;
  live.total_cost = 150000;
  live.completed_cost = 9000;
  live.node_count = 3;
  live.reporting = 3;
  live.steals = 1;
  live.nodes = {{"pi4b-0", 5, 4000, 4000, 500, 500, 0},
                {"pi4b-1", 5, 4000, 4000, 500, 500, 1},
                {"pi3b-0", 1, 1000, 1000, 100, 100, 0}};
  return live;
}

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool HasLine(const std::string& text, const std::string& part) {
  for (const std::string& line : LinesOf(text)) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

// Issue 62: top moved only with the status, 0 % for the first 16-22 s.
TEST(WithLiveTest, LiveFiguresShowProgressBeforeTheStatusHasAny) {
  json job = RunningStatusJob(0, SeedRows());
  job["status"]["workers"] = 1;  // written when the first pod ran
  const TopView status = StatusViewAt(job, kT0 + 12);
  const std::string before = RenderTop(status, 100);
  EXPECT_TRUE(HasLine(before, "  0.0% of the work  0/150000 items")) << before;
  const TopView live = WithLive(status, LiveProgressOfSeed());
  EXPECT_EQ(live.source, TopSource::kLive);
  EXPECT_EQ(live.completed, 9000u);
  EXPECT_EQ(live.workers, 3);  // all three report
  EXPECT_FALSE(live.status_age_s.has_value());
  ASSERT_EQ(live.nodes.size(), 3u);
  EXPECT_EQ(live.nodes[0].weight, 5);  // the status's weight
  EXPECT_EQ(live.nodes[2].speed, 100);
  EXPECT_EQ(live.nodes[1].steals, 1u);
  const std::string after = RenderTop(live, 100);
  // 141000 items left at 1100 a second.
  EXPECT_TRUE(HasLine(after, "  6.0% of the work  9000/150000 items  live  ETA 2m08s")) << after;
  EXPECT_TRUE(HasLine(after, "pi3b-0")) << after;
  for (const std::string& line : LinesOf(after)) EXPECT_LE(line.size(), 100u) << line;
}

// A node's items of an earlier coordinator session are in the status's row
// only: the view never shows fewer than the status had.
TEST(WithLiveTest, NeverFewerItemsOrLessCostThanTheStatus) {
  const TopView status = StatusViewAt(
      RunningStatusJob(40000, {StatusRow("pi4b-0", 5, 30000, 480), StatusRow("pi4b-1", 5, 6000),
                               StatusRow("pi3b-0", 1, 4000)}),
      kT0 + 60);
  const TopView live = WithLive(status, LiveProgressOfSeed());
  EXPECT_EQ(live.completed, 40000u);
  EXPECT_DOUBLE_EQ(live.completed_cost, 40000);
  EXPECT_EQ(live.nodes[0].items, 30000u);
  EXPECT_DOUBLE_EQ(live.nodes[0].cost, 30000);
  EXPECT_EQ(live.nodes[0].speed, 500);  // the live speed
}

// Before the status has a row of every node, the shares are of one kind:
// every node's prior from the coordinator.
TEST(WithLiveTest, WithoutTheStatussRowsTheWeightsAreTheCoordinatorsPriors) {
  const TopView status = StatusViewAt(RunningStatusJob(0, {StatusRow("pi4b-0", 7)}), kT0 + 3);
  const TopView live = WithLive(status, LiveProgressOfSeed());
  ASSERT_EQ(live.nodes.size(), 3u);
  EXPECT_EQ(live.nodes[0].weight, 5);
  EXPECT_EQ(live.nodes[2].weight, 1);
}

TEST(WithLiveTest, TheCostModelIsTheCoordinatorsAndAFinishedJobIsTheStatuss) {
  protocol::JobProgress progress = LiveProgressOfSeed();
  progress.cost_model = protocol::ProgressCostModel{0.5, 20, 0.001, 0.0005};
  const TopView live = WithLive(StatusViewAt(RunningStatusJob(0, SeedRows()), kT0 + 12), progress);
  ASSERT_TRUE(live.cost_model.has_value());
  EXPECT_TRUE(live.cost_model->learned);
  EXPECT_EQ(live.cost_model->samples, 20u);
  EXPECT_TRUE(HasLine(RenderTop(live, 100), "cost model: an item takes")) << RenderTop(live, 100);

  json done = RunningStatusJob(150000, SeedRows());
  done["status"]["phase"] = "Succeeded";
  const TopView finished = StatusViewAt(done, kT0 + 200);
  const TopView same = WithLive(finished, progress);
  EXPECT_EQ(same.source, TopSource::kStatus);
  EXPECT_EQ(same.completed, 150000u);
}

TEST(LiveNoteTest, TheReasonIsOneLineWhileTheJobRunsAndGoneOnceItIsDone) {
  TopView status = StatusViewAt(RunningStatusJob(0, SeedRows()), kT0 + 12);
  status.live_note = "RBAC refuses the proxy (get services/proxy): services \"c\" is forbidden: " +
                     std::string(300, 'x');
  const std::string text = RenderTop(status, 80);
  EXPECT_TRUE(HasLine(text, "from the status: RBAC refuses the proxy")) << text;
  for (const std::string& line : LinesOf(text)) EXPECT_LE(line.size(), 80u) << line;
  status.phase = api::JobPhase::kSucceeded;
  EXPECT_FALSE(HasLine(RenderTop(status, 80), "from the status")) << RenderTop(status, 80);
}

// The ETA never moves later without saying why: here because the figures
// came from the coordinator after the status.
TEST(LiveNoteTest, ALaterFinishSaysTheSourceChanged) {
  json job =
      RunningStatusJob(9000, {StatusRow("pi4b-0", 5, 4000, 800), StatusRow("pi4b-1", 5, 4000, 800),
                              StatusRow("pi3b-0", 1, 1000, 200)});
  TopTrail trail;
  const std::string first = RenderTop(StatusViewAt(job, kT0 + 12), 130, &trail);
  EXPECT_TRUE(HasLine(first, "ETA 1m18s")) << first;  // 141000 at 1800 a second
  const std::string second =
      RenderTop(WithLive(StatusViewAt(job, kT0 + 13), LiveProgressOfSeed()), 130, &trail);
  EXPECT_TRUE(HasLine(second, "ETA 2m08s (later by 51s: live now, the status before)")) << second;
}

TEST(LiveAnswerTest, TheCoordinatorsFiguresRead) {
  const protocol::JobProgress sent = LiveProgressOfSeed();
  auto read = ReadLiveAnswer(200, protocol::ToJson(sent).dump());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, sent);
  auto garbage = ReadLiveAnswer(200, "<html>a login page</html>");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(garbage.status().message().rfind("the coordinator's answer does not read: ", 0), 0u)
      << garbage.status().message();
}

// The API server's own refusals are Status objects; the coordinator's are its
// refusal bodies (protocol::RefusalJson). Bodies as each sends them.
TEST(LiveAnswerTest, EachRefusalIsOneLineSayingWhy) {
  const auto reason = [](int code, const json& body) {
    auto read = ReadLiveAnswer(code, body.dump());
    EXPECT_FALSE(read.ok());
    return read.status();
  };
  const json forbidden = {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"status", "Failure"},
      {"message",
       "services \"coordinator\" is forbidden: User \"system:serviceaccount:jobs:watcher\" cannot "
       "get resource \"services/proxy\" in API group \"\" in the namespace \"ballast\""},
      {"reason", "Forbidden"},
      {"code", 403}};
  const Status rbac = reason(403, forbidden);
  EXPECT_EQ(rbac.code(), StatusCode::kUnavailable);
  EXPECT_EQ(rbac.message().rfind("RBAC refuses the proxy (get services/proxy): services", 0), 0u)
      << rbac.message();
  const json no_endpoints = {{"kind", "Status"},
                             {"message", "no endpoints available for service \"coordinator\""},
                             {"reason", "ServiceUnavailable"},
                             {"code", 503}};
  EXPECT_EQ(reason(503, no_endpoints).message(),
            "the coordinator is not reachable: no endpoints available for service "
            "\"coordinator\"");
  const json no_service = {{"kind", "Status"},
                           {"message", "services \"coordinator\" not found"},
                           {"reason", "NotFound"},
                           {"code", 404}};
  EXPECT_EQ(reason(404, no_service).code(), StatusCode::kNotFound);
  const Status not_hosted =
      reason(404, protocol::RefusalJson(protocol::kReasonUnknownJob, "no job 'jobs.primes'"));
  EXPECT_EQ(not_hosted.code(), StatusCode::kNotFound);
  EXPECT_EQ(not_hosted.message(),
            "the coordinator does not host the job now (not registered yet, suspended, or done)");
  // A coordinator without the route asks every /v1/jobs request for the token.
  EXPECT_EQ(reason(401, protocol::RefusalJson("no_token", "missing token")).message(),
            "the coordinator has no live view (an operator older than this plugin)");
  EXPECT_EQ(reason(500, protocol::RefusalJson("x", "broken")).message(),
            "the coordinator: HTTP 500: broken");
}

TEST(LiveAddressTest, TheFirstAddressThatNamesAServiceIsProxied) {
  auto path = LiveProgressPath(
      {{"http://10.0.0.5:8080", "the job's worker pods' BALLAST_COORDINATOR"},
       {"http://ballast-coordinator.ballast-system.svc:8080", "the operator's pod"}},
      "jobs", "primes");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(*path,
            "/api/v1/namespaces/ballast-system/services/http:ballast-coordinator:8080/proxy/v1/"
            "jobs/jobs.primes/progress");
  auto none = LiveProgressPath({{"http://127.0.0.1:8080", "the job's worker pods"}}, "jobs", "p");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(none.status().message(),
            "http://127.0.0.1:8080 (the job's worker pods) is not a Service's, which the API "
            "server could proxy to");
  EXPECT_EQ(LiveProgressPath({}, "jobs", "p").status().code(), StatusCode::kNotFound);
}

TEST(LiveAddressTest, WorkerPodsAndTheOperatorsArgumentsSayWhereTheCoordinatorIs) {
  const json pod = {
      {"spec",
       {{"initContainers", {{{"name", "bundle"}}}},
        {"containers",
         {{{"name", "worker"},
           {"env",
            {{{"name", "BALLAST_JOB"}, {"value", "jobs.primes"}},
             {{"name", "BALLAST_COORDINATOR"}, {"value", "http://c.ballast.svc:8080"}}}}}}}}}};
  EXPECT_EQ(CoordinatorUrlOfPod(pod), "http://c.ballast.svc:8080");
  EXPECT_EQ(CoordinatorUrlOfPod(json{{"spec", {{"containers", "garbage"}}}}), std::nullopt);
  EXPECT_EQ(CoordinatorUrlOfArgs({"operator", "--coordinator-url=http://a.b:1", "--x"}),
            "http://a.b:1");
  EXPECT_EQ(CoordinatorUrlOfArgs({"--coordinator-url", "http://a.b:2"}), "http://a.b:2");
  EXPECT_EQ(CoordinatorUrlOfArgs({"--coordinator-listen", "0.0.0.0:8080"}), std::nullopt);
}

TEST(LiveRetryTest, ThePauseDoublesFromFiveSecondsToAMinute) {
  std::vector<double> pauses;
  for (int failures = 1; failures <= 7; ++failures) pauses.push_back(LiveRetrySeconds(failures));
  EXPECT_EQ(pauses, (std::vector<double>{5, 10, 20, 40, 60, 60, 60}));
}

}  // namespace
}  // namespace ballast::cli
