// forging-worker: a test program that speaks the worker protocol
// (core/protocol/messages.h) with a valid token and lies. It takes
// ballast-worker's arguments (--coordinator URL --job ID --name NAME; others
// are ignored) and the token from BALLAST_TOKEN, asks for work, and reports
// every lease it gets as finished at once with a forged primes result: no
// primes at all, a result possible for any range (so only recomputation can
// tell it is wrong). It computes nothing. From the environment:
//   FORGE_IMPOSSIBLE=1     forge a million more primes than the range's
//                          numbers could hold instead (refused at once)
//   FORGE_CPU_SECONDS=X    report X CPU seconds with every lease (default 0.001)
//
// It exists to test the trust model (docs/trust.md): without verification
// the forged count is merged; with it, the job fails naming this worker; an
// impossible count is refused whether verified or not.
// Exits 0 when told "done", 1 on a refusal or after a minute of failures.
#include <cpprest/http_client.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/protocol/messages.h"
#include "core/workload/result.h"

namespace {

using ballast::balance::Reply;
namespace protocol = ballast::protocol;

struct Args {
  std::string coordinator;
  std::string job;
  std::string name;
};

Args Parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--coordinator") args.coordinator = argv[++i];
    if (flag == "--job") args.job = argv[++i];
    if (flag == "--name") args.name = argv[++i];
  }
  return args;
}

// POSTs `report`; the reply, or nullopt after a refusal or a minute of
// unreachable coordinator.
std::optional<protocol::ReplyMessage> Post(web::http::client::http_client& client, const Args& args,
                                           const std::string& token,
                                           const protocol::ReportMessage& report) {
  for (int attempt = 0; attempt < 1200; ++attempt) {
    try {
      web::http::http_request request(web::http::methods::POST);
      request.set_request_uri("/v1/jobs/" + args.job + "/report");
      request.headers().add("Authorization", "Bearer " + token);
      request.set_body(protocol::ToJson(report).dump(), "application/json");
      web::http::http_response response = client.request(request).get();
      const std::string body = response.extract_string().get();
      if (response.status_code() == 200) {
        auto json = protocol::ParseJsonText(body);
        if (!json.ok()) return std::nullopt;
        auto reply = protocol::ParseReply(*json);
        if (reply.ok()) return *reply;
        return std::nullopt;
      }
      if (response.status_code() != 404 && response.status_code() < 500) {
        std::fprintf(stderr, "refused: %d %s\n", response.status_code(), body.c_str());
        return std::nullopt;
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "retrying: %s\n", error.what());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  const char* token = std::getenv("BALLAST_TOKEN");
  if (args.coordinator.empty() || args.job.empty() || args.name.empty() || token == nullptr) {
    std::fprintf(stderr,
                 "usage: BALLAST_TOKEN=... forging-worker --coordinator URL --job ID "
                 "--name NAME\n");
    return 1;
  }
  web::http::client::http_client_config config;
  config.set_timeout(std::chrono::seconds(120));  // the coordinator holds "wait" answers
  web::http::client::http_client client(args.coordinator, config);
  const char* impossible_env = std::getenv("FORGE_IMPOSSIBLE");
  const bool impossible = impossible_env != nullptr && std::string(impossible_env) == "1";
  const char* cpu_env = std::getenv("FORGE_CPU_SECONDS");
  const double cpu_seconds = cpu_env != nullptr ? std::strtod(cpu_env, nullptr) : 0.001;
  protocol::ReportMessage report;
  report.worker = args.name;
  report.idle = true;
  uint64_t seq = 0;
  for (;;) {
    report.seq = ++seq;
    auto reply = Post(client, args, token, report);
    if (!reply) return 1;
    report = {};
    report.worker = args.name;
    report.idle = true;
    if (reply->kind == Reply::Kind::kDone) return 0;
    if (reply->kind == Reply::Kind::kWait) continue;
    // A lease (or the rest of one): "finished" at once, with a forged count.
    const uint64_t count = impossible ? reply->lease.size() + 1000000 : 0;
    const auto forged = ballast::workload::Result::Primes(count, 0);
    report.session = reply->session;
    report.completed.push_back({reply->lease, forged.ToJson()});
    report.position = reply->lease.end;
    report.calc_seconds = 0.001;
    report.cpu_seconds = cpu_seconds;
    std::printf("forged %s\n", reply->lease.ToString().c_str());
    std::fflush(stdout);
  }
}
