// The box a student's code is built and run in when a class is graded (gpulab class grade).
// Bubblewrap gives it:
//   - a read-only view of the system and of what grading needs from this build;
//   - the student's tree, read-only, at /student;
//   - as the only places it can write, memory file systems of a fixed size each: /tmp (the
//     run area, where the student's programs write), /grader (the grader's scratch, which
//     those programs never see: proc/confine.h), /dev/shm, and the build's bin/ (where the
//     student's programs are linked); the root and /dev are read-only;
//   - an environment of the variables named here only;
//   - no network, no other student's tree, none of the instructor's files.
// Processes, memory and time are limited; a limit that was hit is reported by name. The
// box's result travels on a descriptor of the grader's (fd 3 in the box), which no program
// the student built inherits or can find.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proc/process.h"

namespace gpulab::grading {

/// Where the student's tree is in the box.
inline constexpr const char* kStudentInBox = "/student";
/// Where the student's programs may write (GPULAB_CONFINE, TMPDIR of their runs).
inline constexpr const char* kRunArea = "/tmp";
/// The grader's scratch in the box (its TMPDIR), hidden from the student's programs.
inline constexpr const char* kGraderScratch = "/grader";
/// Where the reference solutions are in the box (BoxLayout::references).
inline constexpr const char* kReferencesInBox = "/reference";

struct BoxLimits {
  double wall_s = 900;                         ///< the whole box: build and every lesson's checks
  std::uint64_t memory_bytes = 6ull << 30;     ///< all its processes together (cgroup) or each (rlimit)
  int processes = 256;                         ///< at once
  std::uint64_t disk_bytes = 512ull << 20;     ///< each of /tmp, /grader, /dev/shm and bin/
};

/// What the box shows besides the system.
struct BoxLayout {
  std::string student;                 ///< the student's tree, read-only at kStudentInBox
  std::vector<std::string> read_only;  ///< folders or files bound read-only at their own path
  std::string bin;                     ///< a fresh, writable memory file system at this path...
  std::vector<std::string> programs;   ///< ...with these files of it bound read-only
  /// The reference solutions, bound read-only in kReferencesInBox (named there by
  /// kReferenceVariable, proc/confine.h): the checks compare generated scenarios with them,
  /// and every confined run but theirs has that folder hidden.
  std::vector<std::string> references;
  std::vector<std::pair<std::string, std::string>> env;  ///< the only variables set (with PATH, HOME, TMPDIR)
};

struct BoxResult {
  ProcessResult process;
  std::vector<std::string> limits_hit;  ///< "time", "processes", "memory" (as far as they can be told)
  std::string enforcement;              ///< how the limits were kept, e.g. "cgroup v1 (pids, memory)"
};

/// "" when bubblewrap can make a box here; otherwise why not.
std::string box_unavailable();

/// Bubblewrap's command line for `command` in a box laid out as `layout` within `limits`
/// (`memory_counted`: a cgroup counts its memory, else an rlimit per process does). Pure:
/// run_in_box runs it, after joining the box's cgroup.
std::vector<std::string> box_arguments(const BoxLayout& layout, const BoxLimits& limits,
                                       const std::vector<std::string>& command, bool memory_counted);

/// Runs `command` in a box laid out as `layout`, within `limits`; `result_fd` (-1: none) is
/// its fd 3. Throws std::runtime_error when the box cannot be made.
BoxResult run_in_box(const BoxLayout& layout, const BoxLimits& limits, const std::vector<std::string>& command,
                     int result_fd = -1);

}  // namespace gpulab::grading
