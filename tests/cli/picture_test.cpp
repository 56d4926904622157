// The node picture (docs/node-picture.md): render_node_picture on hand-built reports, then
// `gpulab run` and `gpulab smi --watch` from outside, as built, on a fresh simulated node.
#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "child.h"
#include "model/node.h"
#include "proc/process.h"
#include "report/report_reader.h"
#include "model/visibility.h"
#include "lesson_run.h"
#include "view/node_picture.h"

using namespace gpulab;
using namespace gpulab::test;
using gpulab::view::PictureStyle;
using gpulab::view::render_node_picture;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines containing every one of `parts`.
std::vector<std::string> lines_with(const std::string& text, const std::vector<std::string>& parts) {
  std::vector<std::string> found;
  for (const auto& line : lines_of(text))
    if (std::all_of(parts.begin(), parts.end(), [&](const auto& p) { return line.find(p) != std::string::npos; }))
      found.push_back(line);
  return found;
}

// The memory row of physical GPU `physical`: "  GPU 3  cuda:1  ▓▓▓… 438.0 MiB  ctx".
std::optional<std::string> memory_row(const std::string& picture, int physical) {
  const std::string start = "  GPU " + std::to_string(physical) + " ";
  for (const auto& line : lines_of(picture))
    if (line.rfind(start, 0) == 0) return line;
  return std::nullopt;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string arrow(int cuda, int physical) { return "cuda:" + std::to_string(cuda) + " ─► GPU " + std::to_string(physical); }

// A report as a lesson on the default node would write it.
Report hand_built(std::optional<std::string> visible) {
  Report report;
  report.lesson = "04";
  report.backend = Backend::kSim;
  report.node = kDefaultNodeName;
  report.pid = 1234;
  report.env.cuda_visible_devices = visible;
  report.env_at_exit = report.env;
  return report;
}

constexpr std::uint64_t kContext = 416 * kMiB;

}  // namespace

// ---------------------------------------------------------------------------------------
// render_node_picture, unit by unit.

TEST_CASE("picture: an empty CUDA_VISIBLE_DEVICES shows that no GPU is visible and maps no device", "[picture]") {
  Report report = hand_built(std::string());
  report.observations.push_back({"start", {}, {{"x", "cpu", std::nullopt}}});
  const std::string picture = render_node_picture(report);
  INFO(picture);
  CHECK(has(picture, "no GPU visible"));
  CHECK_FALSE(has(picture, "─►"));
  CHECK(lines_with(picture, {"cpu", "◄", "x"}).size() == 1);
}

TEST_CASE("picture: a list CUDA cuts short maps the entries before the cut and marks the rest dropped", "[picture]") {
  const std::string list = "2,-1,3";
  const Node node = gpulab::test::node();
  const auto devices = visible_devices(node, list, DeviceOrder::FastestFirst);
  REQUIRE(devices.size() == 1);  // the rule under test: "-1" ends the list
  Report report = hand_built(list);
  report.observations.push_back({"after", {{devices[0].physical_index, kContext, true}},
                                 {{"weight", "cuda:0", devices[0].physical_index}}});
  const std::string picture = render_node_picture(report);
  INFO(picture);
  CHECK(lines_with(picture, {arrow(0, devices[0].physical_index), "◄", "weight"}).size() == 1);
  CHECK_FALSE(has(picture, "cuda:1"));
  CHECK(lines_with(picture, {"-1", "✗"}).size() == 1);
  CHECK(lines_with(picture, {"  3 ", "✗"}).size() == 1);
  CHECK(has(picture, "cut short"));
  // The note is explain_visibility's, maybe wrapped: its first words are on one line.
  const auto note = explain_visibility(node, list, DeviceOrder::FastestFirst);
  REQUIRE(note);
  CHECK(has(picture, "note: " + note->substr(0, note->find(' ', 12))));
}

TEST_CASE("picture: with no GPU used, no bar is filled and no context is marked", "[picture]") {
  Report report = hand_built(std::string("2,3"));
  report.observations.push_back({"before", {}, {{"weight", "cpu", std::nullopt}}});
  const std::string picture = render_node_picture(report);
  INFO(picture);
  for (int physical : {2, 3}) {
    const auto row = memory_row(picture, physical);
    REQUIRE(row);
    CHECK(has(*row, "0 MiB"));
    CHECK_FALSE(has(*row, "▓"));
    CHECK_FALSE(has(*row, "█"));
  }
  CHECK_FALSE(has(picture, "ctx"));
}

TEST_CASE("picture: a context shows as a visible share of the bar, memory beyond it as more, nothing as none", "[picture]") {
  Report report = hand_built(std::string("2,3,4"));
  report.observations.push_back({"after", {{3, kContext, true}, {4, kContext + 2 * kMiB, true}}, {}});
  const std::string picture = render_node_picture(report);
  INFO(picture);
  const auto idle = memory_row(picture, 2), context = memory_row(picture, 3), more = memory_row(picture, 4);
  REQUIRE(idle);
  REQUIRE(context);
  REQUIRE(more);
  CHECK_FALSE(has(*idle, "▓"));
  CHECK(has(*context, "▓"));
  CHECK(has(*context, "ctx"));
  CHECK_FALSE(has(*context, "█"));
  CHECK(has(*context, "░"));  // a context does not fill the bar
  CHECK(has(*more, "█"));     // 2 MiB more than a context shows
}

TEST_CASE("picture: unset CUDA_VISIBLE_DEVICES means every GPU in CUDA's order; CUDA_DEVICE_ORDER is shown", "[picture]") {
  Report report = hand_built(std::nullopt);
  report.env.cuda_device_order = "PCI_BUS_ID";
  report.env_at_exit = report.env;
  const std::string picture = render_node_picture(report);
  INFO(picture);
  CHECK(has(picture, "unset: every GPU, in PCI_BUS_ID order"));
  CHECK(has(picture, "CUDA_DEVICE_ORDER=PCI_BUS_ID"));
  const auto order = enumeration_order(gpulab::test::node(), DeviceOrder::PciBusId);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(lines_with(picture, {arrow(static_cast<int>(i), order[i])}).size() == 1);
  CHECK(has(picture, "no observation"));
}

TEST_CASE("picture: a variable the program set before CUDA started is the one the tensors follow", "[picture]") {
  Report report = hand_built(std::nullopt);
  report.env_at_exit.cuda_visible_devices = "5,1,6";
  report.observations.push_back({"after", {{5, kContext, true}}, {{"weight", "cuda:0", 5}}});
  const std::string picture = render_node_picture(report);
  INFO(picture);
  CHECK(lines_with(picture, {arrow(0, 5), "weight"}).size() == 1);
  CHECK(has(picture, "setenv"));
}

TEST_CASE("picture: no escape code without colour, some with it; no line wider than the width", "[picture]") {
  Report report = hand_built(std::string("0,2,-1,1"));
  std::vector<TensorLocation> tensors;
  for (int i = 0; i < 12; ++i) tensors.push_back({"a_rather_long_parameter_name_" + std::to_string(i), "cuda:1", 2});
  tensors.push_back({"input", "cpu", std::nullopt});
  report.observations.push_back({"after a long label that goes on and on", {{2, 3 * kContext, true}, {0, kContext, true}}, tensors});
  for (int width : {40, 60, 80, 120}) {
    DYNAMIC_SECTION("width " << width) {
      const std::string plain = render_node_picture(report, {false, width});
      INFO(plain);
      CHECK(plain.find('\x1b') == std::string::npos);
      for (const auto& line : lines_of(plain)) CHECK(view::display_width(line) <= width);
      const std::string colored = render_node_picture(report, {true, width});
      CHECK(colored.find('\x1b') != std::string::npos);
      for (const auto& line : lines_of(colored)) CHECK(view::display_width(line) <= width);
    }
  }
}

// ---------------------------------------------------------------------------------------
// From outside: the built gpulab, on a fresh node.

namespace {

ProcessResult gpulab_cli(const std::vector<std::string>& args, const Env& env = {}, const std::string& state = fresh_state_dir()) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt}, {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_HOST", std::nullopt},          {"GPULAB_REPORT_DIR", std::nullopt}, {"GPULAB_STATE_DIR", state}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 120;
  return run_process(options);
}

#define SHOW(result) INFO("exit " << (result).exit_code << "\nstdout:\n" << (result).out << "\nstderr:\n" << (result).err)

}  // namespace

TEST_CASE("gpulab run 04 --solution draws cuda:1 -> GPU 3 with the weight and a context there", "[picture][run]") {
  const auto run = gpulab_cli({"run", "04", "--solution"});
  SHOW(run);
  REQUIRE(run.exit_code == 0);
  CHECK(has(run.out, "CUDA_VISIBLE_DEVICES=2,3,4,5"));  // the scenario's list
  CHECK(lines_with(run.out, {arrow(1, 3), "◄", "weight"}).size() == 1);
  for (int other : {0, 2, 3}) CHECK(lines_with(run.out, {"cuda:" + std::to_string(other) + " ─►", "weight"}).empty());
  const auto row = memory_row(run.out, 3);
  REQUIRE(row);
  CHECK(has(*row, "ctx"));
  CHECK(has(*row, "▓"));
  const auto unused = memory_row(run.out, 2);
  REQUIRE(unused);
  CHECK_FALSE(has(*unused, "ctx"));
}

TEST_CASE("gpulab run 04 --solution under CUDA_VISIBLE_DEVICES=5,1 maps cuda:0 to GPU 5 and cuda:1 to GPU 1", "[picture][run]") {
  // The solution puts the work on nvidia-smi's GPU --gpu N: GPU 1 is cuda:1 under 5,1.
  const auto run = gpulab_cli({"run", "04", "--solution", "--", "--gpu", "1"}, {{"CUDA_VISIBLE_DEVICES", "5,1"}});
  SHOW(run);
  REQUIRE(run.exit_code == 0);
  CHECK(lines_with(run.out, {arrow(0, 5)}).size() == 1);
  CHECK(lines_with(run.out, {arrow(1, 1), "◄", "weight"}).size() == 1);
  CHECK_FALSE(has(run.out, "cuda:2 ─►"));
  CHECK_FALSE(has(run.out, arrow(1, 3)));
  const auto row = memory_row(run.out, 1);
  REQUIRE(row);
  CHECK(has(*row, "ctx"));
}

TEST_CASE("gpulab run 04 (the exercise) shows where its tensors are, as its report says", "[picture][run]") {
  const auto json = gpulab_cli({"run", "04", "--json"});
  SHOW(json);
  const Report report = parse_report(json.out);
  REQUIRE_FALSE(report.observations.empty());
  REQUIRE_FALSE(report.observations.front().tensors.empty());
  const TensorLocation weight = report.observations.front().tensors.front();
  const auto run = gpulab_cli({"run", "04"});
  SHOW(run);
  const auto marked = lines_with(run.out, {"◄", weight.name});
  REQUIRE(marked.size() == 1);
  if (weight.physical_index) CHECK(has(marked.front(), weight.device + " ─► GPU " + std::to_string(*weight.physical_index)));
  else CHECK(has(marked.front(), weight.device));
}

TEST_CASE("gpulab run --no-picture leaves only the program's output; --json has no picture and still parses", "[picture][run]") {
  const auto plain = gpulab_cli({"run", "04", "--solution", "--no-picture"});
  SHOW(plain);
  CHECK(plain.exit_code == 0);
  CHECK(has(plain.out, "lesson 04"));
  CHECK_FALSE(has(plain.out, "─►"));
  CHECK_FALSE(has(plain.out, "this process on each physical GPU"));
  const auto json = gpulab_cli({"run", "04", "--solution", "--json"});
  SHOW(json);
  CHECK(json.exit_code == 0);
  CHECK_NOTHROW(parse_report(json.out));
  CHECK_FALSE(has(json.out, "─►"));
}

TEST_CASE("gpulab run of a launched lesson shows every rank on its GPU", "[picture][run][launched]") {
  const auto run = gpulab_cli({"run", "13", "--solution"});
  SHOW(run);
  REQUIRE(run.exit_code == 0);
  const auto json = gpulab_cli({"run", "13", "--solution", "--json"});
  const auto document = nlohmann::json::parse(json.out);
  for (const auto& rank_report : document.at("ranks")) {
    const Report report = parse_report(rank_report.dump());
    const auto rank = std::get<std::int64_t>(report.facts.at("rank"));
    const TensorLocation& weight = report.observations.back().tensors.front();
    REQUIRE(weight.physical_index);
    CHECK(lines_with(run.out, {"rank " + std::to_string(rank) + " ", weight.device + " ─► GPU " + std::to_string(*weight.physical_index),
                               weight.name})
              .size() == 1);
  }
}

TEST_CASE("gpulab smi --watch --count 2 shows a holder's row with its memory, twice, and ends by itself", "[picture][smi]") {
  const std::string state = fresh_state_dir();
  const std::uint64_t held = 300;  // MiB
  Child holder({bin_dir() + "/memory-hold", "cuda:1", std::to_string(held)}, state, {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}});
  REQUIRE(holder.read_line() == "ready");
  // What nvidia-smi's view says the holder uses, to compare the watch with.
  const auto smi = gpulab_cli({"smi", "--json"}, {}, state);
  SHOW(smi);
  REQUIRE(smi.exit_code == 0);
  int gpu = -1;
  std::uint64_t used = 0;
  const auto document = nlohmann::json::parse(smi.out);
  for (const auto& g : document.at("gpus"))
    for (const auto& p : g.at("processes"))
      if (p.at("pid").get<int>() == holder.pid()) {
        gpu = g.at("physical_index").get<int>();
        used = p.at("used_bytes").get<std::uint64_t>();
      }
  REQUIRE(gpu >= 0);
  REQUIRE(used >= held * kMiB);

  const auto watch = gpulab_cli({"smi", "--watch", "--count", "2", "--interval", "0.1"}, {}, state);
  SHOW(watch);
  REQUIRE(watch.exit_code == 0);
  CHECK_FALSE(watch.timed_out);
  CHECK(watch.out.find('\x1b') == std::string::npos);  // not a terminal: plain snapshots
  CHECK(lines_with(watch.out, {"gpulab smi --watch"}).size() == 2);
  const auto rows = lines_with(watch.out, {" " + std::to_string(holder.pid()) + " ", "memory-hold",
                                           " " + std::to_string(gpu) + " ", view::memory_amount(used), "ctx"});
  CHECK(rows.size() == 2);

  const auto once = gpulab_cli({"smi", "--watch", "--count", "1"}, {}, state);
  SHOW(once);
  CHECK(lines_with(once.out, {"gpulab smi --watch"}).size() == 1);
  holder.close_stdin();
  CHECK(holder.wait().exit_code == 0);
  const auto after = gpulab_cli({"smi", "--watch", "--count", "1"}, {}, state);
  SHOW(after);
  CHECK(lines_with(after.out, {" " + std::to_string(holder.pid()) + " ", "memory-hold"}).empty());
}

TEST_CASE("gpulab smi --watch shows every simulated host's processes, each with its RANK", "[picture][smi]") {
  const std::string state = fresh_state_dir();
  Child holder({bin_dir() + "/memory-hold", "cuda:0", "64"}, state, {{"GPULAB_HOST", "node1"}, {"RANK", "5"}});
  REQUIRE(holder.read_line() == "ready");
  const auto watch = gpulab_cli({"smi", "--watch", "--count", "1"}, {}, state);
  SHOW(watch);
  REQUIRE(watch.exit_code == 0);
  CHECK(lines_with(watch.out, {"host: node1"}).size() == 1);
  CHECK(lines_with(watch.out, {" " + std::to_string(holder.pid()) + " ", " 5 ", "memory-hold"}).size() == 1);
  // Without --all-hosts (and no --watch) smi shows this host only, as before.
  const auto smi = gpulab_cli({"smi"}, {}, state);
  CHECK_FALSE(has(smi.out, std::to_string(holder.pid())));
}
