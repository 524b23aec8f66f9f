// What the coordinator tests share: a session made or failed as a test
// failure, the job's true result, and reports sent as workers would send them
// (no HTTP): an idle worker asking for work, a range handed in with its true
// result.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "coordinator/job_session.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/reference.h"

namespace ballast::coordinator::session_reports {

// A session of `config`, started at 0; a test failure when it is refused.
inline std::unique_ptr<JobSession> NewSession(JobConfig config) {
  auto session = JobSession::Create(std::move(config), 0);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return std::move(session).value();
}

// The job's true result, computed whole.
inline workload::Result Reference(const workload::WorkloadSpec& spec) {
  auto reference = kernels::ReferenceResult(spec);
  EXPECT_TRUE(reference.ok());
  return *reference;
}

// The true result of `range`, as a worker would compute it.
inline nlohmann::json Compute(const workload::WorkloadSpec& spec, balance::Range range) {
  auto kernel = kernels::MakeKernel(spec);
  EXPECT_TRUE(kernel.ok());
  auto result = (*kernel)->Compute(range);
  EXPECT_TRUE(result.ok());
  return result->ToJson();
}

// `worker` has nothing in hand and asks for work.
inline protocol::ReportMessage Idle(const std::string& worker) {
  protocol::ReportMessage report;
  report.worker = worker;
  report.idle = true;
  return report;
}

// `worker` hands in `range`, computed (0.1 s of computing), and asks for more.
inline protocol::ReportMessage Finished(const JobSession& session, const std::string& worker,
                                        balance::Range range) {
  protocol::ReportMessage report = Idle(worker);
  report.completed.push_back({range, Compute(session.config().workload, range)});
  report.position = range.end;
  report.calc_seconds = 0.1;
  return report;
}

}  // namespace ballast::coordinator::session_reports
