// A program left running in the background, as `program &` in a shell: the test writes to
// its stdin, reads its stdout line by line and ends it when it chooses — with SIGKILL if it
// likes. gpulab::run_process only runs programs to completion.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "lesson_run.h"

namespace gpulab::test {

class Child {
 public:
  /// Starts `argv` (argv[0] a path) with `env` applied on top of a clean CUDA environment
  /// (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, GPULAB_NODE unset) and GPULAB_STATE_DIR set
  /// to `state_dir`. Its stderr goes to a file, read by err().
  Child(const std::vector<std::string>& argv, const std::string& state_dir, const Env& env = {});
  /// Kills the program (SIGKILL) and reaps it if it is still there.
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  /// The next line the program prints, without its newline. Fails the test when the program
  /// closes stdout first, or prints nothing for `limit_s` seconds — a guard against a hung
  /// program, not a timing check.
  std::string read_line(double limit_s = 60);
  void write_line(const std::string& line);
  /// Closes the program's stdin (EOF: the test programs then finish).
  void close_stdin();
  /// Sends SIGKILL and waits until the process has ended. With reap = false it stays a
  /// zombie — ended, but not yet collected by its parent — until the destructor or wait().
  void kill_and_wait(bool reap);
  /// Waits for the program to end and collects it (out: what it printed and nobody read yet).
  ProcessResult wait(double limit_s = 60);
  /// What the program wrote to stderr so far.
  std::string err() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string err_path_;
  std::string buffer_;
  bool reaped_ = false;
};

}  // namespace gpulab::test
