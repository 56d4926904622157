// A lesson program's shape that a prestarted parent must not change (tests/sim/prestart_test.cpp):
// what it prints depends on what a fresh process sees before and after main() starts.
//   static initialiser   reads PROBE_VALUE
//   constructor          sees the argument count the C runtime passes initialisers
//   main()               reads its arguments and PROBE_VALUE again, sets CUDA_VISIBLE_DEVICES
//                        from its first argument (lesson 03's argv-at-the-top answer), then
//                        asks CUDA how many GPUs it sees
//   at exit              an atexit handler and a static object's destructor print
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

namespace {
std::string from_environment() {
  const char* value = std::getenv("PROBE_VALUE");
  return value != nullptr ? value : "(unset)";
}
const std::string kAtStaticInit = from_environment();
int constructor_argc = -1;

__attribute__((constructor)) void constructor_sees(int argc, char**, char**) { constructor_argc = argc; }

struct SaysGoodbye {
  ~SaysGoodbye() { std::printf("static destructor ran\n"); }
} goodbye;
}  // namespace

int main(int argc, char** argv) {
  std::atexit([] { std::printf("atexit handler ran\n"); });
  std::string args;
  for (int i = 1; i < argc; ++i) args += std::string(" ") + argv[i];
  if (argc > 1) setenv("CUDA_VISIBLE_DEVICES", argv[1], 1);
  std::printf("static initialiser saw PROBE_VALUE=%s\n", kAtStaticInit.c_str());
  std::printf("constructor saw argc=%d\n", constructor_argc);
  std::printf("main saw argc=%d:%s, PROBE_VALUE=%s\n", argc, args.c_str(), from_environment().c_str());
  std::printf("CUDA sees %d GPUs\n", static_cast<int>(torch::cuda::device_count()));
  return argc;
}
