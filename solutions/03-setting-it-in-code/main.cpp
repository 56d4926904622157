// Lesson 03 — Setting CUDA_VISIBLE_DEVICES from inside the program: which GPU does x get? (article claims A1.1–A1.7)
//
// The driver reads CUDA_VISIBLE_DEVICES once, at the process's first CUDA call. Whatever
// value the process has then — inherited from the shell or a script, or set in code with
// setenv — decides which physical GPU cuda:0 is. The scripts beside this file set it the
// article's other ways; this program is the in-code way:
//   --setenv-before IDS   the GPUs this process must use, set in code (the article's way 1)
//   --setenv-after IDS    setenv after CUDA started: silently ignored (the catch the article misses)
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("03", argc, argv, [](gpulab::Lesson& lesson) {
    const std::string before = lesson.option("--setenv-before");
    const std::string after = lesson.option("--setenv-after");

    // Before anything touches CUDA (the start-up log below does), so the driver reads this
    // value when it starts; overwrite=1, or the shell's value would win.
    if (!before.empty()) {
      // The IDS are nvidia-smi's numbers: make CUDA count as nvidia-smi does (PCI bus order)
      // too, or on nodes with mixed GPUs index 0 would be CUDA's fastest GPU.
      setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", /*overwrite=*/1);
      setenv("CUDA_VISIBLE_DEVICES", before.c_str(), /*overwrite=*/1);
    }

    // The start-up log: the process's first CUDA call, which reads CUDA_VISIBLE_DEVICES, once.
    lesson.say(std::string("CUDA available: ") + (torch::cuda::is_available() ? "yes" : "no"));
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));

    // Too late on purpose: CUDA is running and will not look at the variable again (A1.1).
    if (!after.empty()) setenv("CUDA_VISIBLE_DEVICES", after.c_str(), /*overwrite=*/1);

    const auto x = torch::ones({1024, 1024}, torch::Device(torch::kCUDA, 0));
    lesson.observe("x on cuda:0", {{"x", x}});
  });
}
