// A program a prestarted parent serves (tests/unit/proc/prestart_test.cpp): it forks its runs
// where gpulab::run_lesson would, then acts on its arguments as a fresh process would.
//   prestart-probe env NAME   prints NAME's value (or "(unset)") and the folder it runs in
//   prestart-probe exit N     exits with N;  crash: raises SIGTERM (a signal the sanitizers
//   leave alone);  hang: sleeps for good
// PROBE_REFUSE set in the parent's environment: the parent refuses every run.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "proc/prestart.h"

int main(int argc, char** argv) {
  const bool refuse = std::getenv("PROBE_REFUSE") != nullptr;
  std::vector<std::string> args(argv, argv + argc);
  if (auto forked = gpulab::serve_prestarted_runs([refuse] { return !refuse; })) args = *forked;
  if (args.size() < 2) return 64;
  const std::string what = args[1];
  if (what == "env" && args.size() == 3) {
    const char* value = std::getenv(args[2].c_str());
    char folder[4096] = "";
    std::printf("%s in %s pid %d\n", value != nullptr ? value : "(unset)", getcwd(folder, sizeof folder), getpid());
    std::fprintf(stderr, "to stderr\n");
    return 0;
  }
  if (what == "exit" && args.size() == 3) return std::atoi(args[2].c_str());
  if (what == "crash") std::raise(SIGTERM);
  if (what == "hang") pause();
  return 64;
}
