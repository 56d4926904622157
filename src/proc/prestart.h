// A prestarted program: one process that has loaded the program (for a lesson, LibTorch and
// its static set-up, about half a second) and then forks a fresh copy of itself for each run,
// with that run's arguments, environment, folder and output. The checks run a lesson a dozen
// times, under a dozen environments: each run now starts in milliseconds.
//
// Faithful only while the parent has not started CUDA: a run must read its own
// CUDA_VISIBLE_DEVICES at its first CUDA call, as a freshly started program does (and a real
// CUDA process cannot fork once CUDA is initialised). The parent refuses to fork when
// `may_fork` says no, and the client then starts the program afresh instead.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proc/process.h"

namespace gpulab {

/// One run, as the client asks for it: what a fresh exec of the program would have been
/// given. On the wire: NUL-terminated strings (folder, argument count, arguments,
/// NAME=value...); the run's stdout and stderr travel beside it as SCM_RIGHTS.
struct PrestartRequest {
  std::string folder;
  std::vector<std::string> argv;  ///< at least the program
  std::vector<std::string> env;   ///< NAME=value, the whole environment
};
std::string encode_prestart_request(const PrestartRequest& request);
/// nullopt for anything encode_prestart_request cannot have written.
std::optional<PrestartRequest> decode_prestart_request(const std::string& text);

/// The program side, called first thing in the program (before it reads its arguments or
/// its environment). In a normal run: returns nullopt at once. In a prestarted parent
/// (GPULAB_PRESTART set by PrestartedProgram): never returns in the parent, which serves runs
/// until its client goes away; returns in each forked run, with the run's arguments
/// (argv[0] first), after its environment, working folder, stdout and stderr were set.
std::optional<std::vector<std::string>> serve_prestarted_runs(const std::function<bool()>& may_fork);

/// The client side: starts `program` once as a prestarted parent (under this process's
/// environment) and runs it through the parent. Thread-safe. The parent stops when this is
/// destroyed (or this process ends).
class PrestartedProgram {
 public:
  explicit PrestartedProgram(std::string program);
  ~PrestartedProgram();
  PrestartedProgram(const PrestartedProgram&) = delete;
  PrestartedProgram& operator=(const PrestartedProgram&) = delete;

  /// What run_process(options) would return (options.argv[0] is this program; options.env
  /// applies on top of this process's environment), from a fork of the parent. nullopt when
  /// the parent cannot serve it (it refused or is gone): then run the program afresh.
  std::optional<ProcessResult> run(const ProcessOptions& options);

 private:
  std::string program_;
  std::string address_;  // the parent's socket, in the abstract namespace
  pid_t parent_ = -1;
  int lifeline_ = -1;    // the parent stops when this pipe closes
  bool confined_ = false;  // started in a namespace of its own (proc/confine.h)
};

}  // namespace gpulab
