// Where a prestarted lesson program forks its runs (proc/prestart.h). Linked into every
// lesson, solution and mutant program itself, not into libgpulab: its initialiser runs first
// among the program's own, after every shared library's (LibTorch's operator registrations,
// libgpulab's simulated backend: the half second prestarting saves). A forked run then goes
// on exactly as a freshly exec'd program would from that point: the program's remaining
// static initialisers, then main(), each with the run's argv and environment. So code at
// the top of main() or in a static initialiser sees the scenario, never the parent's.
#include <cstddef>

extern char** environ;

namespace {
using Initialiser = void (*)(int, char**, char**);
using Finaliser = void (*)();
}  // namespace

extern "C" {
// The linker's bounds of this program's .init_array and .fini_array, and its module handle.
extern Initialiser __init_array_start[] __attribute__((visibility("hidden")));
extern Initialiser __init_array_end[] __attribute__((visibility("hidden")));
extern Finaliser __fini_array_start[] __attribute__((visibility("hidden")));
extern Finaliser __fini_array_end[] __attribute__((visibility("hidden")));
extern void* __dso_handle __attribute__((visibility("hidden")));
void __cxa_finalize(void* module);

// The program's main(), whatever its signature (C++ does not let a program name main).
int gpulab_program_main(int argc, char** argv, char** envp) __asm__("main");

// libgpulab (report/prestarted_run.cpp).
bool gpulab_prestarted_run(bool can_continue, int* argc, char*** argv);
[[noreturn]] void gpulab_prestarted_exit(int code);
}

namespace {

// Priority 101, the first a program may use: before every default-priority initialiser
// of the program (its C++ static objects), after the shared libraries' (they load first).
__attribute__((constructor(101))) void gpulab_prestart_entry(int, char**, char**) {
  Initialiser* self = nullptr;
  for (Initialiser* entry = __init_array_start; entry != __init_array_end; ++entry)
    if (*entry == &gpulab_prestart_entry) self = entry;
  int argc = 0;
  char** argv = nullptr;
  // Returns false at once in a normal run; in a prestarted parent it serves runs and never
  // returns; it returns true in each forked run, whose argv, environment, folder and output
  // are the run's. Without `self` a run could not go on from here: the parent then leaves.
  if (!gpulab_prestarted_run(self != nullptr, &argc, &argv)) return;
  for (Initialiser* entry = self + 1; entry != __init_array_end; ++entry) (*entry)(argc, argv, environ);
  const int code = gpulab_program_main(argc, argv, environ);
  // As exit() would, for this program's own part: its atexit handlers and static objects'
  // destructors, then its .fini_array. LibTorch's unregistrations (a fifth of a second that
  // nobody observes) are skipped: gpulab_prestarted_exit flushes and quick_exits.
  __cxa_finalize(&__dso_handle);
  for (Finaliser* entry = __fini_array_end; entry != __fini_array_start;) (*--entry)();
  gpulab_prestarted_exit(code);
}

}  // namespace
