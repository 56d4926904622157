// The private node state folder on a shared machine (docs/shared-node.md): whatever another
// user prepared — a symbolic link, a folder of theirs, a folder anyone can write to — gpulab
// refuses it with a message that says where, why and how to fix it, and the file that
// was aimed at is left byte for byte as it was.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "state/node_state.h"
#include "state_test_support.h"

using namespace gpulab;
using namespace gpulab::state_test;

namespace {

const std::string kPrecious = "a file another user wants gpulab to overwrite\n";

mode_t mode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(lstat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

}  // namespace

TEST_CASE("a symbolic link as the state file is refused and the linked file is untouched", "[state][shared-machine]") {
  ScratchFolder state;
  ScratchFolder victim;
  const std::string path = state / "tiny2.state";

  SECTION("a link to an existing file") {
    write_file(victim / "notes.txt", kPrecious);
    REQUIRE(symlink((victim / "notes.txt").c_str(), path.c_str()) == 0);
    const std::string error = refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); });
    CHECK_THAT(error, Catch::Contains("'" + path + "'") && Catch::Contains("is a symbolic link") &&
                          Catch::Contains("to '" + (victim / "notes.txt") + "'") && Catch::Contains("rm '" + path + "'"));
    CHECK(read_file(victim / "notes.txt") == kPrecious);
  }
  SECTION("a link to a file that does not exist yet is not created through") {
    REQUIRE(symlink((victim / "planted").c_str(), path.c_str()) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); }), Catch::Contains("is a symbolic link"));
    CHECK(access((victim / "planted").c_str(), F_OK) != 0);
  }
}

TEST_CASE("a second name (hard link) of another file as the state file is refused", "[state][shared-machine]") {
  ScratchFolder state;
  ScratchFolder victim;
  write_file(victim / "notes.txt", kPrecious);
  const std::string path = state / "tiny2.state";
  REQUIRE(link((victim / "notes.txt").c_str(), path.c_str()) == 0);
  CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); }),
             Catch::Contains("'" + path + "'") && Catch::Contains("2 names (hard links)"));
  CHECK(read_file(victim / "notes.txt") == kPrecious);
}

TEST_CASE("a state file that is not a regular file is refused", "[state][shared-machine]") {
  ScratchFolder state;
  const std::string path = state / "tiny2.state";
  SECTION("a named pipe") {
    REQUIRE(mkfifo(path.c_str(), 0600) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); }), Catch::Contains("not a regular file"));
  }
  SECTION("a folder") {
    REQUIRE(mkdir(path.c_str(), 0700) == 0);
    CHECK_THAT(refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); }), Catch::Contains("it is a folder"));
  }
}

TEST_CASE("a symbolic link as the state folder is refused and the folder it points to is untouched", "[state][shared-machine]") {
  ScratchFolder scratch;
  ScratchFolder victim;
  write_file(victim / "tiny2.state", kPrecious);  // the wrong size: it would have been rebuilt
  const std::string folder = scratch / "gpulab";
  REQUIRE(symlink(victim.path().c_str(), folder.c_str()) == 0);
  for (const std::string& given : {folder, folder + "/"}) {
    const std::string error = refusal([&] { NodeState opened(tiny2(), given + "/tiny2.state", StateSharing::Private); });
    CHECK_THAT(error, Catch::Contains("node state folder '" + folder + "'") && Catch::Contains("is a symbolic link") &&
                          Catch::Contains("GPULAB_STATE_DIR"));
  }
  CHECK(read_file(victim / "tiny2.state") == kPrecious);
}

TEST_CASE("a state folder that anyone else can write to is refused", "[state][shared-machine]") {
  ScratchFolder state;
  write_file(state / "tiny2.state", kPrecious);
  const std::string path = state / "tiny2.state";
  std::string writable_by;
  SECTION("group-writable") {
    REQUIRE(chmod(state.path().c_str(), 0770) == 0);
    writable_by = "writable by its group (mode 0770)";
  }
  SECTION("world-writable") {
    REQUIRE(chmod(state.path().c_str(), 0777) == 0);
    writable_by = "writable by everyone (mode 0777)";
  }
  SECTION("world-writable with the sticky bit, like /tmp") {
    REQUIRE(chmod(state.path().c_str(), 01777) == 0);
    writable_by = "writable by everyone (mode 01777)";
  }
  const std::string error = refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); });
  CHECK_THAT(error, Catch::Contains("node state folder '" + state.path() + "'") && Catch::Contains(writable_by) &&
                        Catch::Contains("chmod 700 '" + state.path() + "'") && Catch::Contains("docs/shared-node.md"));
  CHECK(read_file(path) == kPrecious);
}

TEST_CASE("a state folder or file that belongs to another user is refused", "[state][shared-machine]") {
  if (!running_as_root()) {
    WARN("skipped: only root can hand a folder to another user");
    return;
  }
  ScratchFolder state;
  const std::string path = state / "tiny2.state";
  write_file(path, kPrecious);
  SECTION("the folder (another user made /tmp/gpulab-<uid> first)") {
    REQUIRE(chown(state.path().c_str(), kNobody, kNogroup) == 0);
    const std::string error = refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); });
    CHECK_THAT(error, Catch::Contains("node state folder '" + state.path() + "'") &&
                          Catch::Contains("belongs to user 'nobody' (uid 65534), not to you") &&
                          Catch::Contains("GPULAB_STATE_DIR"));
  }
  SECTION("the file") {
    REQUIRE(chown(path.c_str(), kNobody, kNogroup) == 0);
    const std::string error = refusal([&] { NodeState opened(tiny2(), path, StateSharing::Private); });
    CHECK_THAT(error, Catch::Contains("node state file '" + path + "'") && Catch::Contains("belongs to user 'nobody'"));
  }
  CHECK(read_file(path) == kPrecious);
}

TEST_CASE("a missing state folder is made private, the folders above it too", "[state]") {
  ScratchFolder scratch;
  const std::string folder = scratch / "lab/state";
  NodeState state(tiny2(), folder + "/tiny2.state", StateSharing::Private);
  CHECK(mode_of(scratch / "lab") == 0700);
  CHECK(mode_of(folder) == 0700);
  CHECK(mode_of(folder + "/tiny2.state") == 0600);
  CHECK(state.processes().empty());
}

TEST_CASE("a broken state file of our own, in our own folder, is still rebuilt", "[state]") {
  ScratchFolder state;
  const std::string path = state / "tiny2.state";
  write_file(path, kPrecious);
  NodeState node_state(tiny2(), path, StateSharing::Private);
  CHECK(read_file(path) != kPrecious);
  CHECK(node_state.processes().empty());
}

TEST_CASE("the state folder is the user's own: XDG_RUNTIME_DIR first, else one per uid under /tmp", "[state]") {
  ScopedEnv no_state_dir("GPULAB_STATE_DIR", std::nullopt);
  ScopedEnv not_shared("GPULAB_SHARED_NODE", std::nullopt);
  SECTION("XDG_RUNTIME_DIR") {
    ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/4242");
    CHECK(NodeState::default_directory() == "/run/user/4242/gpulab");
  }
  SECTION("no XDG_RUNTIME_DIR") {
    ScopedEnv runtime("XDG_RUNTIME_DIR", std::nullopt);
    CHECK(NodeState::default_directory() == "/tmp/gpulab-" + std::to_string(geteuid()));
  }
  SECTION("GPULAB_STATE_DIR wins") {
    ScopedEnv state_dir("GPULAB_STATE_DIR", "/somewhere/else");
    CHECK(NodeState::default_directory() == "/somewhere/else");
  }
}

TEST_CASE("GPULAB_SHARED_NODE takes 1 or 0 and a shared node needs GPULAB_STATE_DIR", "[state]") {
  ScopedEnv no_state_dir("GPULAB_STATE_DIR", std::nullopt);
  SECTION("1 without GPULAB_STATE_DIR") {
    ScopedEnv shared("GPULAB_SHARED_NODE", "1");
    CHECK(state_sharing_from_environment() == StateSharing::Group);
    CHECK_THROWS_WITH(NodeState::default_directory(),
                      Catch::Contains("GPULAB_SHARED_NODE=1 needs GPULAB_STATE_DIR") && Catch::Contains("docs/shared-node.md"));
  }
  SECTION("0 or empty") {
    ScopedEnv shared("GPULAB_SHARED_NODE", GENERATE(std::string("0"), std::string()));
    CHECK(state_sharing_from_environment() == StateSharing::Private);
  }
  SECTION("anything else") {
    ScopedEnv shared("GPULAB_SHARED_NODE", "yes");
    CHECK_THROWS_WITH(state_sharing_from_environment(), Catch::Contains("GPULAB_SHARED_NODE is 'yes'"));
  }
}
