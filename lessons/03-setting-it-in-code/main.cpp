// Lesson 03 — Setting CUDA_VISIBLE_DEVICES from inside the program: which GPU does x get? (article claims A1.1–A1.7)
//
// CUDA_VISIBLE_DEVICES can come from the shell, from a script, or from the program itself
// (setenv). The scripts beside this file set it the article's other ways; this program is
// the in-code way:
//   --setenv-before IDS   the GPUs this process must use, set in code (the article's way 1)
//   --setenv-after IDS    a second setenv, later in the program (kept on purpose)
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("03", argc, argv, [](gpulab::Lesson& lesson) {
    const std::string before = lesson.option("--setenv-before");
    const std::string after = lesson.option("--setenv-after");

    // The start-up log, as real programs print it.
    lesson.say(std::string("CUDA available: ") + (torch::cuda::is_available() ? "yes" : "no"));

    // TODO: with --setenv-before IDS (say 5), this program itself must make the GPUs IDS
    //       names the only ones CUDA shows it: device_count() is their number, x on cuda:0
    //       lands on the first of them (physical GPU 5), and nvidia-smi shows nothing of
    //       this process on GPU 0 — whatever CUDA_VISIBLE_DEVICES the shell or a script
    //       passed. The checks try several IDS, alone and with the other ways.
    if (!before.empty()) setenv("CUDA_VISIBLE_DEVICES", before.c_str(), /*overwrite=*/1);
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));

    // The second setenv, after device_count(), kept on purpose (A1.1).
    if (!after.empty()) setenv("CUDA_VISIBLE_DEVICES", after.c_str(), /*overwrite=*/1);

    const auto x = torch::ones({1024, 1024}, torch::Device(torch::kCUDA, 0));
    lesson.observe("x on cuda:0", {{"x", x}});

    // STRETCH: IDS are nvidia-smi's numbers. Make --setenv-before 0 put x on nvidia-smi's
    //          GPU 0 on every node, also on nodes of unlike GPUs
    //          (GPULAB_NODE=workstation-mixed, pascal-rig).
  });
}
