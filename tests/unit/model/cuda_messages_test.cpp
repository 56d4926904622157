// Each profile against its release's binary: the fixtures in tests/fixtures/torch-facts/
// were read out of PyPI's wheels by tools/torch-facts.sh (strings, objdump, the Python
// sources). Every release with a fixture is checked here: its default CUDA build and the
// builds it shipped, and its out-of-memory and CUDA-error texts, piece by piece.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
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
std::vector<Fixture> fixtures() { return test::torch_facts_fixtures(); }
Profile default_profile(const Fixture& fixture) { return test::profile_of(fixture); }

// A message as a sequence of literal runs and figure slots ("{}"): adjacent literal pieces
// merged, since a compiler may keep "a" "b" as one string or two.
std::vector<std::string> shape(const std::vector<MessagePiece>& pieces) {
  std::vector<std::string> out;
  bool last_literal = false;
  for (const MessagePiece& piece : pieces) {
    if (piece.literal && last_literal) out.back() += piece.text;
    else out.push_back(piece.literal ? piece.text : "{}");
    last_literal = piece.literal;
  }
  return out;
}

// The fixture's layout in the same shape. Parts that are empty in the simulated node's
// messages are left out: no set_per_process_memory_fraction (allowed_info), no CUDA graphs
// (private_pool_msg), no expandable segments (2.15's notes), no captured driver log; the processes' part is checked apart.
std::vector<MessagePiece> layout_pieces(const json& layout) {
  std::vector<MessagePiece> pieces;
  for (const json& item : layout) {
    if (item.contains("text")) {
      pieces.push_back({true, item["text"].get<std::string>()});
      continue;
    }
    const std::string value = item.value("value", "");
    if (value == "allowed_info" || value == "private_pool_msg" || value == "proc_info" ||
        value == "expandable-segment notes" ||
        value.find("get_error_log_suffix") != std::string::npos)
      continue;
    pieces.push_back({false, value});
  }
  return pieces;
}

bool in_binary(const Fixture& fixture, const std::string& literal) {
  for (const json& text : fixture.facts.at("libc10_cuda").at("strings"))
    if (text.get<std::string>().find(literal) != std::string::npos) return true;
  return false;
}

std::string shown(const std::vector<std::string>& shape) {
  std::string out;
  for (const std::string& part : shape) out += "[" + part + "]";
  return out;
}

}  // namespace

TEST_CASE("every release with a fixture has a profile whose default build is its PyPI wheel's",
          "[unit][profile][torch-facts]") {
  const auto all = fixtures();
  REQUIRE(all.size() >= 12);
  for (const Fixture& fixture : all) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    CHECK(profile.cuda.text() == fixture.facts.at("version_py").at("cuda").get<std::string>());
  }
}

TEST_CASE("the builds a release may be simulated as are the ones its compatibility matrix lists",
          "[unit][profile][torch-facts]") {
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    const auto release = shipped_release(profile.torch_major, profile.torch_minor);
    REQUIRE(release);
    std::set<std::string> expected;
    const json& builds = fixture.facts.at("cuda_builds");
    for (const char* kind : {"stable", "experimental"})
      if (builds.contains(kind) && builds[kind].is_array())
        for (const json& cuda : builds[kind]) expected.insert(cuda.get<std::string>());
    // No matrix for the release in the sources read: only the wheel's own build is known.
    if (expected.empty()) expected.insert(builds.at("pypi_default").get<std::string>());
    std::set<std::string> modelled;
    for (const CudaVersion& cuda : release->builds) modelled.insert(cuda.text());
    CHECK(modelled == expected);
  }
}

TEST_CASE("each release's out-of-memory text has its binary's pieces, in its order", "[unit][profile][torch-facts]") {
  OomFigures figures;
  figures.cuda_index = 1;
  figures.tried = 20ull << 20;
  figures.total = 79ull << 30;
  figures.free = 12ull << 20;
  figures.allocated = 70ull << 30;
  figures.reserved = 72ull << 30;
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    const auto ours = shape(out_of_memory_pieces(profile, figures));
    const auto theirs = shape(layout_pieces(fixture.facts.at("oom_layout")));
    INFO("gpulab:  " << shown(ours) << "\nbinary:  " << shown(theirs));
    CHECK(ours == theirs);
  }
}

TEST_CASE("from 2.1 the out-of-memory text names NVML's processes in the binary's words", "[unit][profile][torch-facts]") {
  OomFigures figures;
  figures.processes = {{4242, false, 3ull << 30}, {7, true, 1ull << 30}};
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    const std::string text = out_of_memory_message(profile, figures);
    if (!profile.torch_at_least(2, 1)) {
      CHECK(text.find("memory in use") == std::string::npos);
      continue;
    }
    CHECK(text.find("Process 4242 has 3.00 GiB memory in use. Including non-PyTorch memory, this process has 1024.00 MiB "
                    "memory in use. ") != std::string::npos);
    for (const char* literal : {"Including non-PyTorch memory, this process", " memory in use. "}) {
      INFO("piece: '" << literal << "'");
      CHECK(in_binary(fixture, literal));
    }
  }
}

TEST_CASE("each release's CUDA error text has its binary's pieces, in its order", "[unit][profile][torch-facts]") {
  const CudaErrorCode invalid_value{1, "cudaErrorInvalidValue", "invalid argument"};
  const CudaErrorCode invalid_device{101, "cudaErrorInvalidDevice", "invalid device ordinal"};
  const CudaErrorCode illegal_address{700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"};
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    const json& layouts = fixture.facts.at("cuda_error_layout");
    int compared = 0;
    for (const auto& [key, layout] : layouts.items()) {
      if (key.front() == '_') continue;
      const bool blocking = key.find("CUDA_LAUNCH_BLOCKING") != std::string::npos;
      const CudaErrorCode& error = key.rfind("error_101", 0) == 0   ? invalid_device
                                   : key.rfind("async_error", 0) == 0 ? illegal_address
                                                                      : invalid_value;
      INFO("case " << key);
      const auto ours = shape(cuda_error_pieces(profile, error, blocking));
      const auto theirs = shape(layout_pieces(layout));
      INFO("gpulab:  " << shown(ours) << "\nbinary:  " << shown(theirs));
      CHECK(ours == theirs);
      ++compared;
    }
    CHECK(compared >= 2);
  }
}

TEST_CASE("the asynchronous-error text goes with the error codes each binary compares", "[unit][profile][torch-facts]") {
  // `summary.async_text_only_for_codes`: the codes get_cuda_async_error_suffix tests for
  // (null: the function does not exist, every error gets the text).
  for (const Fixture& fixture : fixtures()) {
    INFO("PyTorch " << fixture.release);
    const Profile profile = default_profile(fixture);
    const json& codes = fixture.facts.at("summary").at("async_text_only_for_codes");
    std::set<int> ours, theirs;
    for (int code = 0; code <= 1000; ++code) {
      if (profile.cuda_error_async_suffix_for(code)) ours.insert(code);
      if (codes.is_null() || std::find(codes.begin(), codes.end(), json(code)) != codes.end()) theirs.insert(code);
    }
    CHECK(ours == theirs);
  }
}

TEST_CASE("PyTorch's size formatting", "[unit][profile]") {
  CHECK(format_size(512) == "512 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(2048) == "2.00 KiB");
  CHECK(format_size(1536ull << 20) == "1.50 GiB");
}
