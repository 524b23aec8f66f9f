// The probe against the real API server of the e2e control plane
// (tests/testenv): server-side apply of the probe's labels on a Node as its
// own field manager — other labels and other managers' labels survive, a
// label the probe no longer produces is removed, a ballast.io/ label set by
// hand stays until removed and is then the probe's; the Event naming a missing fact;
// `ballast-worker probe
// --apply` as a process; and no Node made up for a wrong NODE_NAME.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

// After the standard headers: boost::asio, under cpprest, needs <utility> first.
#include <cpprest/http_client.h>

#include "core/probe/board_conditions.h"
#include "testbed/child_process.h"
#include "tests/net/kube/e2e_support.h"
#include "tests/support/metrics_text.h"
#include "worker/probe/board_condition_writer.h"
#include "worker/probe/node_labeller.h"
#include "worker/probe/report.h"

namespace ballast::worker {
namespace {

using kube::testing::ClientFor;
using kube::testing::TestenvDir;
using kube::testing::WaitUntil;
using nlohmann::json;

const kube::ResourceRef kNodes = {"", "v1", "nodes", false, "", ""};
const kube::ResourceRef kEvents = {"", "v1", "events", true, "default", ""};

ProbeReport TreeReport(const std::string& tree) {
  auto report = Probe(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/" + tree);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : ProbeReport{};
}

class ProbeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = ClientFor("kubeconfig");
    ASSERT_TRUE(client_);
    std::random_device random;
    node_ = "probe-e2e-" + std::to_string(random() % 1000000);
    // A Node as a kubelet and a user left it: their labels, and one of
    // another apply manager.
    const json node = {{"apiVersion", "v1"},
                       {"kind", "Node"},
                       {"metadata",
                        {{"name", node_},
                         {"labels",
                          {{"kubernetes.io/hostname", node_},
                           {"team", "blue"},
                           {"ballast.io/cpu-model", "set-by-hand"}}}}}};
    auto created = client_->Create(kNodes, node);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    const json other = {{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", {{"name", node_}, {"labels", {{"other.io/zone", "a"}}}}}};
    auto applied = client_->Apply(kNodes.Named(node_), other, {"other-manager", false, ""});
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  }
  void TearDown() override {
    if (client_ && !node_.empty()) (void)client_->Delete(kNodes.Named(node_));
  }

  json Labels() {
    auto node = client_->Get(kNodes.Named(node_));
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    return node.ok() ? node->at("metadata").value("labels", json::object()) : json::object();
  }

  std::unique_ptr<kube::HttpKubeClient> client_;
  std::string node_;
};

TEST_F(ProbeE2eTest, ApplyOwnsOnlyItsLabelsAndDropsOnesItNoLongerProduces) {
  const ProbeReport pi4 = TreeReport("pi4b-2gb");
  NodeLabeller labeller(*client_, node_, "ballast-probe");
  ASSERT_TRUE(labeller.Apply(pi4.labels).ok());
  json labels = Labels();
  for (const auto& [key, value] : pi4.labels) {
    if (key != "ballast.io/cpu-model") {
      EXPECT_EQ(labels.value(key, ""), value) << key;
    }
  }
  EXPECT_EQ(labels.value("team", ""), "blue");
  EXPECT_EQ(labels.value("other.io/zone", ""), "a");
  EXPECT_EQ(labels.value("kubernetes.io/hostname", ""), node_);
  // Set by hand at creation: it stays, and the probe says so.
  EXPECT_EQ(labels.value("ballast.io/cpu-model", ""), "set-by-hand");
  ASSERT_EQ(labeller.conflicts().size(), 1u);
  EXPECT_EQ(labeller.conflicts()[0].fact, "ballast.io/cpu-model");
  EXPECT_NE(labeller.conflicts()[0].message.find("cortex-a72"), std::string::npos);

  // Removed by hand (a JSON merge patch, as kubectl label key- does): the
  // next pass sets the probe's value.
  ASSERT_TRUE(client_
                  ->MergePatch(kNodes.Named(node_),
                               {{"metadata", {{"labels", {{"ballast.io/cpu-model", nullptr}}}}}})
                  .ok());
  ASSERT_TRUE(labeller.Apply(pi4.labels).ok());
  EXPECT_TRUE(labeller.conflicts().empty());
  EXPECT_EQ(Labels().value("ballast.io/cpu-model", ""), "cortex-a72");

  // A restarted probe on a board without a power figure: power-w goes.
  const ProbeReport zero = TreeReport("pi-zero-2w");
  ASSERT_EQ(zero.labels.count("ballast.io/power-w"), 0u);
  NodeLabeller restarted(*client_, node_, "ballast-probe");
  ASSERT_TRUE(restarted.Apply(zero.labels).ok());
  labels = Labels();
  EXPECT_FALSE(labels.contains("ballast.io/power-w"));
  EXPECT_EQ(labels.value("ballast.io/board", ""), "pi-zero-2-w");
  EXPECT_EQ(labels.value("team", ""), "blue");
  EXPECT_EQ(labels.value("other.io/zone", ""), "a");

  // The annotation and managedFields say which labels are the probe's.
  auto node = client_->Get(kNodes.Named(node_));
  ASSERT_TRUE(node.ok());
  const std::string listed =
      node->at("metadata").at("annotations").value(std::string(probe::kProbeLabelsAnnotation), "");
  EXPECT_NE(listed.find("ballast.io/board"), std::string::npos);
  EXPECT_EQ(listed.find("ballast.io/power-w"), std::string::npos);
  EXPECT_EQ(listed.find("team"), std::string::npos);
  bool owned = false;
  for (const json& entry : node->at("metadata").at("managedFields")) {
    if (entry.value("manager", "") != "ballast-probe") continue;
    const json fields = entry.at("fieldsV1").at("f:metadata").at("f:labels");
    owned = fields.contains("f:ballast.io/board") && !fields.contains("f:team");
  }
  EXPECT_TRUE(owned) << node->at("metadata").at("managedFields").dump();

  // Unchanged labels: no request.
  const int applies = restarted.applies();
  ASSERT_TRUE(restarted.Apply(zero.labels).ok());
  EXPECT_EQ(restarted.applies(), applies);
}

TEST_F(ProbeE2eTest, EventNamesTheMissingFactAndItsDefault) {
  const ProbeReport zero = TreeReport("pi-zero-2w");
  NodeLabeller labeller(*client_, node_, "ballast-probe");
  ASSERT_TRUE(labeller.Apply(zero.labels).ok());
  ASSERT_TRUE(
      labeller.Report(labeller.Notice(ProfileWarnings(zero), zero.labels, zero.facts)).ok());
  // The same: no second Event.
  ASSERT_TRUE(
      labeller.Report(labeller.Notice(ProfileWarnings(zero), zero.labels, zero.facts)).ok());
  // The probe's Events only: a controller running beside the tests may post
  // its own Event for a new Node (one CI run listed two).
  kube::ListOptions options;
  // (The hand-set cpu-model is a LabelsSetByOthers of its own.)
  options.field_selector =
      "involvedObject.name=" + node_ + ",source=ballast-probe,reason=ProbeFactUnknown";
  auto events = client_->List(kEvents, options);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->items.size(), 1u);
  const json& event = events->items[0];
  EXPECT_EQ(event.value("reason", ""), "ProbeFactUnknown");
  EXPECT_EQ(event.value("type", ""), "Warning");
  EXPECT_EQ(event.at("involvedObject").value("kind", ""), "Node");
  EXPECT_FALSE(event.at("involvedObject").value("uid", "").empty());
  const std::string message = event.value("message", "");
  EXPECT_NE(message.find("ballast.io/power-w"), std::string::npos) << message;
  EXPECT_NE(message.find("default 6.4"), std::string::npos) << message;
  options.field_selector = "involvedObject.name=" + node_ + ",source=ballast-probe";
  events = client_->List(kEvents, options);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  for (const json& e : events->items) (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
}

// Regression (issue 32): on a Node whose kubelet set seed 000's labels
// (--node-labels), the probe of an amd64 machine posted a Warning per label
// it could not apply and claimed power-w was unset while it was 6.4.
TEST_F(ProbeE2eTest, LabelsOthersSetAreOneNormalEventAndNotAWarning) {
  // The test Node's cpu-model is set by hand; power-w by another manager.
  const json power = {{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", node_}, {"labels", {{"ballast.io/power-w", "6.4"}}}}}};
  ASSERT_TRUE(client_->Apply(kNodes.Named(node_), power, {"other-manager", false, ""}).ok());
  const ProbeReport pc = TreeReport("amd64");
  ASSERT_EQ(pc.labels.count("ballast.io/power-w"), 0u);
  NodeLabeller labeller(*client_, node_, "ballast-probe");
  ASSERT_TRUE(labeller.Apply(pc.labels, probe::BoardNote(pc.facts)).ok());
  ASSERT_TRUE(labeller.Report(labeller.Notice(ProfileWarnings(pc), pc.labels, pc.facts)).ok());
  kube::ListOptions options;
  options.field_selector = "involvedObject.name=" + node_ + ",source=ballast-probe";
  auto events = client_->List(kEvents, options);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::map<std::string, json> by_reason;
  for (const json& event : events->items) by_reason[event.value("reason", "")] = event;
  EXPECT_EQ(by_reason.count("ProbeFactUnknown"), 0u) << json(events->items).dump();
  ASSERT_EQ(by_reason.count("LabelsSetByOthers"), 1u) << json(events->items).dump();
  EXPECT_EQ(by_reason["LabelsSetByOthers"].value("type", ""), "Normal");
  const std::string held = by_reason["LabelsSetByOthers"].value("message", "");
  EXPECT_NE(held.find("ballast.io/power-w=6.4 (set by other-manager; the probe has no value)"),
            std::string::npos)
      << held;
  EXPECT_NE(held.find("ballast.io/cpu-model=set-by-hand ("), std::string::npos) << held;
  ASSERT_EQ(by_reason.count("NotARaspberryPi"), 1u) << json(events->items).dump();
  EXPECT_EQ(by_reason["NotARaspberryPi"].value("type", ""), "Normal");
  // The reason an empty BOARD column has, on the Node itself.
  auto node = client_->Get(kNodes.Named(node_));
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->at("metadata").at("annotations").value("ballast.io/board-note", ""),
            probe::BoardNote(pc.facts));
  EXPECT_FALSE(node->at("metadata").at("labels").contains("ballast.io/board"));
  // On a board the annotation goes with the probe's next apply.
  const ProbeReport pi4 = TreeReport("pi4b-2gb");
  ASSERT_TRUE(labeller.Apply(pi4.labels, probe::BoardNote(pi4.facts)).ok());
  node = client_->Get(kNodes.Named(node_));
  ASSERT_TRUE(node.ok());
  EXPECT_FALSE(node->at("metadata").at("annotations").contains("ballast.io/board-note"));
  for (const json& e : events->items) (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
}

// The board's conditions on the Node's status (docs/probe.md, "Node
// conditions"): applied to the status subresource beside a condition another
// manager owns, which stays; lastTransitionTime moves only when a status
// flips; a Warning Event per condition that turns True, none for one that
// appears False; a probe that restarts writes and tells nothing new.
TEST_F(ProbeE2eTest, BoardConditionsOnTheNodesStatusAndTheirEvents) {
  const json kubelet = json::parse(R"({"apiVersion": "v1", "kind": "Node",
    "metadata": {"name": ")" + node_ +
                                   R"("},
    "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
      "message": "kubelet is posting ready status",
      "lastTransitionTime": "2026-01-01T00:00:00Z", "lastHeartbeatTime": "2026-01-01T00:00:00Z"}]}})");
  kube::ApplyOptions as_kubelet{"kubelet-like", true, "status"};
  auto ready = client_->Apply(kNodes.Named(node_), kubelet, as_kubelet);
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  const auto conditions = [&] {
    auto node = client_->Get(kNodes.Named(node_));
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    std::map<std::string, json> by_type;
    if (!node.ok()) return by_type;
    for (const json& c : node->at("status").value("conditions", json::array())) {
      by_type[c.value("type", "")] = c;
    }
    return by_type;
  };
  const auto events = [&] {
    kube::ListOptions options;
    options.field_selector = "involvedObject.name=" + node_ + ",source=ballast-probe";
    auto list = client_->List(kEvents, options);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<json> out;
    if (!list.ok()) return out;
    for (const json& e : list->items) {
      const std::string reason = e.value("reason", "");
      if (reason != "LabelsSetByOthers" && reason != "ProbeFactUnknown") out.push_back(e);
    }
    return out;
  };
  BoardConditionWriter writer(*client_, node_, "ballast-probe");
  const ProbeReport healthy = TreeReport("pi4b-2gb");
  ASSERT_TRUE(writer.Update(probe::BoardConditions(healthy.facts), "").ok());
  auto now = conditions();
  ASSERT_EQ(now.size(), 3u);
  EXPECT_EQ(now["Ready"].value("reason", ""), "KubeletReady");  // the other manager's stays
  EXPECT_EQ(now["BallastBoardUnderVoltage"].value("status", ""), "False");
  EXPECT_EQ(now["BallastBoardUnderVoltage"].value("reason", ""), "SupplyOk");
  EXPECT_EQ(now["BallastBoardThrottled"].value("reason", ""), "NotThrottled");
  const std::string first = now["BallastBoardUnderVoltage"].value("lastTransitionTime", "");
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(events().empty());
  // The same again: no write.
  ASSERT_TRUE(writer.Update(probe::BoardConditions(healthy.facts), "").ok());
  EXPECT_EQ(writer.writes(), 1);

  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a new second to stamp
  const ProbeReport sagging = TreeReport("pi4b-8gb");
  ASSERT_TRUE(
      writer.Update(probe::BoardConditions(sagging.facts), probe::TemperatureNote(sagging.facts))
          .ok());
  now = conditions();
  EXPECT_EQ(now["Ready"].value("reason", ""), "KubeletReady");
  EXPECT_EQ(now["BallastBoardUnderVoltage"].value("status", ""), "True");
  EXPECT_EQ(now["BallastBoardUnderVoltage"].value("reason", ""), "UnderVoltageNow");
  EXPECT_EQ(now["BallastBoardUnderVoltage"].value("message", ""),
            "the board's supply is under-voltage now (get_throttled 0x50005; rpi_volt "
            "in0_lcrit_alarm 1)");
  EXPECT_NE(now["BallastBoardUnderVoltage"].value("lastTransitionTime", ""), first);
  EXPECT_EQ(now["BallastBoardThrottled"].value("reason", ""), "ThrottledNow");
  auto told = events();
  ASSERT_EQ(told.size(), 2u);
  std::map<std::string, json> by_reason;
  for (const json& e : told) by_reason[e.value("reason", "")] = e;
  EXPECT_EQ(by_reason["UnderVoltageNow"].value("type", ""), "Warning");
  EXPECT_EQ(by_reason["UnderVoltageNow"].value("message", ""),
            "the board's supply is under-voltage now (get_throttled 0x50005; rpi_volt "
            "in0_lcrit_alarm 1); SoC at 71.5 °C");
  EXPECT_FALSE(by_reason["UnderVoltageNow"].at("involvedObject").value("uid", "").empty());
  EXPECT_EQ(by_reason["ThrottledNow"].value("type", ""), "Warning");

  // A probe that restarts on the same board: nothing written, nothing told.
  BoardConditionWriter restarted(*client_, node_, "ballast-probe");
  ASSERT_TRUE(restarted.Update(probe::BoardConditions(sagging.facts), "").ok());
  EXPECT_EQ(restarted.writes(), 0);
  EXPECT_EQ(restarted.events(), 0);
  EXPECT_EQ(events().size(), 2u);
  // A PC exposes none of it: nothing written.
  ASSERT_TRUE(restarted.Update(probe::BoardConditions(TreeReport("amd64").facts), "").ok());
  EXPECT_EQ(restarted.writes(), 0);
  for (const json& e : told) (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
}

// Issue 61: a board flapping between throttled and not, against the API
// server. The since-boot bits keep the condition True, its reason moving
// each probe interval: one write per move, the transition time kept from
// the first, and of each cycle one Warning (the trouble back) and one
// Normal Event (it stopped).
TEST_F(ProbeE2eTest, ABoardFlappingBetweenThrottledAndNotWarnsOncePerCycle) {
  const probe::BoardCondition now{"BallastBoardThrottled", "True", "ThrottledNow",
                                  "the firmware reports throttled now", ""};
  const probe::BoardCondition was{"BallastBoardThrottled", "True", "ThrottledSinceBoot",
                                  "the firmware reports throttled since boot", ""};
  BoardConditionWriter writer(*client_, node_, "ballast-probe");
  std::string first;
  for (int interval = 0; interval < 6; ++interval) {
    ASSERT_TRUE(writer.Update({interval % 2 == 0 ? now : was}, "").ok());
    auto node = client_->Get(kNodes.Named(node_));
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    for (const json& c : node->at("status").value("conditions", json::array())) {
      if (c.value("type", "") != "BallastBoardThrottled") continue;
      EXPECT_EQ(c.value("reason", ""), interval % 2 == 0 ? "ThrottledNow" : "ThrottledSinceBoot");
      if (first.empty()) first = c.value("lastTransitionTime", "");
      EXPECT_EQ(c.value("lastTransitionTime", ""), first) << "interval " << interval;
    }
  }
  EXPECT_EQ(writer.writes(), 6);
  EXPECT_EQ(writer.events(), 6);
  kube::ListOptions options;
  options.field_selector = "involvedObject.name=" + node_ + ",source=ballast-probe";
  auto list = client_->List(kEvents, options);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  int warnings = 0, normals = 0;
  for (const json& e : list->items) {
    const std::string reason = e.value("reason", "");
    if (reason != "ThrottledNow" && reason != "ThrottledSinceBoot") continue;
    const int count = e.value("count", 1);
    (e.value("type", "") == "Warning" ? warnings : normals) += count;
    EXPECT_EQ(e.value("type", ""), reason == "ThrottledNow" ? "Warning" : "Normal") << e.dump();
    (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
  }
  EXPECT_EQ(warnings, 3);
  EXPECT_EQ(normals, 3);
}

// A board whose kernel has the memory cgroup off (Raspberry Pi OS without
// cgroup_enable=memory): BallastBoardNoMemoryCgroup True on the Node beside
// the power conditions, with a Warning Event naming the command line's word;
// once the board offers it, False and a Normal Event.
TEST_F(ProbeE2eTest, NoMemoryCgroupConditionOnTheNode) {
  namespace fs = std::filesystem;
  const fs::path tree = fs::temp_directory_path() / (node_ + "-tree");
  fs::remove_all(tree);
  fs::copy(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/pi4b-2gb", tree,
           fs::copy_options::recursive);
  const std::string fixtures = std::string(BALLAST_SOURCE_DIR) + "/tests/probe/testdata/cgroups/";
  fs::copy_file(fixtures + "cgroups-v1-pi-os", tree / "proc/cgroups");
  fs::copy_file(fixtures + "cmdline-disabled", tree / "proc/cmdline",
                fs::copy_options::overwrite_existing);
  const auto condition = [&](const std::string& type) {
    auto node = client_->Get(kNodes.Named(node_));
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    const json list = node.ok()
                          ? node->value("status", json::object()).value("conditions", json::array())
                          : json::array();
    for (const json& c : list) {
      if (c.value("type", "") == type) return c;
    }
    return json::object();
  };
  const auto told = [&](const std::string& reason) {
    kube::ListOptions options;
    options.field_selector = "involvedObject.name=" + node_ + ",reason=" + reason;
    auto list = client_->List(kEvents, options);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    return list.ok() ? list->items : std::vector<json>{};
  };
  BoardConditionWriter writer(*client_, node_, "ballast-probe");
  auto report = Probe(tree.string());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(writer.Update(probe::BoardConditions(report->facts), "").ok());
  json memory = condition("BallastBoardNoMemoryCgroup");
  EXPECT_EQ(memory.value("status", ""), "True");
  EXPECT_EQ(memory.value("reason", ""), "MemoryCgroupDisabled");
  EXPECT_NE(memory.value("message", "").find("cgroup_disable=memory on the kernel command line"),
            std::string::npos)
      << memory.dump();
  EXPECT_EQ(condition("BallastBoardThrottled").value("reason", ""), "NotThrottled");
  auto warnings = told("MemoryCgroupDisabled");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].value("type", ""), "Warning");

  // Rebooted with cgroup_enable=memory: the controller is on.
  fs::copy_file(fixtures + "cgroups-v1-memory", tree / "proc/cgroups",
                fs::copy_options::overwrite_existing);
  report = Probe(tree.string());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(writer.Update(probe::BoardConditions(report->facts), "").ok());
  memory = condition("BallastBoardNoMemoryCgroup");
  EXPECT_EQ(memory.value("status", ""), "False");
  EXPECT_EQ(memory.value("reason", ""), "MemoryCgroupPresent");
  auto normal = told("MemoryCgroupPresent");
  ASSERT_EQ(normal.size(), 1u);
  EXPECT_EQ(normal[0].value("type", ""), "Normal");
  for (const auto& e : warnings) (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
  for (const auto& e : normal) (void)client_->Delete(kEvents.Named(e["metadata"]["name"]));
  fs::remove_all(tree);
}

TEST_F(ProbeE2eTest, WrongNodeNameIsNotFoundAndCreatesNoNode) {
  NodeLabeller labeller(*client_, node_ + "-missing", "ballast-probe");
  const Status status = labeller.Apply(TreeReport("pi4b-2gb").labels);
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_EQ(client_->Get(kNodes.Named(node_ + "-missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(ProbeE2eTest, WorkerProcessLabelsItsNode) {
  const std::string command = std::string(BALLAST_WORKER_BINARY) + " probe --apply --node " +
                              node_ + " --kubeconfig " + TestenvDir() + "/kubeconfig --root " +
                              BALLAST_SOURCE_DIR + "/tests/probe/trees/pi3b-32bit";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  const json labels = Labels();
  EXPECT_EQ(labels.value("ballast.io/cpu-model", ""), "set-by-hand");  // not the probe's
  EXPECT_EQ(labels.value("ballast.io/os-bits", ""), "32");
  EXPECT_EQ(labels.value("team", ""), "blue");
}

// The gauge `name{node="..."}`'s value in `metrics`; -1 when absent.
using testing_support::Gauge;

std::string FetchMetrics(int port) {
  try {
    web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port));
    return client.request(web::http::methods::GET, "/metrics").get().extract_string(true).get();
  } catch (const std::exception&) {
    return "";
  }
}

// The DaemonSet's loop: relabels when throttling appears, exports the
// shared gauges, and ends cleanly on SIGTERM.
TEST_F(ProbeE2eTest, LoopRelabelsWhenThrottlingAppearsAndStopsOnSigterm) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / (node_ + "-tree");
  fs::remove_all(root);
  fs::copy(std::string(BALLAST_SOURCE_DIR) + "/tests/probe/trees/pi4b-2gb", root,
           fs::copy_options::recursive);
  const fs::path throttled = root / "sys/devices/platform/soc/soc:firmware/get_throttled";
  const std::string kubeconfig = TestenvDir() + "/kubeconfig";
  // The probe picks its own port (port 0) and logs it: a port chosen here
  // could be taken by another test's connection before the probe binds it
  // (a random one in the ephemeral range was, once, in a parallel run).
  const fs::path log = root.string() + ".log";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    execl(BALLAST_WORKER_BINARY, BALLAST_WORKER_BINARY, "probe", "--apply", "--node", node_.c_str(),
          "--kubeconfig", kubeconfig.c_str(), "--root", root.c_str(), "--interval", "0.2",
          "--metrics-listen", "127.0.0.1:0", nullptr);
    _exit(127);
  }
  int port = 0;
  ASSERT_TRUE(WaitUntil([&] {
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("metrics served port=");
    if (at == std::string::npos) return false;
    port = std::atoi(text.c_str() + at + std::string("metrics served port=").size());
    return port > 0;
  }));
  EXPECT_TRUE(WaitUntil([&] { return Labels().value("ballast.io/power-ok", "") == "true"; }));
  EXPECT_TRUE(WaitUntil([&] { return Gauge(FetchMetrics(port), "ballast_node_throttled") == 0; }));
  std::ofstream(throttled, std::ios::trunc) << "50005\n";
  EXPECT_TRUE(WaitUntil([&] { return Labels().value("ballast.io/power-ok", "") == "false"; }));
  // The board's conditions follow (docs/probe.md, "Node conditions").
  EXPECT_TRUE(WaitUntil([&] {
    auto node = client_->Get(kNodes.Named(node_));
    if (!node.ok()) return false;
    for (const auto& c : probe::ReadBoardConditions(*node)) {
      if (c.type == "BallastBoardUnderVoltage" && c.reason == "UnderVoltageNow") return true;
    }
    return false;
  }));
  const std::string metrics = FetchMetrics(port);
  EXPECT_EQ(Gauge(metrics, "ballast_node_throttled"), 1) << metrics;
  EXPECT_EQ(Gauge(metrics, "ballast_node_under_voltage"), 1) << metrics;
  EXPECT_NE(metrics.find("ballast_node_throttled{node=\"" + node_ + "\"} 1"), std::string::npos);
  EXPECT_EQ(Gauge(metrics, "ballast_node_cpu_max_hertz"), 1.5e9) << metrics;
  // Prometheus's own checker accepts the exposition.
  const std::string file = ::testing::TempDir() + "probe-metrics-" + node_ + ".txt";
  std::ofstream(file) << metrics;
  const int check = std::system(("promtool check metrics < " + file + " > /dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(check), 0) << "promtool check metrics failed on:\n" << metrics;
  std::filesystem::remove(file);
  kill(pid, SIGTERM);
  EXPECT_EQ(ballast::testing::WaitExit(pid, std::chrono::seconds(10)), 0);
  fs::remove_all(root);
  fs::remove(log);
}

}  // namespace
}  // namespace ballast::worker
