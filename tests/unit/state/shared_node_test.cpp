// One machine, many learners (docs/shared-node.md): by default each user has a private
// simulated node that nobody else can use; a class that wants one node for everybody opts
// in with a group folder and GPULAB_SHARED_NODE=1, and then every member sees the others'
// processes, as on a real shared GPU server. Tests that act as a second user run as root.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/node_state.h"
#include "state_test_support.h"

using namespace gpulab;
using namespace gpulab::state_test;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

ProcessUsage using_on_gpu0(std::uint64_t bytes) {
  ProcessUsage usage;
  usage.used_bytes = {bytes, 0};
  return usage;
}

std::vector<int> pids_of(const std::vector<ProcessUsage>& processes) {
  std::vector<int> pids;
  for (const auto& process : processes) pids.push_back(process.pid);
  return pids;
}

bool contains(const std::vector<int>& pids, int pid) { return std::find(pids.begin(), pids.end(), pid) != pids.end(); }

// A pipe the two sides of a fork talk through, one line at a time.
class Channel {
 public:
  Channel() { REQUIRE(pipe(fds_) == 0); }
  ~Channel() {
    close(fds_[0]);
    close(fds_[1]);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  void send(const std::string& line) const {
    const std::string text = line + "\n";
    (void)!write(fds_[1], text.data(), text.size());
  }
  std::string receive() const {
    std::string line;
    char c = 0;
    while (read(fds_[0], &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

 private:
  int fds_[2];
};

// Runs `body` in a child process as user nobody, with `groups` as its only groups, and
// returns the child's pid; the child reports on `out` and ends when `body` returns.
pid_t as_nobody(const std::vector<gid_t>& groups, const std::function<void()>& body) {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(kNogroup) != 0 || setuid(kNobody) != 0) _exit(3);
    umask(077);  // the strictest a student could have: the shared file must still be the group's
    body();
    _exit(0);
  }
  return child;
}

int wait_for(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string describe(const std::function<void()>& open) {
  try {
    open();
    return "opened";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("by default a node is private: another user can neither use it nor shares its folder", "[state][shared-machine]") {
  if (!running_as_root()) {
    WARN("skipped: acting as a second user needs root");
    return;
  }
  ScratchFolder state;
  const std::string path = state / "tiny2.state";
  NodeState mine(tiny2(), path, StateSharing::Private);
  mine.publish(using_on_gpu0(kMiB));
  const std::string before = read_file(path);

  Channel report;
  const pid_t child = as_nobody({}, [&] {
    unsetenv("GPULAB_STATE_DIR");
    unsetenv("XDG_RUNTIME_DIR");
    unsetenv("GPULAB_SHARED_NODE");
    report.send(NodeState::default_directory());
    report.send(describe([&] { NodeState theirs(tiny2(), path, StateSharing::Private); }));
  });
  const std::string their_default = report.receive();
  const std::string their_attempt = report.receive();
  REQUIRE(wait_for(child) == 0);
  CHECK(their_default == "/tmp/gpulab-" + std::to_string(kNobody));
  CHECK_THAT(their_attempt, Catch::Contains("node state folder '" + state.path() + "'") &&
                                Catch::Contains("belongs to user 'root' (uid 0), not to you, 'nobody'"));
  CHECK(read_file(path) == before);
  CHECK(pids_of(mine.processes()) == std::vector<int>{getpid()});
}

TEST_CASE("a node shared through a group folder shows every process, and its file stays the group's", "[state][shared-machine]") {
  ScratchFolder scratch;
  const std::string folder = scratch / "class";
  REQUIRE(mkdir(folder.c_str(), 0700) == 0);
  REQUIRE(chmod(folder.c_str(), 02770) == 0);  // as an instructor would: install -d -m 2770 -g GROUP
  const std::string path = folder + "/tiny2.state";

  SECTION("two processes of one user") {
    NodeState first(tiny2(), path, StateSharing::Group);
    first.publish(using_on_gpu0(kMiB));
    Channel report;
    Channel done;
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        NodeState second(tiny2(), path, StateSharing::Group);
        second.publish(using_on_gpu0(2 * kMiB));
        report.send("published");
        done.receive();
      } catch (const std::exception& e) {
        report.send(std::string("failed: ") + e.what());
      }
      _exit(0);
    }
    REQUIRE(report.receive() == "published");
    const auto processes = first.processes();
    done.send("go");
    REQUIRE(wait_for(child) == 0);
    CHECK(pids_of(processes) == std::vector<int>{getpid(), child});
    CHECK(first.used_bytes(0) == kMiB);
  }
  SECTION("two users of the group (the state file made by the one with the strictest umask)") {
    if (!running_as_root()) {
      WARN("skipped: acting as a second user needs root");
      return;
    }
    // The folder's group is root's group 0; user nobody joins it as a student joins the class.
    REQUIRE(chmod(scratch.path().c_str(), 0755) == 0);
    REQUIRE(chown(folder.c_str(), 0, 0) == 0);
    REQUIRE(chmod(folder.c_str(), 02770) == 0);
    Channel report;
    Channel done;
    const pid_t child = as_nobody({0}, [&] {
      try {
        NodeState student(tiny2(), path, StateSharing::Group);
        student.publish(using_on_gpu0(2 * kMiB));
        report.send("published");
        done.receive();
        std::string seen;
        for (const int pid : pids_of(student.processes())) seen += std::to_string(pid) + " ";
        report.send(seen);
      } catch (const std::exception& e) {
        report.send(std::string("failed: ") + e.what());
      }
    });
    const std::string published = report.receive();
    REQUIRE(published == "published");
    struct stat file {};
    REQUIRE(stat(path.c_str(), &file) == 0);
    CHECK(file.st_uid == kNobody);
    CHECK(file.st_gid == 0);
    CHECK((file.st_mode & 0777) == 0660);

    NodeState instructor(tiny2(), path, StateSharing::Group);
    instructor.publish(using_on_gpu0(kMiB));
    const auto seen_by_instructor = pids_of(instructor.processes());
    done.send("go");
    const std::string seen_by_student = report.receive();
    REQUIRE(wait_for(child) == 0);
    CHECK(contains(seen_by_instructor, child));
    CHECK(contains(seen_by_instructor, getpid()));
    CHECK(seen_by_student == std::to_string(child) + " " + std::to_string(getpid()) + " ");
  }
}

TEST_CASE("a group folder is checked for the group: others cannot write, and it must be your group's", "[state][shared-machine]") {
  ScratchFolder scratch;
  const std::string folder = scratch / "class";
  REQUIRE(mkdir(folder.c_str(), 0700) == 0);
  const std::string path = folder + "/tiny2.state";
  const std::string precious = "not a node state\n";

  SECTION("missing: never made by gpulab, which would make it nobody else's") {
    const std::string missing = scratch / "no-such-class";
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), missing + "/tiny2.state", StateSharing::Group); }),
               Catch::Contains("'" + missing + "' does not exist") && Catch::Contains("install -d -m 2770 -g GROUP"));
    CHECK(access(missing.c_str(), F_OK) != 0);
  }
  SECTION("world-writable") {
    REQUIRE(chmod(folder.c_str(), 02777) == 0);
    write_file(path, precious);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Group); }),
               Catch::Contains("writable by everyone (mode 02777)") && Catch::Contains("chmod o-w '" + folder + "'"));
    CHECK(read_file(path) == precious);
  }
  SECTION("a symbolic link") {
    const std::string link = scratch / "class-link";
    REQUIRE(symlink(folder.c_str(), link.c_str()) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), link + "/tiny2.state", StateSharing::Group); }),
               Catch::Contains("is a symbolic link"));
  }
  SECTION("a symbolic link as the state file") {
    REQUIRE(chmod(folder.c_str(), 02770) == 0);
    write_file(scratch / "notes.txt", precious);
    REQUIRE(symlink((scratch / "notes.txt").c_str(), path.c_str()) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Group); }), Catch::Contains("is a symbolic link"));
    CHECK(read_file(scratch / "notes.txt") == precious);
  }
  SECTION("a group that is not yours") {
    if (!running_as_root()) {
      WARN("skipped: only root can give a folder to a group it is not in");
      return;
    }
    REQUIRE(chown(folder.c_str(), 0, kNogroup) == 0);
    REQUIRE(chmod(folder.c_str(), 02770) == 0);
    write_file(path, precious);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Group); }),
               Catch::Contains("its group 'nogroup' (gid 65534) is not one of yours"));
    CHECK(read_file(path) == precious);
  }
  SECTION("a state file of another group than the folder's") {
    if (!running_as_root()) {
      WARN("skipped: only root can give a file to a group it is not in");
      return;
    }
    REQUIRE(chmod(folder.c_str(), 02770) == 0);
    write_file(path, precious);
    REQUIRE(chown(path.c_str(), 0, kNogroup) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Group); }),
               Catch::Contains("node state file '" + path + "'") && Catch::Contains("its group 'nogroup' (gid 65534)"));
    CHECK(read_file(path) == precious);
  }
}
