// `gpulab smi`'s table, JSON and watch frames, rendered from hand-built GPUs and hosts.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_lines.h"
#include "view/node_picture.h"
#include "view/smi.h"

using namespace gpulab;
using namespace gpulab::view;
using namespace gpulab::view_test;

namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;
constexpr std::uint64_t kGiB = 1024ull * kMiB;

Profile torch_2_4_on_cuda_12() {
  Profile profile;
  profile.torch_major = 2;
  profile.torch_minor = 4;
  profile.torch_patch = 1;
  profile.cuda = {12, 1};
  return profile;
}

// Two 80 GiB GPUs: GPU 0 holds 2 GiB of process 1234, GPU 1 nothing.
std::vector<GpuView> two_gpus() {
  GpuView busy;
  busy.physical_index = 0;
  busy.uuid = "GPU-aaaa";
  busy.name = "NVIDIA A100-SXM4-80GB";
  busy.pci_bus_id = "00000000:07:00.0";
  busy.total_bytes = 80 * kGiB;
  busy.used_bytes = 2 * kGiB;
  busy.processes.push_back({1234, "lesson-04", 2 * kGiB, -1, -1});
  GpuView idle = busy;
  idle.physical_index = 1;
  idle.uuid = "GPU-bbbb";
  idle.pci_bus_id = "00000000:0F:00.0";
  idle.used_bytes = 0;
  idle.processes.clear();
  return {busy, idle};
}

const SmiSource kDgx{"dgx-a100", Backend::kSim, torch_2_4_on_cuda_12(), std::nullopt};

}  // namespace

TEST_CASE("smi table: the node and profile, a row per physical GPU with its bar, a row per process", "[view][smi]") {
  const std::string text = render_smi_table(kDgx, two_gpus());
  CHECK(lines_of(text).front() == "gpulab smi — node dgx-a100 (sim backend), profile: PyTorch 2.4.1 (CUDA 12.1 build)");
  const std::string gpu0 = line_with(text, "00000000:07:00.0");
  CHECK(gpu0.rfind("0    NVIDIA A100-SXM4-80GB", 0) == 0);
  CHECK(contains(gpu0, "2048MiB / 81920MiB"));
  CHECK(contains(gpu0, "[#...................]"));  // 2 of 80 GiB rounds up to one of 20 cells
  const std::string gpu1 = line_with(text, "00000000:0F:00.0");
  CHECK(contains(gpu1, "0MiB / 81920MiB"));
  CHECK(contains(gpu1, "[....................]"));
  const std::string process = line_with(text, "lesson-04");
  CHECK(process.rfind("0        1234  lesson-04", 0) == 0);
  CHECK(contains(process, "2048MiB"));
  CHECK_FALSE(contains(text, "No running processes found"));
}

TEST_CASE("smi table: a full GPU fills the bar, no process says so", "[view][smi]") {
  auto gpus = two_gpus();
  gpus[0].used_bytes = gpus[0].total_bytes + 1;  // more than the total still fits the bar
  gpus[0].processes.clear();
  const std::string text = render_smi_table(kDgx, gpus);
  CHECK(contains(line_with(text, "00000000:07:00.0"), "[####################]"));
  CHECK(contains(text, "  No running processes found\n"));
}

TEST_CASE("smi --json: every GPU with its processes, MIG instances only on a MIG GPU", "[view][smi]") {
  auto gpus = two_gpus();
  gpus[1].processes.push_back({99, "mig-user", kGiB, 1, 0});
  const auto doc = nlohmann::json::parse(render_smi_json(kDgx, gpus));
  CHECK(doc["backend"] == "sim");
  CHECK(doc["node"] == "dgx-a100");
  CHECK(doc["profile"]["torch"] == "2.4.1");
  CHECK(doc["profile"]["cuda"] == "12.1");
  CHECK(doc["profile"]["name"] == "PyTorch 2.4.1 (CUDA 12.1 build)");
  REQUIRE(doc["gpus"].size() == 2);
  CHECK(doc["gpus"][0]["pci_bus_id"] == "00000000:07:00.0");
  CHECK(doc["gpus"][0]["used_bytes"] == 2 * kGiB);
  CHECK(doc["gpus"][0]["processes"][0]["pid"] == 1234);
  CHECK_FALSE(doc["gpus"][0]["processes"][0].contains("gpu_instance"));
  CHECK(doc["gpus"][1]["processes"][0]["gpu_instance"] == 1);
  CHECK(doc["gpus"][1]["processes"][0]["compute_instance"] == 0);
}

namespace {

// A tiny2-like host: two 2 GiB GPUs, rank 1 of a launch holding 600 MiB (a 160 MiB context
// among it) on GPU 1.
HostView host_with_rank(const std::string& name) {
  HostView host;
  host.host = name;
  host.gpus = {{0, "NVIDIA T400", 2048 * kMiB, 0}, {1, "NVIDIA T400", 2048 * kMiB, 600 * kMiB}};
  host.context_bytes = {160 * kMiB, 160 * kMiB};
  ProcessRow row;
  row.pid = 4242;
  row.command = "lesson-13";
  row.rank = "1";
  row.used_bytes = {0, 600 * kMiB};
  row.context_mask = 0b10;
  host.processes.push_back(row);
  return host;
}

const WatchTitle kTitle{"tiny2", Backend::kSim, "12:34:56", 0.5, false};

}  // namespace

TEST_CASE("smi watch frame: the GPUs, then the process row with its RANK, its GPU and its context", "[view][smi]") {
  const PictureStyle style{false, 100, true};
  const std::string text = render_smi_watch_frame(kTitle, {host_with_rank("")}, style);
  CHECK(lines_of(text).front() == "gpulab smi --watch · node tiny2 (sim) · 12:34:56 · every 0.5 s");
  CHECK_FALSE(contains(text, "host:"));  // one unnamed host: no host heading
  CHECK_FALSE(contains(text, "\x1b"));
  CHECK(contains(line_with(text, "  0    NVIDIA T400"), "0 / 2048 MiB"));
  CHECK(contains(line_with(text, "  1    NVIDIA T400"), "600 / 2048 MiB"));
  CHECK(contains(text, "processes (bar: 0 to 1 GiB, linear; ▓ context █ memory):"));
  const std::string row = line_with(text, "4242");
  CHECK(row.rfind("     4242  1     lesson-13          1   600.0 MiB  ", 0) == 0);
  CHECK(contains(row, "▓"));  // the 160 MiB context
  CHECK(contains(row, "█"));  // the memory beyond it
  CHECK(row.size() >= 5);
  CHECK(row.substr(row.size() - 5) == "  ctx");
  for (const auto& line : lines_of(text)) CHECK(display_width(line) <= style.width);
}

TEST_CASE("smi watch frame: several hosts fold their idle GPUs and name each host", "[view][smi]") {
  HostView broken;
  broken.host = "c";
  broken.error = "not a regular file";
  HostView quiet = host_with_rank("b");
  quiet.gpus[1].used_bytes = 0;
  quiet.processes.clear();
  const std::string text =
      render_smi_watch_frame({"tiny2", Backend::kSim, "00:00:00", 2, true}, {host_with_rank(""), quiet, broken}, {false, 100, true});
  CHECK(contains(lines_of(text).front(), "every 2 s · q quits"));
  CHECK(contains(text, "host: this one (no GPULAB_HOST)\n"));
  CHECK(contains(text, "host: b (GPULAB_HOST)\n"));
  CHECK(contains(text, "  0,1  idle: 0 / 2048 MiB each\n"));  // b's two idle GPUs
  CHECK(contains(text, "  0    idle: 0 / 2048 MiB each\n"));  // this host's GPU 0
  CHECK(contains(text, "  no process holds GPU memory\n"));
  CHECK(contains(text, "host: c (GPULAB_HOST)\n  cannot read its node state: not a regular file\n"));
}

TEST_CASE("smi watch frame: a process without memory has a row of its own, lines are cut to the width", "[view][smi]") {
  HostView host = host_with_rank("");
  host.processes.front().used_bytes = {0, 0};
  host.processes.front().context_mask = 0;
  const PictureStyle narrow{false, 40, true};
  const std::string text = render_smi_watch_frame(kTitle, {host}, narrow);
  CHECK(contains(line_with(text, "4242"), "lesson-13"));
  bool cut = false;
  for (const auto& line : lines_of(text)) {
    CHECK(display_width(line) <= narrow.width);
    cut = cut || contains(line, "…");
  }
  CHECK(cut);
  const std::string wide = render_smi_watch_frame(kTitle, {host}, {false, 200, true});
  CHECK(line_with(wide, "4242") == "     4242  1     lesson-13          -       0 MiB");
}

TEST_CASE("smi watch frame: colour only when asked, escapes kept whole when a line is cut", "[view][smi]") {
  const std::string text = render_smi_watch_frame(kTitle, {host_with_rank("")}, {true, 60, true});
  CHECK(contains(text, "\x1b[33m"));
  for (const auto& line : lines_of(text)) CHECK(display_width(line) <= 60);
}
