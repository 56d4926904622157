// The simulated backend fails where CUDA and LibTorch fail, with their messages.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/cuda_messages.h"
#include "model/profile.h"
#include "lesson_run.h"
#include "sim_support.h"
#include "backend/backend.h"

using namespace gpulab::test;

namespace {

// The message of the c10::Error `fn` throws, without LibTorch's backtrace.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  }
  FAIL("no c10::Error was thrown");
  return {};
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("an ordinal beyond the visible GPUs raises CUDA's invalid device ordinal", "[sim][errors]") {
  const auto results = probe({{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}}, {"count", "ones:cuda:7", "ones:cuda:3"});
  CHECK(results[0]["count"] == 4);
  INFO(results.dump(2));
  REQUIRE(results[1].contains("error"));
  CHECK(starts_with(results[1]["error"], "CUDA error: invalid device ordinal"));
  CHECK(results[2]["physical"] == 3);  // the last visible one works
}

TEST_CASE("a CUDA error reads as the linked PyTorch's C10_CUDA_CHECK text, which CUDA_LAUNCH_BLOCKING=1 shortens",
          "[sim][errors][profile]") {
  // This test process links the same LibTorch as the probe: its profile is the probe's. The
  // text's pieces per release are held to the released binaries in tests/unit (fixtures);
  // here the simulator must raise exactly that text, for the error it hit (101), and read
  // CUDA_LAUNCH_BLOCKING.
  const gpulab::Profile profile = gpulab::active_profile();
  INFO(profile.name());
  const gpulab::CudaErrorCode invalid_device{101, "cudaErrorInvalidDevice", "invalid device ordinal"};
  const auto results = probe({{"CUDA_VISIBLE_DEVICES", "0"}}, {"ones:cuda:1"});
  const std::string raised = results[0]["error"];
  CHECK(raised == gpulab::cuda_error_message(profile, invalid_device, /*launch_blocking=*/false));
  const auto blocking = probe({{"CUDA_VISIBLE_DEVICES", "0"}, {"CUDA_LAUNCH_BLOCKING", "1"}}, {"ones:cuda:1"});
  const std::string raised_blocking = blocking[0]["error"];
  CHECK(raised_blocking == gpulab::cuda_error_message(profile, invalid_device, /*launch_blocking=*/true));

  CHECK(starts_with(raised, "CUDA error: invalid device ordinal"));
  CHECK(raised_blocking.find("asynchronously reported") == std::string::npos);
  if (profile.torch_at_least(2, 9))  // get_cuda_error_help's line for error 101
    CHECK(starts_with(raised, "CUDA error: invalid device ordinal\nGPU device may be out of range, do you have enough GPUs?"));
  if (profile.torch_major < 2)
    CHECK(raised == "CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some "
                    "other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing "
                    "CUDA_LAUNCH_BLOCKING=1.");
}

TEST_CASE("device strings outside LibTorch's grammar are rejected with its message", "[sim][errors]") {
  for (const std::string text : {"cuda:1,2", "cuda:01", "cuda:-1", "cuda:2,1"}) {
    INFO(text);
    CHECK(starts_with(error_of([&] { (void)torch::Device(text); }), "Invalid device string: '" + text + "'"));
  }
  CHECK(starts_with(error_of([] { (void)torch::Device(""); }), "Device string must not be empty"));
  CHECK(torch::Device("cuda:1").index() == 1);
  CHECK_FALSE(torch::Device("cuda").has_index());
}

// The linked release's same-device fixture (tests/fixtures/torch-facts/same-device/, read out
// of its wheel's libtorch_cpu.so and libtorch_cuda*.so): the expected texts are put together
// from its literals and method names, not from a run of the simulator.
class SameDeviceFixture {
 public:
  explicit SameDeviceFixture(const gpulab::Profile& profile) {
    const auto dir = std::filesystem::path(source_dir()) / "tests/fixtures/torch-facts/same-device";
    const std::string prefix = std::to_string(profile.torch_major) + "." + std::to_string(profile.torch_minor) + ".";
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".json" && entry.path().stem().string().rfind(prefix, 0) == 0) {
        std::ifstream in(entry.path());
        facts_ = nlohmann::json::parse(in);
      }
    REQUIRE(facts_.is_object());
    REQUIRE(facts_.at("cuda_wrapper_method_names").is_object());
  }
  // The literal of libtorch_cpu.so that starts with `start`.
  std::string literal(const std::string& start) const {
    for (const auto& item : facts_.at("libtorch_cpu_literals"))
      if (item.at("text").get<std::string>().rfind(start, 0) == 0) return item.at("text");
    FAIL("no literal starting '" << start << "' in the fixture of " << facts_.at("release"));
    return {};
  }
  bool has(const std::string& start) const {
    for (const auto& item : facts_.at("libtorch_cpu_literals"))
      if (item.at("text").get<std::string>().rfind(start, 0) == 0) return true;
    return false;
  }
  // The dense CUDA kernel's wrapper: the shortest name the binary has for the op (the
  // others are sparse or nested-tensor wrappers that add an overload part).
  std::string method(const std::string& op) const {
    const auto names = facts_.at("cuda_wrapper_method_names").at(op).get<std::vector<std::string>>();
    REQUIRE(!names.empty());
    return *std::min_element(names.begin(), names.end(),
                             [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  }
  // TensorIterator's text (TensorIterator.cpp's literal, then "A and B!").
  std::string iterator(const std::string& common, const std::string& other) const {
    return literal("Expected all tensors to be on the same device, but found") + common + " and " + other + "!";
  }
  // A generated wrapper's text (adaption.cpp: the literals of the binary, joined by the
  // short pieces of its source).
  std::string wrapper(const std::string& op, const std::string& argument, const std::string& device,
                      const std::string& common) const {
    if (has(", different from other tensors on "))
      return literal("Expected all tensors to be on the same device, but got ") + argument + " is on " + device +
             literal(", different from other tensors on ") + common + literal(" (when checking argument in method ") +
             method(op) + ")";
    return literal("Expected all tensors to be on the same device, but found") + common + " and " + device +
           literal("! (when checking argument for argument ") + argument + " in method " + method(op) + ")";
  }

 private:
  nlohmann::json facts_;
};

TEST_CASE("an op on tensors of two devices raises the linked release's \"Expected all tensors to be on the same "
          "device\"",
          "[sim][errors][profile]") {
  const gpulab::Profile profile = gpulab::active_profile();
  INFO(profile.name());
  const SameDeviceFixture fixture(profile);
  const auto a = torch::ones({4, 4}, cuda(0));
  const auto b = torch::ones({4, 4}, cuda(1));

  SECTION("element-wise ops check in TensorIterator: no argument named") {
    CHECK(error_of([&] { (void)(a + b); }) == fixture.iterator("cuda:0", "cuda:1"));
    CHECK(error_of([&] { auto c = a.clone(); c.add_(b); }) == fixture.iterator("cuda:0", "cuda:1"));
    CHECK(error_of([&] { (void)(a * torch::ones({4, 4})); }) == fixture.iterator("cuda:0", "cpu"));
    CHECK(error_of([&] { (void)(torch::ones({4, 4}) * a); }) == fixture.iterator("cuda:0", "cpu"));
  }
  SECTION("a CPU 0-dim tensor joins an element-wise op") {
    const auto scaled = a * torch::tensor(3.0f);
    CHECK(scaled.device() == cuda(0));
    CHECK(scaled.sum().item<float>() == 16 * 3.0f);
  }
  SECTION("ops with a generated CUDA wrapper name the argument and the method") {
    CHECK(error_of([&] { (void)torch::matmul(a, b); }) == fixture.wrapper("mm", "mat2", "cuda:1", "cuda:0"));
    CHECK(error_of([&] { (void)torch::cat({a, b}); }) == fixture.wrapper("cat", "tensors", "cuda:1", "cuda:0"));
    CHECK(error_of([&] { (void)torch::cat({a, torch::ones({4, 4})}); }) ==
          fixture.wrapper("cat", "tensors", "cpu", "cuda:0"));
  }
  SECTION("Linear on cuda:1 fed a batch on cuda:0, or left on the CPU: addmm's mat1") {
    torch::nn::Linear model(4, 2);
    model->to(cuda(1));
    CHECK(error_of([&] { (void)model(a); }) == fixture.wrapper("addmm", "mat1", "cuda:0", "cuda:1"));
    CHECK(error_of([&] { (void)model(torch::ones({4, 4})); }) == fixture.wrapper("addmm", "mat1", "cpu", "cuda:1"));
    CHECK(model(torch::ones({4, 4}, cuda(1))).device() == cuda(1));
  }
  SECTION("a wrapper lets no CPU tensor through, not even a 0-dim one") {
    CHECK(error_of([&] { (void)torch::addmm(torch::tensor(1.0f), a, a); }) ==
          fixture.wrapper("addmm", "mat1", "cuda:0", "cpu"));
  }
  SECTION("an embedding on cuda:1 given CPU indices: index_select's index") {
    torch::nn::Embedding embedding(10, 3);
    embedding->to(cuda(1));
    const auto indices = torch::tensor({1, 2, 3}, torch::kLong);
    CHECK(error_of([&] { (void)embedding(indices); }) == fixture.wrapper("index_select", "index", "cpu", "cuda:1"));
    CHECK(embedding(indices.to(cuda(1))).device() == cuda(1));
  }
  SECTION("the same op with both tensors on one GPU works") {
    const auto sum = a + b.to(cuda(0));
    CHECK(sum.device() == cuda(0));
    CHECK(sum.sum().item<float>() == 16 * 2.0f);
  }
}

TEST_CASE("with CUDA_VISIBLE_DEVICES set but empty no GPU is available", "[sim][errors]") {
  const auto results = probe({{"CUDA_VISIBLE_DEVICES", ""}}, {"count", "ones:cuda", "ones:cuda:0"});
  INFO(results.dump(2));
  CHECK(results[0]["count"] == 0);
  CHECK(results[0]["available"] == false);
  for (int step : {1, 2}) {
    REQUIRE(results[step].contains("error"));
    CHECK_THAT(results[step]["error"].get<std::string>(), Catch::Contains("No CUDA GPUs are available"));
  }
}

TEST_CASE("device properties name the physical GPU: its UUID and PCI bus, as nvidia-smi shows them", "[sim][properties]") {
  // On workstation-mixed CUDA's fastest-first order differs from the PCI order.
  const gpulab::Node node = gpulab::load_node_file(gpulab::resolve_node_path("workstation-mixed"));
  const auto results = probe({{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "2,0"}},
                             {"physical", "props:0", "props:1", "props:2"});
  INFO(results.dump(2));
  const auto physical = results[0]["physical"];
  REQUIRE(physical.size() == 2);
  for (int index = 0; index < 2; ++index) {
    const auto& props = results[static_cast<std::size_t>(index) + 1];
    const gpulab::Gpu& gpu = node.gpus.at(physical[static_cast<std::size_t>(index)].get<std::size_t>());
    CHECK(props["uuid"] == gpu.uuid);
    CHECK(props["name"] == gpu.name);
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    REQUIRE(std::sscanf(gpu.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &function) == 4);
    CHECK(props["pci_domain_id"] == domain);
    CHECK(props["pci_bus_id"] == bus);
    CHECK(props["pci_device_id"] == slot);
  }
  CHECK(starts_with(results[3]["error"], "Invalid device id 2"));
}
