// The bundled worker (`ballast-worker bundle`, worker/bundle.h) runs exec jobs
// against a real coordinator on loopback, as it does on Kubernetes in the
// user's image: through the bundle's own loader; inside a root file system
// that has nothing of ours and no C library (busybox alone, no
// nsswitch.conf); and inside another distribution's root (Debian bullseye,
// whose glibc is older than the worker's, from scripts/test-roots; seconds,
// most of them unpacking it). The chroot tests need root (CTest label
// `root`). The coordinator's name is resolved by DNS, as a Service name is.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "coordinator/server.h"
#include "testbed/child_process.h"
#include "worker/bundle.h"

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uid_t kPodUid = 65532;  // worker pods run as this user
constexpr char kCoordinatorName[] = "coordinator.ballast.test";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A DNS server on ADDRESS:53 (UDP) that answers A queries for one name with
// 127.0.0.1, AAAA queries for it with no record, and anything else with
// NXDOMAIN; it counts the queries for the name. Port 53, because resolv.conf
// cannot name another: binding it needs root.
class TinyDns {
 public:
  explicit TinyDns(const std::string& address) {
    socket_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(53);
    inet_pton(AF_INET, address.c_str(), &at.sin_addr);
    ok_ = bind(socket_, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0;
    if (ok_) thread_ = std::thread([this] { Serve(); });
  }
  ~TinyDns() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(socket_);
  }
  bool ok() const { return ok_; }
  int queries() const { return queries_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd fd{socket_, POLLIN, 0};
      if (poll(&fd, 1, 50) <= 0) continue;
      unsigned char query[512];
      sockaddr_in from{};
      socklen_t from_size = sizeof(from);
      const ssize_t size = recvfrom(socket_, query, sizeof(query), 0,
                                    reinterpret_cast<sockaddr*>(&from), &from_size);
      if (size < 12) continue;
      const std::string reply = Answer(std::string(reinterpret_cast<char*>(query), size));
      if (reply.empty()) continue;
      sendto(socket_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), from_size);
    }
  }

  // The reply to one query; empty for a message that is not one question.
  std::string Answer(const std::string& query) {
    size_t at = 12;
    std::string name;
    while (at < query.size() && query[at] != 0) {
      const size_t length = static_cast<unsigned char>(query[at]);
      if (length > 63 || at + 1 + length >= query.size()) return "";
      name += (name.empty() ? "" : ".") + query.substr(at + 1, length);
      at += 1 + length;
    }
    if (at + 5 > query.size()) return "";
    const int type =
        static_cast<unsigned char>(query[at + 1]) << 8 | static_cast<unsigned char>(query[at + 2]);
    const std::string question = query.substr(12, at + 5 - 12);
    const bool ours = name == kCoordinatorName;
    if (ours) ++queries_;
    const bool answer = ours && type == 1;
    std::string reply = query.substr(0, 2);                   // id
    reply += ours ? std::string("\x81\x80", 2) : "\x81\x83";  // response, NOERROR / NXDOMAIN
    reply += std::string("\0\x01\0", 3) + (answer ? "\x01" : std::string(1, '\0'));  // qd, an
    reply += std::string(4, '\0');                                                   // ns, ar
    reply += question;
    if (answer) {
      reply += std::string("\xc0\x0c\0\x01\0\x01\0\0\0\x1e\0\x04\x7f\0\0\x01", 16);  // 127.0.0.1
    }
    return reply;
  }

  int socket_ = -1;
  bool ok_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<int> queries_{0};
  std::thread thread_;
};

// Starts `argv` (argv[0] a path) with exactly `env`, stdout and stderr to
// `log`; with `root` set, inside that root as the pods' user, with /proc
// mounted there (in a mount namespace of its own) when `proc`.
pid_t Start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const fs::path& log, const fs::path& root = {}, bool proc = false) {
  std::vector<std::string> args = argv, vars = env;
  std::vector<char*> arg_pointers, env_pointers;
  for (auto& arg : args) arg_pointers.push_back(arg.data());
  for (auto& var : vars) env_pointers.push_back(var.data());
  arg_pointers.push_back(nullptr);
  env_pointers.push_back(nullptr);
  const std::string root_path = root.string();
  const std::string proc_path = (root / "proc").string();
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    close_range(3, ~0U, 0);
    if (proc && (unshare(CLONE_NEWNS) != 0 ||
                 mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                 mount("proc", proc_path.c_str(), "proc", 0, nullptr) != 0)) {
      _exit(125);
    }
    if (!root_path.empty()) {
      if (chroot(root_path.c_str()) != 0 || chdir("/") != 0 || setgroups(0, nullptr) != 0 ||
          setgid(kPodUid) != 0 || setuid(kPodUid) != 0) {
        _exit(126);
      }
    }
    execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    _exit(127);
  }
  close(out);
  return pid;
}

// The exit code (128 + signal), or -1 after SIGKILL when `pid` outlives 60 s.
int WaitExit(pid_t pid) { return testing::WaitExit(pid, std::chrono::seconds(60)); }

// An exec job of `items` items, one command run per item, for worker "w0".
coordinator::JobConfig ExecJob(uint64_t items, const std::string& script, const std::string& arg) {
  coordinator::JobConfig config;
  config.id = "bundle-job";
  config.token = "bundle-token";
  config.workload.kind = workload::WorkloadKind::kExec;
  config.workload.items = items;
  config.workload.exec.command = {"sh", "-c", script, "sh", arg};
  config.workload.exec.per_item = true;
  config.workload.exec.retries = 0;
  config.policy = {balance::WeightedOptions{}, ""};
  config.workers = {{"w0", 1.0}};
  return config;
}

std::vector<std::string> WorkerArgs(const std::string& dir) {
  return {dir + "/ld.so",          "--library-path", dir + "/lib",
          dir + "/ballast-worker", "--threads",      "1"};
}

std::vector<std::string> WorkerEnv(const std::string& url, const std::string& path) {
  return {"PATH=" + path, "BALLAST_COORDINATOR=" + url, "BALLAST_JOB=bundle-job",
          "BALLAST_TOKEN=bundle-token", "BALLAST_WORKER_NAME=w0"};
}

// NAME=VALUE lines of `env` output as a map.
std::map<std::string, std::string> EnvLines(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return env;
}

class BundleRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ballast-bundle-run-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `ballast-worker bundle --to DIR`, run as the init container runs it:
  // with `as_pod_user`, as the pods' user into a directory that exists and
  // is writable by all, as an emptyDir is.
  void Bundle(const fs::path& to, bool as_pod_user = false) {
    if (as_pod_user) {
      fs::create_directories(to);
      fs::permissions(to, fs::perms::all);
    }
    const pid_t pid =
        Start({BALLAST_WORKER_BINARY, "bundle", "--to", to.string()}, {"PATH=/usr/bin:/bin"},
              dir_ / "bundle.log", as_pod_user ? fs::path("/") : fs::path());
    ASSERT_EQ(WaitExit(pid), 0) << ReadFile(dir_ / "bundle.log");
    std::cout << ReadFile(dir_ / "bundle.log");
  }

  fs::path dir_;
};

// The bundle runs through its own loader, and the user's command, a program
// of this machine, loads this machine's libraries: nothing of the bundle
// (LD_LIBRARY_PATH, its libc) reaches it. The image's own LD_LIBRARY_PATH,
// here naming a broken libstdc++ (which the command does not use, the worker
// does), reaches the command unchanged and not the worker.
TEST_F(BundleRunTest, BundledWorkerRunsAnExecJobAndLeavesNoTraceInTheCommand) {
  Bundle(dir_ / "bundle");
  // OpenBLAS is opened by the matmul kernel only (matmul_kernel.cc): an exec
  // bundle does not carry it or its Fortran runtime.
  for (const auto& entry : fs::directory_iterator(dir_ / "bundle" / "lib")) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.starts_with("libopenblas") || name.starts_with("libgfortran")) << name;
  }
  fs::create_directories(dir_ / "image-lib");
  std::ofstream(dir_ / "image-lib" / "libstdc++.so.6") << "not a library";
  const std::string image_path = "LD_LIBRARY_PATH=" + (dir_ / "image-lib").string();
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  const std::string script =
      "{ env; echo ---; readlink /proc/$PPID/exe; grep -o '/[^ ]*libc[.]so[.]6' /proc/$$/maps "
      "| sort -u; } > \"$1/$BALLAST_START\"";
  ASSERT_TRUE((*server)->AddJob(ExecJob(3, script, dir_.string())).ok());
  std::vector<std::string> env = WorkerEnv((*server)->url(), "/usr/bin:/bin");
  env.push_back(image_path);
  const pid_t worker = Start(WorkerArgs((dir_ / "bundle").string()), env, dir_ / "worker.log");
  ASSERT_EQ(WaitExit(worker), 0) << ReadFile(dir_ / "worker.log");
  const auto view = (*server)->View("bundle-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.exec().succeeded, 3u);
  EXPECT_TRUE(view->result.exec().failures.empty());
  for (int item = 0; item < 3; ++item) {
    const std::string out = ReadFile(dir_ / std::to_string(item));
    const std::string env = out.substr(0, out.find("---\n"));
    const std::string rest = out.substr(out.find("---\n") + 4);
    EXPECT_EQ(EnvLines(env)["BALLAST_ITEM"], std::to_string(item));
    EXPECT_EQ(EnvLines(env)["PATH"], "/usr/bin:/bin");
    size_t ld_variables = 0;
    for (const auto& [name, value] : EnvLines(env)) ld_variables += name.starts_with("LD_");
    EXPECT_EQ(ld_variables, 1u) << env;
    EXPECT_EQ("LD_LIBRARY_PATH=" + EnvLines(env)["LD_LIBRARY_PATH"], image_path);
    EXPECT_EQ(env.find((dir_ / "bundle").string()), std::string::npos) << env;
    // The command's parent is the bundle's loader running the worker; the
    // command's own libc is the machine's, not the bundle's.
    std::istringstream lines(rest);
    std::string parent, libc;
    std::getline(lines, parent);
    std::getline(lines, libc);
    EXPECT_EQ(parent, (dir_ / "bundle" / "ld.so").string());
    EXPECT_FALSE(libc.empty());
    EXPECT_EQ(libc.find(dir_.string()), std::string::npos) << libc;
  }
}

// The command line: a directory holding something else is refused with exit
// code 2 and a message that names it; nothing is written there.
TEST_F(BundleRunTest, BundleIntoADirectoryOfSomethingElseExitsTwoAndSaysWhy) {
  fs::create_directories(dir_ / "data");
  std::ofstream(dir_ / "data" / "results.csv") << "1,2\n";
  const pid_t pid = Start({BALLAST_WORKER_BINARY, "bundle", "--to", (dir_ / "data").string()},
                          {"PATH=/usr/bin:/bin"}, dir_ / "bundle.log");
  EXPECT_EQ(WaitExit(pid), 2);
  EXPECT_NE(ReadFile(dir_ / "bundle.log")
                .find("ballast-worker bundle: " + (dir_ / "data").string() +
                      " is not empty (it holds results.csv)"),
            std::string::npos)
      << ReadFile(dir_ / "bundle.log");
  EXPECT_FALSE(fs::exists(dir_ / "data" / "ld.so"));
  EXPECT_FALSE(fs::exists(dir_ / "data" / ".ballast-bundle"));
}

// A root like an image with nothing of ours and no libc: busybox (static),
// its applets, /tmp, /etc/resolv.conf naming a DNS server, a marker file.
fs::path MakeBusyboxRoot(const fs::path& root, const std::string& nameserver,
                         const std::string& marker) {
  fs::create_directories(root / "bin");
  fs::create_directories(root / "etc");
  fs::create_directories(root / "tmp");
  fs::create_directories(root / "out");
  fs::permissions(root / "tmp", fs::perms::all | fs::perms::sticky_bit);
  chown((root / "out").c_str(), kPodUid, kPodUid);
  fs::copy_file("/bin/busybox", root / "bin" / "busybox");
  for (const char* applet : {"sh", "cat", "env", "id", "ls", "mv"}) {
    fs::create_symlink("busybox", root / "bin" / applet);
  }
  std::ofstream(root / "etc" / "resolv.conf")
      << "nameserver " << nameserver << "\noptions timeout:2 attempts:2\n";
  std::ofstream(root / "etc" / "ballast-root") << marker << "\n";
  return root;
}

TEST_F(BundleRunTest, BundledWorkerRunsAnExecJobWithNoLibcInABusyboxRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (chroot, DNS on port 53)";
  ASSERT_TRUE(fs::exists("/bin/busybox")) << "needs Debian's busybox-static";
  const std::string nameserver = "127.53." + std::to_string(getpid() >> 8 & 0xff) + "." +
                                 std::to_string((getpid() & 0xff) | 1);
  TinyDns dns(nameserver);
  ASSERT_TRUE(dns.ok()) << "cannot bind " << nameserver << ":53";
  const std::string marker = "root-" + std::to_string(std::random_device()());
  const fs::path root = MakeBusyboxRoot(dir_ / "root", nameserver, marker);
  Bundle(root / "ballast", /*as_pod_user=*/true);
  struct stat bundled {};
  ASSERT_EQ(stat((root / "ballast" / "lib" / "libc.so.6").c_str(), &bundled), 0);
  EXPECT_EQ(bundled.st_uid, kPodUid);  // written by the pods' user

  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  const std::string script =
      "set -e; f=/out/$BALLAST_START; { cat /etc/ballast-root; id -u; ls -a /; echo ---; env; } "
      "> $f.tmp; mv $f.tmp $f";
  ASSERT_TRUE((*server)->AddJob(ExecJob(5, script, "")).ok());
  const std::string url =
      "http://" + std::string(kCoordinatorName) + ":" + std::to_string((*server)->port());
  const pid_t worker =
      Start(WorkerArgs("/ballast"), WorkerEnv(url, "/bin"), dir_ / "worker.log", root);
  ASSERT_EQ(WaitExit(worker), 0) << ReadFile(dir_ / "worker.log");
  const auto view = (*server)->View("bundle-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.exec().succeeded, 5u);
  EXPECT_TRUE(view->result.exec().failures.empty());
  EXPECT_GT(dns.queries(), 0);  // the name was resolved by DNS, as a Service's is
  for (int item = 0; item < 5; ++item) {
    const std::string out = ReadFile(root / "out" / std::to_string(item));
    const size_t split = out.find("---\n");
    ASSERT_NE(split, std::string::npos) << out;
    // The command ran in that root, as the pods' user, and saw only it.
    EXPECT_EQ(out.substr(0, split), marker + "\n65532\n.\n..\nballast\nbin\netc\nout\ntmp\n");
    auto env = EnvLines(out.substr(split + 4));
    EXPECT_EQ(env["PATH"], "/bin");
    EXPECT_EQ(env["BALLAST_ITEM"], std::to_string(item));
    for (const auto& [name, value] : env) {
      EXPECT_FALSE(name.starts_with("LD_")) << name;
      EXPECT_EQ(value.find("/ballast/lib"), std::string::npos) << name << "=" << value;
    }
  }
}

// Debian's multiarch directory name of this machine (x86_64-linux-gnu, ...):
// where this process's libc lies.
std::string Multiarch() {
  std::ifstream in("/proc/self/maps");
  for (std::string line; std::getline(in, line);) {
    const size_t libc = line.find("/libc.so.6");
    if (libc == std::string::npos) continue;
    const size_t slash = line.rfind('/', libc - 1);
    return line.substr(slash + 1, libc - slash - 1);
  }
  return "";
}

// The bullseye root of scripts/test-roots (made on first use, cached after).
std::string BullseyeTarball() {
  FILE* script = popen(BALLAST_SOURCE_DIR "/scripts/test-roots", "r");
  char line[4096] = {};
  const bool read = script != nullptr && std::fgets(line, sizeof(line), script) != nullptr;
  const int status = script != nullptr ? pclose(script) : -1;
  std::string path = read && status == 0 ? line : "";
  if (!path.empty() && path.back() == '\n') path.pop_back();
  return path;
}

// Another distribution's root, with its own older glibc (2.31), dash as sh,
// an nsswitch.conf and /proc: the worker runs on the bundle's glibc, the
// command on the root's.
TEST_F(BundleRunTest, BundledWorkerRunsAnExecJobInADebianBullseyeRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (chroot, mounts, DNS on port 53)";
  const std::string tarball = BullseyeTarball();
  ASSERT_FALSE(tarball.empty()) << "scripts/test-roots failed";
  const fs::path root = dir_ / "root";
  fs::create_directories(root);
  // Its programs, libraries and configuration, not /usr/share and /var:
  // seconds less to unpack.
  ASSERT_EQ(std::system(("tar -xf " + tarball + " -C " + root.string() +
                         " ./bin ./lib ./lib64 ./etc ./usr/bin ./usr/lib/" + Multiarch())
                            .c_str()),
            0);
  fs::create_directories(root / "proc");
  fs::create_directories(root / "tmp");
  const std::string nameserver = "127.54." + std::to_string(getpid() >> 8 & 0xff) + "." +
                                 std::to_string((getpid() & 0xff) | 1);
  TinyDns dns(nameserver);
  ASSERT_TRUE(dns.ok()) << "cannot bind " << nameserver << ":53";
  fs::remove(root / "etc" / "resolv.conf");
  std::ofstream(root / "etc" / "resolv.conf") << "nameserver " << nameserver << "\n";
  fs::create_directories(root / "out");
  chown((root / "out").c_str(), kPodUid, kPodUid);
  Bundle(root / "ballast");

  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  const std::string script =
      "set -e; f=/out/$BALLAST_START; { cat /etc/debian_version; "
      "grep -o '/[^ ]*/libc[.-][^ ]*' /proc/$$/maps | sort -u; "
      "grep -o '/[^ ]*/libc[.-][^ ]*' /proc/$PPID/maps | sort -u; env; } > $f.tmp; mv $f.tmp $f";
  ASSERT_TRUE((*server)->AddJob(ExecJob(3, script, "")).ok());
  const std::string url =
      "http://" + std::string(kCoordinatorName) + ":" + std::to_string((*server)->port());
  const pid_t worker = Start(WorkerArgs("/ballast"), WorkerEnv(url, "/usr/local/bin:/usr/bin:/bin"),
                             dir_ / "worker.log", root, /*proc=*/true);
  ASSERT_EQ(WaitExit(worker), 0) << ReadFile(dir_ / "worker.log");
  const auto view = (*server)->View("bundle-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.exec().succeeded, 3u);
  EXPECT_TRUE(view->result.exec().failures.empty());
  EXPECT_GT(dns.queries(), 0);
  for (int item = 0; item < 3; ++item) {
    const std::string out = ReadFile(root / "out" / std::to_string(item));
    std::istringstream lines(out);
    std::string version, own_libc, worker_libc;
    std::getline(lines, version);
    std::getline(lines, own_libc);
    std::getline(lines, worker_libc);
    EXPECT_TRUE(version.starts_with("11.")) << out;
    // The shell (dash) runs on bullseye's glibc, the worker on the bundle's.
    EXPECT_EQ(own_libc, "/lib/" + Multiarch() + "/libc-2.31.so") << out;
    EXPECT_EQ(worker_libc, "/ballast/lib/libc.so.6") << out;
    auto env = EnvLines(out);
    EXPECT_EQ(env["BALLAST_ITEM"], std::to_string(item));
    for (const auto& [name, value] : env) EXPECT_FALSE(name.starts_with("LD_")) << name;
  }
}

}  // namespace
}  // namespace ballast::worker
