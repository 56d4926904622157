// "Expected all tensors to be on the same device" per release, held against the released
// binaries: tests/fixtures/torch-facts/same-device/<release>.json, read out of PyPI's wheels
// by `tools/torch-facts.sh --same-device` (libtorch_cpu.so's literals, the generated CUDA
// wrappers' method names in libtorch_cuda*.so). Every release with a fixture is checked.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/cuda_messages.h"
#include "model/profile.h"
#include "model/torch_facts_fixtures.h"

using namespace gpulab;
using nlohmann::json;

namespace {

using Fixture = test::TorchFactsFixture;
std::vector<Fixture> fixtures() { return test::torch_facts_fixtures("same-device"); }
using test::profile_of;

// A literal of libtorch_cpu.so that contains `piece`.
bool in_binary(const Fixture& fixture, const std::string& piece) {
  for (const json& literal : fixture.facts.at("libtorch_cpu_literals"))
    if (literal.at("text").get<std::string>().find(piece) != std::string::npos) return true;
  return false;
}

// The literal pieces a message is made of, from the first to the last: the short ones
// (" and ", " is on ", "!", ")") a compiler builds from immediates are not strings of the
// binary and are left out.
std::vector<std::string> long_literals(const std::vector<MessagePiece>& pieces) {
  std::vector<std::string> out;
  for (const MessagePiece& piece : pieces)
    if (piece.literal && piece.text.size() >= 11) out.push_back(piece.text);
  return out;
}

std::vector<std::string> names_for(const Fixture& fixture, const std::string& op) {
  return fixture.facts.at("cuda_wrapper_method_names").at(op).get<std::vector<std::string>>();
}

}  // namespace

TEST_CASE("there is a same-device fixture for both releases gpulab builds against", "[unit][profile][torch-facts]") {
  std::vector<std::string> releases;
  for (const Fixture& fixture : fixtures()) releases.push_back(fixture.release);
  for (const char* release : {"1.13.1", "2.15.0"}) {
    INFO("release " << release);
    CHECK(std::find(releases.begin(), releases.end(), release) != releases.end());
  }
}

TEST_CASE("a generated CUDA wrapper's same-device message has its release's pieces",
          "[unit][profile][torch-facts]") {
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = profile_of(fixture);
    const auto pieces = wrapper_device_mismatch_pieces(profile, "wrapper_CUDA_addmm", "mat1", "cuda:0", "cuda:1");
    for (const std::string& literal : long_literals(pieces)) {
      INFO("piece '" << literal << "'");
      CHECK(in_binary(fixture, literal));
    }
    // The form the binary has, and only that one.
    CHECK(in_binary(fixture, ", different from other tensors on ") == profile.device_message_names_argument_first());
    CHECK(in_binary(fixture, "(when checking argument for argument ") == !profile.device_message_names_argument_first());
  }
}

TEST_CASE("TensorIterator's same-device message is the binary's TensorIterator.cpp literal",
          "[unit][profile][torch-facts]") {
  const auto pieces = iterator_device_mismatch_pieces("cuda:0", "cpu");
  CHECK(join_pieces(pieces) == "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    bool found = false;
    for (const json& literal : fixture.facts.at("libtorch_cpu_literals"))
      found = found || (literal.at("text") == pieces.front().text &&
                        literal.at("followed_by_source") == "aten/src/ATen/TensorIterator.cpp");
    CHECK(found);
  }
}

TEST_CASE("the generated CUDA wrappers' method names are the binary's, per release", "[unit][profile][torch-facts]") {
  for (const Fixture& fixture : fixtures()) {
    if (fixture.facts.at("cuda_wrapper_method_names").is_null()) continue;  // libtorch_cpu.so only
    INFO("PyTorch " << fixture.release);
    const Profile profile = profile_of(fixture);
    for (const char* op : {"addmm", "mm", "cat", "index_select"}) {
      const std::string ours = cuda_wrapper_method_name(profile, op, "");
      INFO(op << ": gpulab says " << ours);
      CHECK(same_device_check_of(op, "").kind == SameDeviceCheck::GeneratedWrapper);
      const auto names = names_for(fixture, op);
      CHECK(std::find(names.begin(), names.end(), ours) != names.end());
    }
    // add and mul leave the check to TensorIterator (device_check: NoCheck): no wrapper
    // passes a method name for them.
    for (const char* op : {"add.Tensor", "mul.Tensor"}) {
      INFO(op);
      CHECK(names_for(fixture, op).empty());
      CHECK(same_device_check_of(std::string(op).substr(0, 3), "Tensor").kind == SameDeviceCheck::TensorIterator);
    }
    // embedding is a composite (CompositeExplicitAutograd): its indices meet index_select's
    // check. From 2.0 a name of a dense CUDA embedding wrapper would read wrapper_CUDA_…embedding.
    if (profile.wrapper_names_carry_dispatch_key()) CHECK(names_for(fixture, "embedding").empty());
  }
}

TEST_CASE("the messages of the lesson's cases, in both linked releases' words", "[unit][profile]") {
  const Profile old_release = make_profile(1, 13, 1, nullptr);
  const Profile new_release = make_profile(2, 15, 0, nullptr);
  // Linear on cuda:1 fed a batch on cuda:0: addmm(bias, batch, weight.t()).
  CHECK(join_pieces(wrapper_device_mismatch_pieces(new_release, cuda_wrapper_method_name(new_release, "addmm", ""),
                                                   "mat1", "cuda:0", "cuda:1")) ==
        "Expected all tensors to be on the same device, but got mat1 is on cuda:0, different from other tensors on "
        "cuda:1 (when checking argument in method wrapper_CUDA_addmm)");
  CHECK(join_pieces(wrapper_device_mismatch_pieces(old_release, cuda_wrapper_method_name(old_release, "addmm", ""),
                                                   "mat1", "cuda:0", "cuda:1")) ==
        "Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (when "
        "checking argument for argument mat1 in method wrapper_addmm)");
  CHECK(cuda_wrapper_method_name(new_release, "index_select", "") == "wrapper_CUDA__index_select");
  CHECK(cuda_wrapper_method_name(old_release, "index_select", "") == "wrapper__index_select");
  CHECK(cuda_wrapper_method_name(new_release, "index_select", "out") == "wrapper_CUDA_out_index_select_out");
  CHECK(cuda_wrapper_method_name(new_release, "addmm", "out") == "wrapper_CUDA_addmm_out_out");
}
