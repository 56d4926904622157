// The exit codes of `gpulab` (README, "Exit codes"): scripts and graders rely on them.
#pragma once

namespace gpulab::cli {

enum ExitCode : int {
  kOk = 0,            ///< ran and passed
  kChecksFailed = 1,  ///< checks failed, or the program reported an error (exit code ≠ 0)
  kUsage = 2,         ///< bad command line, unknown lesson, broken node or manifest file
  kBuildFailed = 3,   ///< the learner's file does not compile (set by the ./gpulab script)
  kCrashed = 4,       ///< the program was killed by a signal (SIGSEGV, SIGABRT, ...)
  kTimedOut = 5,      ///< the program did not finish within its time limit
};

}  // namespace gpulab::cli
