// The coordinator's HTTP service on loopback: tokens, malformed bodies, long
// polls and metrics, with a real HTTP client.
#include "coordinator/server.h"

#include <cpprest/http_client.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/protocol/progress.h"
#include "tests/support/primes_workload.h"
#include "worker/kernels/kernel.h"

namespace ballast::coordinator {
namespace {

using web::http::methods;
using web::http::status_code;

JobConfig Job(const std::string& id, const std::string& token, std::vector<std::string> workers) {
  JobConfig config;
  config.id = id;
  config.token = token;
  config.workload = testing::PrimesWorkload(20000);
  config.policy = {balance::EqualOptions{}, ""};
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  return config;
}

// A completion of `lease` with its true result, as a worker would send it.
nlohmann::json Completion(const nlohmann::json& lease) {
  auto kernel = kernels::MakeKernel(Job("one", "", {}).workload);
  EXPECT_TRUE(kernel.ok());
  const balance::Range range{lease["begin"], lease["end"]};
  return {{"range", lease}, {"result", (*kernel)->Compute(range)->ToJson()}};
}

struct Response {
  status_code code = 0;
  std::string body;
};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.wait_timeout_s = 1;
    options.on_finished = [this](const std::string& job) {
      std::lock_guard lock(finished_mutex_);
      finished_.push_back(job);
    };
    auto server = Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->AddJob(Job("one", "token-one", {"a", "b"})).ok());
    ASSERT_TRUE(server_->AddJob(Job("two", "token-two", {"a"})).ok());
  }

  Response Request(const web::http::method& method, const std::string& path,
                   const std::string& token, const std::string& body = "") {
    web::http::client::http_client client(server_->url());
    web::http::http_request request(method);
    request.set_request_uri(path);
    if (!token.empty()) request.headers().add("Authorization", "Bearer " + token);
    if (!body.empty()) request.set_body(body, "application/json");
    auto response = client.request(request).get();
    return {response.status_code(), response.extract_string(true).get()};
  }

  Response Report(const std::string& job, const std::string& token, const nlohmann::json& body) {
    return Request(methods::POST, "/v1/jobs/" + job + "/report", token, body.dump());
  }

  // Both workers of job "one" ask; b hands in its share while a still
  // computes. `equal` has nothing more for b, so its answer is held; after
  // 300 ms a is declared lost, its lease returns to the pool, and b's held
  // request is answered with it.
  struct HeldHandIn {
    nlohmann::json a;  // the replies to the two first asks
    nlohmann::json b;
    Response answer;  // b's hand-in's
    double held_s = 0;
  };
  HeldHandIn HandInWhileTheOtherComputes() {
    HeldHandIn run;
    run.a =
        nlohmann::json::parse(Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body);
    run.b =
        nlohmann::json::parse(Report("one", "token-one", {{"worker", "b"}, {"idle", true}}).body);
    EXPECT_EQ(run.a["kind"], "lease");
    EXPECT_EQ(run.b["kind"], "lease");
    const auto start = std::chrono::steady_clock::now();
    auto held = std::async(std::launch::async, [&] {
      return Report("one", "token-one",
                    {{"worker", "b"}, {"idle", true}, {"completed", {Completion(run.b["lease"])}}});
    });
    EXPECT_EQ(held.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
    EXPECT_TRUE(server_->WorkerLost("one", "a").ok());
    run.answer = held.get();
    run.held_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return run;
  }

  std::vector<std::string> Finished() {
    std::lock_guard lock(finished_mutex_);
    return finished_;
  }

  std::unique_ptr<Server> server_;
  std::mutex finished_mutex_;
  std::vector<std::string> finished_;  // on_finished's calls, in order
};

TEST_F(ServerTest, ServesTheJobToItsWorkers) {
  const Response response = Request(methods::GET, "/v1/jobs/one", "token-one");
  ASSERT_EQ(response.code, 200) << response.body;
  auto description = protocol::ParseJobDescription(nlohmann::json::parse(response.body));
  ASSERT_TRUE(description.ok());
  EXPECT_EQ(description->job, "one");
  EXPECT_EQ(description->workload.primes.limit, 20000u);
}

// Job "one" runs on nodes a and b, job "two" on a: while two's worker holds
// a lease, one's worker on a shares its node; b never does.
TEST_F(ServerTest, SharedNodesNamesTheWorkersBesideAnotherJobsLeaseHolder) {
  EXPECT_TRUE(server_->SharedNodes("one").empty());
  const auto two =
      nlohmann::json::parse(Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(two["kind"], "lease");
  EXPECT_EQ(server_->SharedNodes("one"), std::set<std::string>{"a"});
  // Two's worker a does not hold a lease of job one's: nothing shares it yet.
  EXPECT_TRUE(server_->SharedNodes("two").empty());
  ASSERT_EQ(nlohmann::json::parse(
                Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body)["kind"],
            "lease");
  EXPECT_EQ(server_->SharedNodes("two"), std::set<std::string>{"a"});
  // Once two's worker is lost, its lease goes with it.
  ASSERT_TRUE(server_->WorkerLost("two", "a").ok());
  EXPECT_TRUE(server_->SharedNodes("one").empty());
  EXPECT_TRUE(server_->SharedNodes("unknown").empty());
}

// SampleSharing hands what SharedNodes finds to the job's session, which adds
// up the time (JobSessionTest has the arithmetic).
TEST_F(ServerTest, SampleSharingCountsTheTimeANodeWasShared) {
  ASSERT_EQ(nlohmann::json::parse(
                Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body)["kind"],
            "lease");
  server_->SampleSharing("one");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server_->SampleSharing("one");
  server_->SampleSharing("unknown");  // nothing to sample
  const auto view = server_->View("one");
  ASSERT_TRUE(view);
  EXPECT_GE(view->sharing_sampled_s, 0.02);
  for (const auto& worker : view->workers) {
    EXPECT_DOUBLE_EQ(worker.shared_s, worker.name == "a" ? view->sharing_sampled_s : 0)
        << worker.name;
  }
}

TEST_F(ServerTest, WithoutATokenIs401AndChangesNothing) {
  const nlohmann::json idle = {{"worker", "a"}, {"idle", true}};
  EXPECT_EQ(Report("one", "", idle).code, 401);
  EXPECT_EQ(Request(methods::GET, "/v1/jobs/one", "").code, 401);
  EXPECT_EQ(server_->View("one")->workers[0].reports, 0u);
}

TEST_F(ServerTest, AnotherJobsTokenIs403AndChangesNothing) {
  const nlohmann::json idle = {{"worker", "a"}, {"idle", true}};
  const Response response = Report("one", "token-two", idle);
  EXPECT_EQ(response.code, 403);
  EXPECT_NE(response.body.find("not this job's"), std::string::npos);
  EXPECT_EQ(server_->View("one")->workers[0].reports, 0u);
  EXPECT_EQ(server_->View("one")->messages, 0u);
}

TEST_F(ServerTest, MalformedBodiesAre400WithAMessage) {
  const Response garbage = Request(methods::POST, "/v1/jobs/one/report", "token-one", "{not json");
  EXPECT_EQ(garbage.code, 400);
  EXPECT_NE(garbage.body.find("not JSON"), std::string::npos);
  const Response wrong_type = Report("one", "token-one", {{"worker", "a"}, {"position", -3}});
  EXPECT_EQ(wrong_type.code, 400);
  EXPECT_NE(wrong_type.body.find("position"), std::string::npos);
  const Response bad_range = Report(
      "one", "token-one",
      {{"worker", "a"}, {"completed", {{{"range", {{"begin", 9}, {"end", 3}}}, {"result", {}}}}}});
  EXPECT_EQ(bad_range.code, 400);
  EXPECT_NE(bad_range.body.find("completed[0].range.end"), std::string::npos);
  EXPECT_EQ(Report("one", "token-one", {{"worker", "nobody"}, {"idle", true}}).code, 404);
  EXPECT_EQ(server_->View("one")->messages, 0u);
}

TEST_F(ServerTest, RefusesRangesNeverLeasedAndCountsThemInMetrics) {
  const auto lease =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(lease["kind"], "lease");
  const nlohmann::json stolen = {
      {"worker", "b"}, {"idle", true}, {"completed", {Completion(lease["lease"])}}};
  const Response refused = Report("one", "token-one", stolen);
  EXPECT_EQ(refused.code, 400);
  EXPECT_NE(refused.body.find("never leased"), std::string::npos);
  EXPECT_EQ(server_->View("one")->completed, 0u);
  const Response metrics = Request(methods::GET, "/metrics", "");
  EXPECT_NE(metrics.body.find("ballast_coordinator_refused_total{reason=\"invalid_report\"} 1"),
            std::string::npos)
      << metrics.body;
}

TEST_F(ServerTest, AWaitIsHeldUntilWorkReturns) {
  const HeldHandIn run = HandInWhileTheOtherComputes();
  EXPECT_GE(run.held_s, 0.3) << "answered before a was lost";
  ASSERT_EQ(run.answer.code, 200);
  const auto reply = nlohmann::json::parse(run.answer.body);
  EXPECT_EQ(reply["kind"], "lease");
  EXPECT_EQ(reply["lease"]["begin"], run.a["lease"]["begin"]);
}

// Collects what the process logs at debug level while it lives, then puts
// the previous default logger back.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    sink->set_pattern("%v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() {
    spdlog::default_logger()->flush();
    return text_.str();
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

// With -v, the coordinator logs each report with its answer, also one held
// and answered later: the timeline docs/local-mode.md reads.
TEST_F(ServerTest, DebugLoggingShowsEachReportAndItsAnswer) {
  CapturedLog log;
  const HeldHandIn run = HandInWhileTheOtherComputes();
  ASSERT_EQ(run.answer.code, 200);
  const nlohmann::json& a = run.a;
  const nlohmann::json& b = run.b;
  const std::string text = log.text();
  const auto range = [](const nlohmann::json& lease) {
    return balance::Range{lease["begin"], lease["end"]}.ToString();
  };
  const std::string a_lease = "reply=lease lease=" + range(a["lease"]);
  EXPECT_NE(text.find("report job=one worker=a at_s="), std::string::npos) << text;
  EXPECT_NE(text.find("idle=true position=0 calc_s=0.0000 completed=\"\" " + a_lease),
            std::string::npos)
      << text;
  // b's hand-in, held, then answered with a's lease when a was lost: a line
  // for each answer.
  EXPECT_NE(text.find("worker=b at_s="), std::string::npos) << text;
  EXPECT_NE(text.find("completed=\"" + range(b["lease"]) + "\" reply=wait"), std::string::npos)
      << text;
  EXPECT_NE(text.find(a_lease), text.rfind(a_lease))
      << "a's first lease, and b's answer after the wake: " << text;
}

TEST_F(ServerTest, AHeldWaitTimesOutWithWait) {
  const auto a =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body);
  const auto b =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "b"}, {"idle", true}}).body);
  const auto start = std::chrono::steady_clock::now();
  const Response answer =
      Report("one", "token-one",
             {{"worker", "b"}, {"idle", true}, {"completed", {Completion(b["lease"])}}});
  const double held_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(nlohmann::json::parse(answer.body)["kind"], "wait");
  EXPECT_GE(held_s, 0.9);  // the server's wait_timeout_s is 1
}

// ... and each signal with the answer its poll got: b was told to wait (its
// held hand-in timed out), polls for a signal, and is signalled when a's
// lease returns to the pool.
TEST_F(ServerTest, DebugLoggingShowsEachSignalAndItsAnswer) {
  CapturedLog log;
  Report("one", "token-one", {{"worker", "a"}, {"idle", true}});
  const auto b =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "b"}, {"idle", true}}).body);
  const auto told = nlohmann::json::parse(
      Report("one", "token-one",
             {{"worker", "b"}, {"idle", true}, {"completed", {Completion(b["lease"])}}})
          .body);
  ASSERT_EQ(told["kind"], "wait");  // after the server's wait_timeout_s (1 s)
  auto poll = std::async(std::launch::async, [&] {
    return Request(methods::GET, "/v1/jobs/one/signal?worker=b", "token-one");
  });
  ASSERT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  ASSERT_TRUE(server_->WorkerLost("one", "a").ok());
  const Response signal = poll.get();
  ASSERT_EQ(signal.code, 200);
  EXPECT_EQ(nlohmann::json::parse(signal.body)["signalled"], true);
  const std::string text = log.text();
  EXPECT_NE(text.find("signal job=one worker=b at_s="), std::string::npos) << text;
  EXPECT_NE(text.find("answer=" + signal.body), std::string::npos) << text;
}

TEST_F(ServerTest, SignalPollsOfAFinishedJobSayItIsDone) {
  const auto lease =
      nlohmann::json::parse(Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(lease["kind"], "lease");
  const auto done = nlohmann::json::parse(
      Report("two", "token-two",
             {{"worker", "a"}, {"idle", true}, {"completed", {Completion(lease["lease"])}}})
          .body);
  ASSERT_EQ(done["kind"], "done");
  const Response poll = Request(methods::GET, "/v1/jobs/two/signal?worker=a", "token-two");
  ASSERT_EQ(poll.code, 200);
  const auto answer = nlohmann::json::parse(poll.body);
  EXPECT_EQ(answer["signalled"], true);
  EXPECT_EQ(answer["done"], true);
}

TEST_F(ServerTest, OnFinishedIsCalledOnceWhenTheLastItemIsMerged) {
  const auto lease =
      nlohmann::json::parse(Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(lease["kind"], "lease");
  EXPECT_TRUE(Finished().empty());
  ASSERT_EQ(
      nlohmann::json::parse(
          Report("two", "token-two",
                 {{"worker", "a"}, {"idle", true}, {"completed", {Completion(lease["lease"])}}})
              .body)["kind"],
      "done");
  EXPECT_EQ(Finished(), std::vector<std::string>{"two"});
  // Later requests of the finished job announce nothing again.
  EXPECT_EQ(nlohmann::json::parse(
                Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body)["kind"],
            "done");
  EXPECT_EQ(Request(methods::GET, "/v1/jobs/two/signal?worker=a", "token-two").code, 200);
  EXPECT_EQ(Finished(), std::vector<std::string>{"two"});
}

// A restarted coordinator (the job removed and added again from its
// checkpoint, as a restarted operator does) answers a report of its earlier
// incarnation's lease 409 "stale", and the worker's fresh ask gets a lease.
TEST_F(ServerTest, AReportOfALeaseFromBeforeARestartIs409Stale) {
  const auto lease =
      nlohmann::json::parse(Report("two", "token-two", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(lease["kind"], "lease");
  ASSERT_TRUE(lease.contains("session"));
  const std::string old_session = lease["session"];
  JobConfig again = Job("two", "token-two", {"a"});
  again.resume = server_->TakeCheckpoint("two");
  server_->RemoveJob("two");
  ASSERT_TRUE(server_->AddJob(again).ok());

  const nlohmann::json stale = {{"worker", "a"},
                                {"idle", true},
                                {"session", old_session},
                                {"completed", {Completion(lease["lease"])}}};
  const Response refused = Report("two", "token-two", stale);
  EXPECT_EQ(refused.code, 409) << refused.body;
  const auto body = nlohmann::json::parse(refused.body);
  EXPECT_EQ(body["reason"], "stale");
  EXPECT_NE(body["error"].get<std::string>().find("drop your lease and ask again"),
            std::string::npos);
  EXPECT_EQ(server_->View("two")->completed, 0u);
  EXPECT_EQ(server_->View("two")->workers[0].reports, 0u);

  const auto fresh = nlohmann::json::parse(
      Report("two", "token-two", {{"worker", "a"}, {"idle", true}, {"session", old_session}}).body);
  EXPECT_EQ(fresh["kind"], "lease");
  EXPECT_NE(fresh["session"], old_session);
  const Response metrics = Request(methods::GET, "/metrics", "");
  EXPECT_NE(metrics.body.find("ballast_coordinator_refused_total{reason=\"stale\"} 1"),
            std::string::npos)
      << metrics.body;
}

TEST_F(ServerTest, AnUnknownJobIs404WithItsReason) {
  const Response response = Request(methods::GET, "/v1/jobs/nope", "token-one");
  EXPECT_EQ(response.code, 404);
  EXPECT_EQ(protocol::ParseRefusal(response.body).reason, protocol::kReasonUnknownJob);
  EXPECT_EQ(protocol::ParseRefusal(response.body).error, "no job 'nope'");
}

// The Server going away (its process stopping) does not end the job: held
// requests are told to retry, not "done".
TEST_F(ServerTest, HeldRequestsOfAStoppingServerAre503) {
  ServerOptions options;
  options.wait_timeout_s = 60;  // held until the server goes, however slow the machine
  auto server = Server::Start(options);
  ASSERT_TRUE(server.ok());
  server_ = std::move(server).value();
  ASSERT_TRUE(server_->AddJob(Job("one", "token-one", {"a", "b"})).ok());
  ASSERT_EQ(nlohmann::json::parse(
                Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body)["kind"],
            "lease");
  const auto b =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "b"}, {"idle", true}}).body);
  ASSERT_EQ(b["kind"], "lease");
  // b finishes while a computes: `equal` has nothing more for it, its answer is held.
  auto held = std::async(std::launch::async, [&] {
    return Report("one", "token-one",
                  {{"worker", "b"}, {"idle", true}, {"completed", {Completion(b["lease"])}}});
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->View("one")->workers[1].reports < 2 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(server_->View("one")->workers[1].reports, 2u);
  server_.reset();
  const Response answer = held.get();
  EXPECT_EQ(answer.code, 503) << answer.body;
  EXPECT_EQ(protocol::ParseRefusal(answer.body).reason, protocol::kReasonStopping);
}

// GET /v1/jobs/{job}/progress (core/protocol/progress.h): the job's
// progress now to anyone, without a token, as /metrics; a POST is no route,
// and the token is never in the answer.
TEST_F(ServerTest, ProgressIsReadWithoutATokenAndMovesWithTheReports) {
  const Response before = Request(methods::GET, "/v1/jobs/one/progress", "");
  ASSERT_EQ(before.code, 200) << before.body;
  auto progress = protocol::ParseJobProgress(nlohmann::json::parse(before.body));
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
  EXPECT_EQ(progress->job, "one");
  EXPECT_EQ(progress->completed, 0u);
  EXPECT_EQ(progress->items, server_->View("one")->items);
  EXPECT_EQ(progress->node_count, 2u);
  ASSERT_EQ(progress->nodes.size(), 2u);
  EXPECT_EQ(progress->nodes[0].name, "a");
  EXPECT_EQ(before.body.find("token-one"), std::string::npos);

  const auto lease =
      nlohmann::json::parse(Report("one", "token-one", {{"worker", "a"}, {"idle", true}}).body);
  ASSERT_EQ(lease["kind"], "lease");
  ASSERT_EQ(Report("one", "token-one",
                   {{"worker", "a"},
                    {"calcSeconds", 0.5},
                    {"position", lease["lease"]["end"]},
                    {"completed", {Completion(lease["lease"])}}})
                .code,
            200);
  const Response after = Request(methods::GET, "/v1/jobs/one/progress", "");
  ASSERT_EQ(after.code, 200) << after.body;
  progress = protocol::ParseJobProgress(nlohmann::json::parse(after.body));
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
  const uint64_t leased =
      lease["lease"]["end"].get<uint64_t>() - lease["lease"]["begin"].get<uint64_t>();
  EXPECT_EQ(progress->completed, leased);
  EXPECT_EQ(progress->nodes[0].items, leased);
  EXPECT_GT(progress->nodes[0].items_per_second, 0);
  EXPECT_EQ(progress->nodes[1].items, 0u);
  // A token, right or wrong, changes nothing; another method is no route.
  EXPECT_EQ(Request(methods::GET, "/v1/jobs/one/progress", "token-two").body, after.body);
  EXPECT_EQ(Request(methods::POST, "/v1/jobs/one/progress", "token-one").code, 404);
}

// A job the coordinator does not host answers 404 unknown_job, not counted
// as a refusal: a viewer asks again at every redraw.
TEST_F(ServerTest, ProgressOfAJobNotHostedIs404AndNotCounted) {
  const Response response = Request(methods::GET, "/v1/jobs/nope/progress", "");
  EXPECT_EQ(response.code, 404);
  EXPECT_EQ(protocol::ParseRefusal(response.body).reason, protocol::kReasonUnknownJob);
  const Response metrics = Request(methods::GET, "/metrics", "");
  EXPECT_EQ(metrics.body.find("reason=\"unknown_job\""), std::string::npos) << metrics.body;
}

TEST_F(ServerTest, HealthAndUnknownRoutes) {
  EXPECT_EQ(Request(methods::GET, "/healthz", "").code, 200);
  EXPECT_EQ(Request(methods::GET, "/v1/jobs/nope", "token-one").code, 404);
  EXPECT_EQ(Request(methods::GET, "/elsewhere", "").code, 404);
}

}  // namespace
}  // namespace ballast::coordinator
