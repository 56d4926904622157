// memory-probe SCENARIO [STEP...] --json: one process's CUDA contexts and caching-allocator
// statistics, as a gpulab report. Each observation lists, per physical GPU, what
// nvidia-smi shows for this process (context + reserved memory) and whether it has a
// context there. Scenarios:
//   contexts  which calls create a context and which do not
//   threads   the current device belongs to each thread and starts at 0
//   steps     runs the STEPs in order:
//               alloc:NAME:INDEX:BYTES  a uint8 tensor of BYTES bytes on cuda:INDEX
//                                       (an error is recorded under NAME)
//               free:NAME               drops that tensor
//               empty_cache             gpulab::cuda::empty_cache()
//               set_device:INDEX        gpulab::cuda::set_device(INDEX) (an error is
//                                       recorded under "set_device")
//               setenv:NAME=VALUE       sets an environment variable in this process
//               accelerator_maybe_exchange:INDEX:NAME
//                                       at::accelerator::maybeExchangeDevice(INDEX) (2.15)
//               hooks_maybe_exchange:INDEX:NAME
//                                       the CUDA hooks' maybeExchangeDevice(INDEX), that is
//                                       c10::cuda::MaybeExchangeDevice (2.15); both record
//                                       the facts NAME.returned and NAME.current
//                                       (current_device() after it), an error under NAME
//               observe:LABEL           an observation, and the facts LABEL.allocated.I,
//                                       LABEL.reserved.I (every device I) and
//                                       LABEL.allocated.current (the current device)
// Run the first two under a CUDA_VISIBLE_DEVICES that reorders the GPUs, so that CUDA
// indices and physical GPUs differ.
#include <torch/torch.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
#include <ATen/DeviceAccelerator.h>
#include <ATen/detail/CUDAHooksInterface.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda_device.h"  // tests/support
#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

namespace {

using gpulab::test::cuda;

void contexts(gpulab::Lesson& lesson) {
  lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));
  lesson.observe("after device_count");

  {
    const c10::DeviceGuard guard(cuda(1));
    lesson.fact("current_device_in_guard", gpulab::cuda::current_device());
    lesson.observe("inside a DeviceGuard for cuda:1");
  }
  lesson.fact("current_device_after_guard", gpulab::cuda::current_device());

  gpulab::cuda::set_device(2);
  lesson.fact("current_device_after_set_device", gpulab::cuda::current_device());
  lesson.observe("after set_device(2)");

  torch::cuda::synchronize(3);
  lesson.observe("after synchronize(3)");

  const auto small = torch::ones({16}, cuda(4));
  lesson.observe("after a tensor on cuda:4", {{"small", small}});
}

void threads(gpulab::Lesson& lesson) {
  gpulab::cuda::set_device(1);
  lesson.observe("main thread on cuda:1");

  std::thread([&] {
    lesson.fact("new_thread_current_device", gpulab::cuda::current_device());
    torch::cuda::synchronize();  // unguarded: works on this thread's current device
  }).join();
  lesson.fact("main_thread_current_device", gpulab::cuda::current_device());
  lesson.observe("after an unguarded synchronize on a new thread");

  torch::Tensor made;
  std::thread([&] {
    const c10::DeviceGuard guard(cuda(2));
    made = torch::empty({16}, torch::kCUDA);  // no index: the thread's current device
  }).join();
  lesson.observe("after a guarded thread made a tensor", {{"made", made}});

  std::thread([] { const c10::DeviceGuard guard(cuda(3)); }).join();
  lesson.observe("after a thread only switched to cuda:3");
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    parts.push_back(text.substr(start, colon - start));
  parts.push_back(text.substr(start));
  return parts;
}

void steps(gpulab::Lesson& lesson, const std::vector<std::string>& steps) {
  std::map<std::string, torch::Tensor> tensors;
  for (const std::string& step : steps) {
    const auto part = split(step);
    if (part[0] == "alloc" && part.size() == 4) {
      lesson.attempt(part[1], [&] {
        const auto options = torch::TensorOptions().dtype(torch::kUInt8).device(cuda(std::stoi(part[2])));
        tensors[part[1]] = torch::empty({std::stoll(part[3])}, options);
      });
    } else if (part[0] == "free" && part.size() == 2) {
      tensors.erase(part[1]);
    } else if (part[0] == "empty_cache") {
      gpulab::cuda::empty_cache();
    } else if (part[0] == "set_device" && part.size() == 2) {
      lesson.attempt("set_device", [&] { gpulab::cuda::set_device(std::stoi(part[1])); });
    } else if ((part[0] == "accelerator_maybe_exchange" || part[0] == "hooks_maybe_exchange") && part.size() == 3) {
      lesson.attempt(part[2], [&] {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
        const auto index = static_cast<c10::DeviceIndex>(std::stoi(part[1]));
        const auto returned = part[0] == "hooks_maybe_exchange" ? at::detail::getCUDAHooks().maybeExchangeDevice(index)
                                                                : at::accelerator::maybeExchangeDevice(index);
        lesson.fact(part[2] + ".returned", static_cast<std::int64_t>(returned));
        lesson.fact(part[2] + ".current", static_cast<std::int64_t>(gpulab::cuda::current_device()));
#else
        throw std::runtime_error(part[0] + ": not in this LibTorch");
#endif
      });
    } else if (part[0] == "setenv" && part.size() == 2 && part[1].find('=') != std::string::npos) {
      const auto equals = part[1].find('=');
      setenv(part[1].substr(0, equals).c_str(), part[1].substr(equals + 1).c_str(), /*overwrite=*/1);
    } else if (part[0] == "observe" && part.size() == 2) {
      const int devices = static_cast<int>(torch::cuda::device_count());
      for (int index = 0; index < devices; ++index) {
        const std::string suffix = "." + std::to_string(index);
        lesson.fact(part[1] + ".allocated" + suffix, static_cast<std::int64_t>(gpulab::cuda::memory_allocated(index)));
        lesson.fact(part[1] + ".reserved" + suffix, static_cast<std::int64_t>(gpulab::cuda::memory_reserved(index)));
      }
      lesson.fact(part[1] + ".allocated.current", static_cast<std::int64_t>(gpulab::cuda::memory_allocated()));
      lesson.observe(part[1]);
    } else {
      throw std::invalid_argument("memory-probe: unknown step '" + step + "'");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::run_lesson("memory-probe", argc, argv, [](gpulab::Lesson& lesson) {
    const auto& args = lesson.args();
    const std::string scenario = args.empty() ? "" : args[0];
    if (scenario == "contexts") contexts(lesson);
    else if (scenario == "threads") threads(lesson);
    else if (scenario == "steps") steps(lesson, {args.begin() + 1, args.end()});
    else throw std::invalid_argument("usage: memory-probe contexts|threads|steps STEP... [--json]");
  });
}
