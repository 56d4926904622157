// libgpulab's side of a prestarted lesson program (report/prestart_entry.cpp calls these
// from the program's first initialiser; proc/prestart.h serves the runs).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "proc/prestart.h"

extern "C" bool gpulab_prestarted_run(bool can_continue, int* argc, char*** argv) {
  if (std::getenv("GPULAB_PRESTART") == nullptr) return false;
  // The program cannot go on from its entry as a fresh one would (see prestart_entry.cpp):
  // serve nothing. The client finds the parent gone and starts each run afresh.
  if (!can_continue) std::_Exit(0);
  auto forked = gpulab::serve_prestarted_runs(gpulab::cuda_not_started);
  if (!forked) return false;  // not a parent after all: run as started
  // The run's argv for the rest of its life, as the kernel's would be: in static storage,
  // which LeakSanitizer counts as reachable (the run's __cxa_finalize runs its leak check).
  static std::vector<std::string> kept;
  static std::vector<char*> pointers;
  kept = std::move(*forked);
  for (auto& arg : kept) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  *argc = static_cast<int>(kept.size());
  *argv = pointers.data();
  return true;
}

extern "C" [[noreturn]] void gpulab_prestarted_exit(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // at_quick_exit handlers still run: the simulated driver leaves the node state there.
  std::quick_exit(code);
}
