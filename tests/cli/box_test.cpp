// The grading box's limits (grading/box.h), from inside: a probe in the box forks children
// that stay, and allocates memory it touches, until the box stops it. As root the box
// keeps its limits with a cgroup; as any other user, with rlimits in its user namespace.
// CI runs as root, so this test also runs the probes from a child that has become an
// unprivileged user (uid 65533, which no other test uses: RLIMIT_NPROC counts a user's
// processes system-wide). Both ways are exercised wherever it runs.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "grading/box.h"
#include "proc/confine.h"
#include "proc/prestart.h"
#include "lesson_run.h"
#include "proc/process.h"
#include "proc/text_file.h"

using namespace gpulab;
using namespace gpulab::grading;
namespace fs = std::filesystem;

namespace {

constexpr int kProcesses = 24;
constexpr std::uint64_t kMemoryMiB = 256;
constexpr uid_t kUser = 65533;

// Forks children that sleep (up to 200), then prints how many it made.
constexpr const char* kForkProbe = R"(
import os, time
made = 0
try:
    while made < 200:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
except OSError:
    pass
print(made, flush=True)
)";

// Allocates and touches 16 MiB at a time (up to 2 GiB), printing the total after each.
constexpr const char* kMemoryProbe = R"(
kept = []
try:
    while len(kept) < 128:
        kept.append(b"\x01" * (16 << 20))
        print(len(kept) * 16, flush=True)
except MemoryError:
    pass
)";

BoxResult in_box(const char* probe, const std::string& student) {
  BoxLimits limits;
  limits.wall_s = 120;
  limits.processes = kProcesses;
  limits.memory_bytes = kMemoryMiB << 20;
  limits.disk_bytes = 16 << 20;
  BoxLayout layout;
  layout.student = student;  // an empty tree
  return run_in_box(layout, limits, {"/usr/bin/python3", "-c", probe});
}

// The last number the probe printed.
long last_number(const std::string& out) {
  const auto end = out.find_last_not_of("\n ");
  if (end == std::string::npos) return -1;
  const auto start = out.find_last_of('\n', end);
  return std::strtol(out.c_str() + (start == std::string::npos ? 0 : start + 1), nullptr, 10);
}

std::string shown(const char* probe, const BoxResult& box) {
  return fmt::format("{} probe: {}, kept by {}, limits hit: {}\nout: {}\nerr: {}\n", probe, box.process.outcome(120),
                     box.enforcement, fmt::join(box.limits_hit, ","), box.process.out, box.process.err);
}

bool hit(const BoxResult& box, const std::string& limit) {
  return std::find(box.limits_hit.begin(), box.limits_hit.end(), limit) != box.limits_hit.end();
}

// Runs both probes as the user this process is; "" when the box held them as it should.
std::string limits_problems(const std::string& student) {
  const bool root = geteuid() == 0;
  std::string problems;
  auto expect = [&](bool holds, const std::string& what) {
    if (!holds) problems += "expected " + what + "\n";
  };
  if (const std::string why = box_unavailable(); !why.empty()) return why;

  const BoxResult forks = in_box(kForkProbe, student);
  const long made = last_number(forks.process.out);
  expect(forks.enforcement.find(root ? "cgroup" : "rlimits") != std::string::npos, root ? "a cgroup" : "rlimits");
  expect(forks.process.exit_code == 0, "the fork probe to end on its own");
  expect(made >= 1 && made < kProcesses, fmt::format("between 1 and {} children, never near 200", kProcesses - 1));
  if (root) expect(hit(forks, "processes"), "the processes limit reported as hit");
  if (!problems.empty()) problems += shown("fork", forks);

  const BoxResult memory = in_box(kMemoryProbe, student);
  const long allocated = last_number(memory.process.out);
  const std::size_t before = problems.size();
  expect(allocated >= 16 && allocated < static_cast<long>(kMemoryMiB),
         fmt::format("between 16 and {} MiB allocated, never near 2 GiB", kMemoryMiB));
  if (root) {  // the cgroup kills the probe (bwrap passes its SIGKILL on as 128 + 9), and says so
    expect(memory.process.signal == SIGKILL || memory.process.exit_code == 128 + SIGKILL, "the probe killed");
    expect(hit(memory, "memory"), "the memory limit reported as hit");
  } else {  // the allocation fails (RLIMIT_AS) and the probe ends on its own
    expect(memory.process.exit_code == 0, "the memory probe to end on its own");
  }
  if (problems.size() != before) problems += shown("memory", memory);
  return problems;
}

// Sets environment variables for one test case and puts back what was there (the test is
// the grader here: the box's variables are its own for the case's length).
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) setenv(name.c_str(), old->c_str(), 1);
      else unsetenv(name.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace

TEST_CASE("a grading box stops a fork loop and a memory hog at its limits, as root and as a user", "[box]") {
  const std::string student = test::fresh_state_dir();
  chmod(student.c_str(), 0755);
  const std::string problems = limits_problems(student);
  INFO("as uid " << geteuid() << ":\n" << problems);
  CHECK(problems.empty());
  if (geteuid() != 0) return;

  // As an unprivileged user: the rlimit way, which root never takes. The child writes what
  // it found to a file of its own, in a folder it may write.
  const std::string reports = test::fresh_state_dir();
  chmod(reports.c_str(), 0777);
  const std::string report = reports + "/as-user";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kUser) != 0 || setuid(kUser) != 0) _exit(3);
    std::ofstream(report) << limits_problems(student) << "(done)";
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const std::string found = read_text_file(report);
  INFO("as uid " << kUser << ":\n" << found);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(found == "(done)");
}

// In a box, each program the student built runs one level further in (proc/confine.h): it
// cannot see the process that started it (the checks, the grader), cannot write its scratch,
// and `kill -9 -1` ends only its own. Here the test is the grader: GPULAB_CONFINE names the
// run area, TMPDIR the scratch that must stay hidden.
TEST_CASE("a confined run cannot see, write to or signal what started it; prestarted, it prints what it prints fresh",
          "[box]") {
  if (const std::string why = box_unavailable(); !why.empty()) FAIL(why);
  const std::string area = test::fresh_state_dir();
  const std::string scratch = test::fresh_state_dir();
  std::ofstream(scratch + "/verdict") << "the grader's";
  const ScopedEnv box({{kConfineVariable, area}, {"TMPDIR", scratch}});

  ProcessOptions options;
  options.argv = confined({"/bin/sh", "-c",
                           "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo;"
                           "echo scratch $(ls " + scratch + ");"
                           "echo forged > " + scratch + "/verdict || echo refused;"
                           "echo mine > " + area + "/run && echo wrote;"
                           "echo tmp $TMPDIR; kill -9 -1; echo survived"});
  options.timeout_s = 60;
  const ProcessResult run = run_process(options);
  INFO(run.outcome(60) << "\nout:\n" << run.out << "err:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out.rfind("bwrap ", 0) == 0);                 // pid 1 is bubblewrap's init...
  CHECK(run.out.find("box_tests") == std::string::npos);  // ...and the test is not there
  CHECK(run.out.find("scratch\n") != std::string::npos);
  CHECK(run.out.find("refused\n") != std::string::npos);
  CHECK(read_text_file(scratch + "/verdict") == "the grader's");
  CHECK(run.out.find("wrote\n") != std::string::npos);
  CHECK(run.out.find("tmp " + area + "\n") != std::string::npos);
  CHECK(run.out.find("survived\n") != std::string::npos);

  // A crash is the program's: bubblewrap's 128 + N is read back as signal N.
  options.argv = confined({"/bin/sh", "-c", "kill -SEGV $$"});
  ProcessResult crash = run_process(options);
  program_end_of_confined(crash);
  CHECK(crash.signal == SIGSEGV);

  // Prestarted in the namespace, a run prints what a fresh confined run prints.
  const std::string probe = test::bin_dir() + "/fresh-process-probe";
  REQUIRE(fs::exists(probe));
  PrestartedProgram parent(probe);
  ProcessOptions probe_run;
  probe_run.argv = {probe, "1,2", "second"};
  probe_run.env = {{"PROBE_VALUE", "the run's"}, {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt},
                   {"GPULAB_STATE_DIR", test::fresh_state_dir()}};
  probe_run.timeout_s = 60;
  const auto forked = parent.run(probe_run);
  ProcessOptions fresh_run = probe_run;
  fresh_run.argv = confined(probe_run.argv);
  ProcessResult fresh = run_process(fresh_run);
  program_end_of_confined(fresh);
  REQUIRE(forked);
  INFO("fresh:\n" << fresh.out << fresh.err << "prestarted:\n" << forked->out << forked->err);
  CHECK(fresh.out.find("CUDA sees 2 GPUs\n") != std::string::npos);
  CHECK(forked->out == fresh.out);
  CHECK(forked->exit_code == fresh.exit_code);

  // A parent made in a thread that has ended (a generated scenario's std::async thread makes
  // the reference's) still serves: bubblewrap's --die-with-parent follows the starting
  // thread, and once killed the namespace's runs all ended with SIGKILL.
  // As there, the thread makes the parent and runs the first scenario before it ends.
  std::unique_ptr<PrestartedProgram> made_elsewhere;
  std::optional<ProcessResult> first;
  std::thread([&] {
    made_elsewhere = std::make_unique<PrestartedProgram>(probe);
    first = made_elsewhere->run(probe_run);
  }).join();
  REQUIRE(first);
  CHECK(first->out == fresh.out);
  for (int again = 0; again < 2; ++again) {
    const auto served = made_elsewhere->run(probe_run);
    REQUIRE(served);
    INFO("run " << again << " of a parent whose thread ended: " << served->outcome(60) << "\n" << served->err);
    CHECK(served->signal == 0);
    CHECK(served->out == fresh.out);
  }
}

// The reference solutions are in the box for the checks (GPULAB_REFERENCE_DIR): hidden from
// every confined run but the one that runs a reference, and writable by none.
TEST_CASE("a confined run sees the reference solutions only when it runs one", "[box]") {
  if (const std::string why = box_unavailable(); !why.empty()) FAIL(why);
  const std::string area = test::fresh_state_dir();
  const std::string references = test::fresh_state_dir();
  const std::string reference = references + "/solution-99";
  std::ofstream(reference) << "#!/bin/sh\necho reference ran; ls " << references << "; echo x >> " << reference
                           << " || echo refused\n";
  fs::permissions(reference, fs::perms::owner_all);
  // As in a box: the grader's scratch (TMPDIR) is a place of its own, apart from both.
  const std::string scratch = test::fresh_state_dir();
  const ScopedEnv box({{kConfineVariable, area}, {kReferenceVariable, references}, {"TMPDIR", scratch}});
  ProcessOptions options;
  options.timeout_s = 60;
  options.argv = confined({"/bin/sh", "-c", "ls " + references + "; cat " + reference + " || echo hidden; " + reference + " || echo not-run"});
  const ProcessResult student = run_process(options);
  INFO("student:\n" << student.out << student.err);
  CHECK(student.out.find("hidden\n") != std::string::npos);
  CHECK(student.out.find("not-run\n") != std::string::npos);
  CHECK(student.out.find("reference ran") == std::string::npos);

  options.argv = confined({reference});
  const ProcessResult checks = run_process(options);
  INFO("the reference's own run:\n" << checks.out << checks.err);
  CHECK(checks.out.find("reference ran\nsolution-99\n") != std::string::npos);
  CHECK(checks.out.find("refused\n") != std::string::npos);  // read-only even to itself
}
