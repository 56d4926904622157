// How a command or a graded program ended. The README's exit codes are these, in this
// order; cli/main.cpp alone turns an outcome into a process's exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

enum class Outcome : int {
  kOk = 0,            ///< ran and passed
  kChecksFailed = 1,  ///< checks failed, or the program ran and reported an error (exit code != 0)
  kUsage = 2,         ///< bad command line, unknown lesson, broken node or manifest file
  kBuildFailed = 3,   ///< the learner's file does not compile
  kCrashed = 4,       ///< the program was killed by a signal (SIGSEGV, SIGABRT, ...)
  kTimedOut = 5,      ///< the program did not finish within its time limit
};

/// Thrown to end a command with `outcome` once it has said why (its message is printed).
struct Ended {
  Outcome outcome;
};

/// A command that cannot go on: `what()` says why (main prints it after "gpulab: "), and
/// `outcome` is how it ends (kUsage for bad input, kBuildFailed when the grader's own
/// programs do not build, ...).
struct Failure : std::runtime_error {
  Failure(Outcome ended_as, const std::string& why) : std::runtime_error(why), outcome(ended_as) {}
  Outcome outcome;
};

/// Thrown by `gpulab launch` to end with its failing worker's own exit code, as torchrun does.
struct EndedLike {
  int exit_code;
};

}  // namespace gpulab
