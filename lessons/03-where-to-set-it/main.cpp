// Lesson 03 — Where to set CUDA_VISIBLE_DEVICES (article claims A1.1–A1.6)
//
// The driver reads CUDA_VISIBLE_DEVICES once, at the process's first CUDA call. Whatever
// value the process has then — inherited from the shell or a script, or set in code with
// setenv — decides which physical GPU cuda:0 is. The scripts beside this file set it the
// article's other ways; this program is the in-code way:
//   --setenv-before IDS   setenv before the first CUDA call (the article's way 1)
//   --setenv-after IDS    setenv after it: silently ignored (the catch the article misses)
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"

// The value after `flag` in `args`, or "" when the flag is absent.
std::string option(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("03", argc, argv, [](gpulab::Lesson& lesson) {
    const std::string before = option(lesson.args(), "--setenv-before");
    const std::string after = option(lesson.args(), "--setenv-after");

    // The first CUDA call: the driver starts and reads CUDA_VISIBLE_DEVICES, once.
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));
    // TODO: this setenv is meant to come before CUDA starts. Move it above the first CUDA call.
    if (!before.empty()) setenv("CUDA_VISIBLE_DEVICES", before.c_str(), /*overwrite=*/1);

    // Too late on purpose: CUDA is running and will not look at the variable again (A1.1).
    if (!after.empty()) setenv("CUDA_VISIBLE_DEVICES", after.c_str(), /*overwrite=*/1);

    const auto x = torch::ones({1024, 1024}, torch::Device(torch::kCUDA, 0));
    lesson.observe("x on cuda:0", {{"x", x}});
  });
}
