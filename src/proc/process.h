// Running a program the way a shell would, with environment changes and a time limit:
// how the CLI runs lessons and how tests observe them from outside.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulab {

/// A program to run: its arguments, environment changes, time limit and folder.
struct ProcessOptions {
  std::vector<std::string> argv;  ///< the program, then its arguments
  /// Variables to set (value) or remove (nullopt) on top of this process's environment.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  double timeout_s = 120;  ///< seconds before it and its children are killed
  /// Capture stdout/stderr; otherwise the child writes to ours.
  bool capture = true;
  std::string working_directory;  ///< empty: this process's
  /// Start from an empty environment (then `env`), not from this process's: what a grading
  /// box's first process must not see (box.h).
  bool clear_env = false;
  /// A descriptor the child gets as fd 3 (-1: none). Every other descriptor but 0, 1 and 2
  /// is closed in the child, whatever this process had open.
  int pass_fd = -1;
};

/// Closes every descriptor from `first` up (in a child, before it execs).
void close_descriptors_from(int first);

/// How a program ended, and what it printed when captured.
struct ProcessResult {
  int exit_code = -1;      ///< -1 unless the program exited
  int signal = 0;          ///< the signal that ended it, 0 if none
  bool timed_out = false;  ///< stopped by us after timeout_s
  std::string out;  ///< its stdout, when captured
  std::string err;  ///< its stderr, when captured

  /// It exited with code 0.
  bool ok() const { return exit_code == 0; }
  /// "exited with code 1", "crashed with SIGSEGV (signal 11)", "did not finish within 60 s".
  std::string outcome(double timeout_s) const;
};

/// Runs the program to completion or until the time limit, when it and its children are
/// killed. Throws std::runtime_error if it cannot be started.
ProcessResult run_process(const ProcessOptions& options);

}  // namespace gpulab
