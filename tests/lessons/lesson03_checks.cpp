// Lesson 03: every way the article sets CUDA_VISIBLE_DEVICES, run for real — on the command
// line, for a script, exported or inline in a script, with setenv in the program — alone and
// several at once. The physical GPU behind cuda:0 follows one rule: the setting closest to
// the process's CUDA initialisation, made before it, wins (claims A1.1-A1.6).
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

using Setting = std::optional<std::string>;

// One way (or several at once) of setting CUDA_VISIBLE_DEVICES, fields ordered from the
// farthest from the program's CUDA initialisation to the closest. Unset fields are not used.
struct Way {
  Setting shell;          ///< on the command line, for the program or the script (ways 2, 3)
  bool script = false;    ///< start the program through a script (run.sh unless it sets something)
  Setting exported;       ///< `export` in the script (way 4)
  Setting inline_value;   ///< `CUDA_VISIBLE_DEVICES=... prog` in the script (way 5)
  Setting setenv_before;  ///< setenv in the program, before its first CUDA call (way 1)
  Setting setenv_after;   ///< setenv in the program, after its first CUDA call
};

// The rule, A1.6 without "priorities": each setting replaces what was inherited from the
// one before it, and the driver reads the value the process has at CUDA initialisation.
Setting value_at_cuda_init(const Way& way) {
  Setting value;
  for (const Setting& setting : {way.shell, way.exported, way.inline_value, way.setenv_before})
    if (setting) value = setting;
  return value;
}

std::vector<int> entries(const std::string& list) {
  std::vector<int> ids;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    ids.push_back(std::stoi(list.substr(start, comma - start)));
    start = comma + 1;
  }
  return ids;
}

std::string script_path(const std::string& name) { return source_dir() + "/lessons/03-setting-it-in-code/" + name; }

// The command line that runs the lesson program as `way` says (with `sh` for the scripts).
std::vector<std::string> command_of(const Way& way) {
  std::vector<std::string> argv;
  if (way.exported && way.inline_value)
    argv = {"sh", script_path("export-then-inline.sh"), *way.exported, *way.inline_value};
  else if (way.exported)
    argv = {"sh", script_path("export-in-script.sh"), *way.exported};
  else if (way.inline_value)
    argv = {"sh", script_path("inline-in-script.sh"), *way.inline_value};
  else if (way.script)
    argv = {"sh", script_path("run.sh")};
  argv.push_back(program("03"));
  if (way.setenv_before) argv.insert(argv.end(), {"--setenv-before", *way.setenv_before});
  if (way.setenv_after) argv.insert(argv.end(), {"--setenv-after", *way.setenv_after});
  argv.emplace_back("--json");
  return argv;
}

// Runs `way` and checks that cuda:0 is the first GPU of the value the rule says CUDA read.
void check_way(const Way& way) {
  gpulab::ProcessOptions options;
  options.argv = command_of(way);
  options.env = {{"CUDA_VISIBLE_DEVICES", way.shell},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  std::string command = way.shell ? "CUDA_VISIBLE_DEVICES=" + *way.shell + " " : "";
  for (const auto& arg : options.argv) command += arg + (&arg == &options.argv.back() ? "" : " ");
  const Setting value = value_at_cuda_init(way);
  INFO(command << "\nCUDA_VISIBLE_DEVICES at CUDA initialisation by the rule: " << value.value_or("(unset)"));
  GPULAB_REQUIRE_GPUS(gpus_needed({{"CUDA_VISIBLE_DEVICES", value}}), Env{});

  gpulab::ProcessResult result = run_lesson_process(options, /*prestarted=*/true);  // shell ways: afresh
  INFO((result.ok() ? std::string() : "the program " + result.outcome(options.timeout_s))
       << (result.err.empty() ? "" : "\nit printed on stderr:\n" + result.err));
  require_that(!result.timed_out && result.signal == 0, "the program runs to its end",
               "the program " + result.outcome(options.timeout_s));
  expect_that(result.exit_code == 0, "the program exits with code 0",
              "exit code " + std::to_string(result.exit_code));
  const LessonRun run = parse_run(std::move(result));

  const std::vector<int> visible = value ? entries(*value) : std::vector<int>{0};
  const auto count = value ? visible.size() : static_cast<std::size_t>(physical_gpus());
  expect_equal("torch::cuda::device_count()", run.fact("device_count"), count);
  // Entry i is the GPU CUDA numbers i with every GPU visible: physical GPU i where they are alike.
  const int first = cuda_order().at(static_cast<std::size_t>(visible.front()));
  expect_on_gpu(run, "x on cuda:0", "x", first);
  expect_equal("the GPUs where this process has a context", run.contexts("x on cuda:0"), std::vector<int>{first});
  if (first != 0) {
    const auto used = run.usage("x on cuda:0");
    expect_that(used.count(0) == 0, "nothing of this process on physical GPU 0 (nvidia-smi)",
                "this process uses " + (used.count(0) ? mib(used.at(0)) : std::string()) + " on physical GPU 0");
  }
  if (way.setenv_after) {
    // The late setenv did change the variable; CUDA just never read it again.
    expect_equal("CUDA_VISIBLE_DEVICES at the program's end (after its setenv)",
                 run.report.at("env_at_exit").at("CUDA_VISIBLE_DEVICES"), *way.setenv_after);
  }
}

}  // namespace

TEST_CASE("each of the article's five ways alone puts cuda:0 on the GPU it names", "[lesson03]") {
  Way way;
  SECTION("1: setenv in the program before its first CUDA call") { way.setenv_before = "3"; }
  SECTION("2: on the command line") { way.shell = "3"; }
  SECTION("3: on the command line of a script (run.sh), inherited by the program") {
    way.shell = "3";
    way.script = true;
  }
  SECTION("4: exported in the script") { way.exported = "4"; }
  SECTION("5: inline in the script") { way.inline_value = "5"; }
  check_way(way);
}

TEST_CASE("--setenv-before N puts x on physical GPU N and nothing on GPU 0, whatever the shell passed", "[lesson03]") {
  Way way;
  SECTION("N = 1") { way.setenv_before = "1"; }
  SECTION("N = 7") { way.setenv_before = "7"; }
  SECTION("N = 5, the shell passing CUDA_VISIBLE_DEVICES=0") {
    way.shell = "0";
    way.setenv_before = "5";
  }
  SECTION("N = 2, the shell passing CUDA_VISIBLE_DEVICES=0,1,2,3") {
    way.shell = "0,1,2,3";
    way.setenv_before = "2";
  }
  SECTION("a list, 6,3: the process sees two GPUs, cuda:0 is physical GPU 6") { way.setenv_before = "6,3"; }
  check_way(way);
}

TEST_CASE("setenv after the first CUDA call is silently ignored", "[lesson03]") {
  Way way;
  way.setenv_after = "3";
  SECTION("nothing else set: every GPU stays visible") {}
  SECTION("the command line's value stays in force") { way.shell = "5"; }
  SECTION("a setenv before CUDA starts is not undone by one after") { way.setenv_before = "6"; }
  check_way(way);
}

TEST_CASE("with several settings the closest one before CUDA initialisation wins", "[lesson03]") {
  Way way;
  SECTION("without a script, setenv in the program replaces the command line's value: (1) over (2)") {
    way.shell = "2";
    way.setenv_before = "6";
  }
  SECTION("an export in the script replaces the value the script inherited: (4) over (3)") {
    way.shell = "1";
    way.exported = "2";
  }
  SECTION("an inline setting replaces the value the script inherited: (5) over (3)") {
    way.shell = "1";
    way.inline_value = "3";
  }
  SECTION("`export A && CUDA_VISIBLE_DEVICES=B prog` gives the program B: (5) over (4)") {
    way.exported = "2";
    way.inline_value = "3";
  }
  SECTION("all at once, setenv in the program is closest: (1) over (5) over (4) over (3)") {
    way.shell = "1";
    way.exported = "2";
    way.inline_value = "3";
    way.setenv_before = "4,7";
    way.setenv_after = "6";
  }
  check_way(way);
}

// The stretch: --setenv-before names nvidia-smi's GPUs on every node.
namespace {
void check_nvidia_smi_numbers(const std::string& node_name, const std::string& ids, const std::vector<int>& expected,
                              const std::optional<std::string>& shell_order = std::nullopt) {
  Env env = {{"GPULAB_NODE", node_name}};
  if (shell_order) env.emplace_back("CUDA_DEVICE_ORDER", *shell_order);
  INFO(shown(env) << "lesson-03 --setenv-before " << ids
                      << "\nIDS are nvidia-smi's numbers; CUDA's own order on this node, nvidia-smi's number of cuda:0, cuda:1, ...: "
                      << [&] {
                           std::string order;
                           for (const int gpu : cuda_order(env)) order += (order.empty() ? "" : ",") + std::to_string(gpu);
                           return order;
                         }());
  const auto run = run_scenario("03", env, {"--setenv-before", ids});
  require_no_errors(run, "the program runs");
  expect_equal("torch::cuda::device_count()", run.fact("device_count"), expected.size());
  expect_on_gpu(run, "x on cuda:0", "x", expected.front());
  const auto contexts = run.contexts("x on cuda:0");
  expect_that(contexts == std::vector<int>{expected.front()}, "a CUDA context on " + gpus({expected.front()}) + " only",
              "on " + gpus(std::set<int>(contexts.begin(), contexts.end())));
}
}  // namespace

TEST_CASE("stretch: --setenv-before takes nvidia-smi's numbers on every node", "[lesson03][stretch]") {
  GPULAB_REQUIRE_SIMULATED_NODE("these scenarios need the simulated nodes (GPULAB_NODE)");
  SECTION("workstation-mixed, --setenv-before 0: the GTX 1080 Ti, not CUDA's fastest GPU") {
    check_nvidia_smi_numbers("workstation-mixed", "0", {0});
  }
  SECTION("workstation-mixed, --setenv-before 2,1") { check_nvidia_smi_numbers("workstation-mixed", "2,1", {2, 1}); }
  SECTION("pascal-rig, --setenv-before 0: the GTX 1080") { check_nvidia_smi_numbers("pascal-rig", "0", {0}); }
  SECTION("pascal-rig, --setenv-before 1,3") { check_nvidia_smi_numbers("pascal-rig", "1,3", {1, 3}); }
  SECTION("dgx-a100, --setenv-before 4") { check_nvidia_smi_numbers("dgx-a100", "4", {4}); }
  SECTION("workstation-mixed, --setenv-before 0, the shell passing CUDA_DEVICE_ORDER=FASTEST_FIRST") {
    check_nvidia_smi_numbers("workstation-mixed", "0", {0}, "FASTEST_FIRST");
  }
}

// Generated: a shell's list (and order) and --setenv-before (and now and then
// --setenv-after) of plain numbers; where x lands, the count, and the start-up log, as the
// reference solution. The task's: --setenv-before on nodes of like GPUs, and on every node
// without it (then the shell's settings alone decide, read in CUDA's order); the stretch's:
// --setenv-before on nodes of unlike GPUs, whatever order the shell set.
namespace {
Family lesson03_family(bool stretch) {
  Family family;
  family.lesson = "03";
  family.what = stretch ? "--setenv-before on nodes of unlike GPUs, under any CUDA_DEVICE_ORDER"
                        : "the shell's list, --setenv-before and --setenv-after";
  family.facts = {"device_count"};
  family.said = {"CUDA available"};
  family.draw = [stretch](Rng& rng) {
    ListKinds kinds;
    kinds.negative = kinds.out_of_range = false;  // lists that leave a GPU: x goes to cuda:0
    const bool flag = stretch || draw_int(rng, 0, 2) != 0;
    const std::string name = stretch || !flag ? draw_one(rng, {"workstation-mixed", "pascal-rig", "dgx-a100", "tiny2"})
                                              : draw_one(rng, {"dgx-a100", "tiny2", "aws-p4d"});
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    if (draw_int(rng, 0, 1) == 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_list_with_gpus(rng, name, kinds, 3));
    if (draw_int(rng, 0, 2) == 0) drawn.env.emplace_back("CUDA_DEVICE_ORDER", draw_one(rng, {"PCI_BUS_ID", "FASTEST_FIRST"}));
    if (flag) drawn.args = {"--setenv-before", draw_list_with_gpus(rng, name, kinds, 3)};
    if (draw_int(rng, 0, 2) == 0) drawn.args.insert(drawn.args.end(), {"--setenv-after", draw_list_with_gpus(rng, name, kinds, 2)});
    return drawn;
  };
  return family;
}
}  // namespace

TEST_CASE("generated scenarios: the shell's list against --setenv-before and --setenv-after", "[lesson03]") {
  check_against_reference(lesson03_family(/*stretch=*/false));
}

TEST_CASE("stretch: generated scenarios, --setenv-before on nodes of unlike GPUs", "[lesson03][stretch]") {
  check_against_reference(lesson03_family(/*stretch=*/true));
}
