// Lesson 08: CUDA_VISIBLE_DEVICES edge cases — what each list makes visible, where a tensor
// put on every visible device lands, and whether the program tells, from inside, that CUDA
// ignored part of the list and which physical GPUs it got, by the names nvidia-smi -L shows
// (claim A1.2; rules in docs/reference.md "Visibility"). The GPUs it names are compared with
// where its tensors were observed. Lists are built from the node files (UUIDs, GPU count),
// not pasted; on real GPUs from NVML's inventory and CUDA's order.
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
const std::string kLabel = "one tensor per visible GPU";

// "1 GPU", "2 GPUs".
std::string counted(std::size_t n, const std::string& one, const std::string& many = "") {
  return std::to_string(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

// The program's messages, quoted: "\"...\"", "\"...\", then \"...\"".
std::string quoted(const std::vector<std::string>& messages) {
  std::string text;
  for (std::size_t i = 0; i < messages.size(); ++i) text += (i == 0 ? "\"" : ", then \"") + messages[i] + "\"";
  return text;
}

// What the program complained, as a learner reads it: "no complaint", "it complains \"...\"".
std::string complaining(const std::vector<std::string>& messages) {
  return messages.empty() ? "no complaint" : "it complains " + quoted(messages);
}

// "1 error", "2 errors: 'check the list': \"...\", ...": every error of the report.
std::string report_errors(const nlohmann::json& errors) {
  std::string text = counted(errors.size(), "error");
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const auto& e = errors[i];
    text += (i == 0 ? ": " : ", ");
    text += e.contains("label") && e.contains("message")
                ? "'" + e.at("label").get<std::string>() + "': \"" + e.at("message").get<std::string>() + "\""
                : e.dump();
  }
  return text;
}

// For each physical GPU, the names nvidia-smi -L gives it: its UUID first, then its MIG
// instances' UUIDs (simulated node only; NVML's inventory names no MIG instances here).
std::vector<std::vector<std::string>> names_of(const std::string& node_name) {
  const Env env{{"GPULAB_NODE", node_name}};
  std::vector<std::vector<std::string>> names;
  for (const auto& u : gpu_uuids(env)) names.push_back({u});
  if (simulated(env)) {
    const auto n = node(node_name);
    for (std::size_t g = 0; g < n.gpus.size() && g < names.size(); ++g)
      for (const auto& mig : n.gpus[g].mig) names[g].push_back(mig.uuid);
  }
  return names;
}

// The lesson's stretch: the value it proposes names exactly the GPUs it got, one entry each.
void check_same_gpus(const std::string& visible, const std::vector<int>& expected,
                     const std::string& node_name = gpulab::kDefaultNodeName) {
  INFO("GPULAB_NODE=" << node_name << " CUDA_VISIBLE_DEVICES=\"" << visible << "\"");
  const auto run = run_scenario("08", {{"GPULAB_NODE", node_name}, {"CUDA_VISIBLE_DEVICES", visible}});
  const auto& proposed = run.fact("same_gpus_list");
  require_that(proposed.is_string(), "a CUDA_VISIBLE_DEVICES value proposed for the GPUs it got", proposed.dump());
  const std::string list = proposed.get<std::string>();
  const auto again = run_scenario("08", {{"GPULAB_NODE", node_name}, {"CUDA_VISIBLE_DEVICES", list}});
  std::vector<int> got;
  for (std::size_t i = 0; i < again.observation(kLabel).at("tensors").size(); ++i)
    got.push_back(again.physical_of(kLabel, "cuda:" + std::to_string(i)));
  std::string where;
  for (int gpu : got) where += (where.empty() ? "" : ", ") + std::to_string(gpu);
  std::string wanted;
  for (int gpu : expected) wanted += (wanted.empty() ? "" : ", ") + std::to_string(gpu);
  expect_that(got == expected,
              "CUDA_VISIBLE_DEVICES=\"" + list + "\" (what the program proposed for \"" + visible +
                  "\") gives the same physical GPUs, in order: " + (wanted.empty() ? "none" : wanted),
              "it gives " + (where.empty() ? std::string("none") : where));
  const auto said = again.errors("check the list");
  expect_that(said.empty(), "CUDA honours every entry of the proposed \"" + list + "\"", complaining(said));
}

// Runs the lesson under `visible` and checks that CUDA exposed `expected` (physical GPUs,
// in CUDA index order) — the count, one tensor on each, contexts nowhere else — and that
// the program complains exactly when the list was not honoured in full.
void check_visible(const std::string& visible, const std::vector<int>& expected,
                   const std::string& node_name = gpulab::kDefaultNodeName) {
  INFO("GPULAB_NODE=" << node_name << " CUDA_VISIBLE_DEVICES=\"" << visible << "\"");
  const auto run = run_scenario("08", {{"GPULAB_NODE", node_name}, {"CUDA_VISIBLE_DEVICES", visible}});
  const std::set<int> expected_set(expected.begin(), expected.end());
  expect_equal("torch::cuda::device_count()", run.fact("device_count"), static_cast<int>(expected.size()));
  const auto tensors = run.observation(kLabel).at("tensors").size();
  expect_that(tensors == expected.size(),
              std::to_string(expected.size()) + " tensors, one per visible GPU (" + gpus(expected_set) + ")",
              std::to_string(tensors) + " tensors");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const int observed = run.physical_of(kLabel, "cuda:" + std::to_string(i));
    expect_that(observed == expected[i],
                "the tensor made on cuda:" + std::to_string(i) + " lands " + placement(expected[i]),
                "it is " + placement(observed));
  }
  const auto contexts = run.contexts(kLabel);
  const std::set<int> with_context(contexts.begin(), contexts.end());
  expect_that(with_context == expected_set, "CUDA contexts on " + gpus(expected_set) + " (" + kLabel + ")",
              "on " + gpus(with_context));

  const std::size_t entries = visible.empty() ? 0 : 1 + std::count(visible.begin(), visible.end(), ',');
  const bool cut = entries != expected.size();
  const auto said = run.errors("check the list");
  if (!cut) {
    expect_that(said.empty(),
                "no complaint from the program: CUDA shows one GPU per entry (" + std::to_string(entries) + ")",
                complaining(said));
  } else {
    require_that(said.size() == 1,
                 "CUDA shows " + counted(expected.size(), "GPU") + " for " + counted(entries, "entry", "entries") +
                     ", so the program says that CUDA ignored part of the list",
                 complaining(said));
    // It names each GPU it got as nvidia-smi -L does: the GPU's UUID, or its MIG instance's.
    const auto names = names_of(node_name);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& accepted = names.at(static_cast<std::size_t>(expected[i]));
      const bool named = std::any_of(accepted.begin(), accepted.end(),
                                     [&](const std::string& name) { return said[0].find(name) != std::string::npos; });
      expect_that(named,
                  "the complaint names the GPU it got on cuda:" + std::to_string(i) + ", " + gpus({expected[i]}) +
                      ", as nvidia-smi -L does: " + accepted.front() +
                      (accepted.size() > 1 ? " (or its MIG instance's UUID)" : ""),
                  "it says " + quoted(said));
    }
  }
  const auto& errors = run.report.at("errors");
  expect_that(errors.size() == (cut ? 1u : 0u),
              "the report holds " + counted(cut ? 1 : 0, "error") + (cut ? ", the complaint" : ""),
              report_errors(errors));
}

std::string uuid(int physical) { return gpu_uuids().at(static_cast<std::size_t>(physical)); }

// How many GPUs' UUIDs start with `prefix`.
int matches(const std::string& prefix) {
  const auto uuids = gpu_uuids();
  return static_cast<int>(
      std::count_if(uuids.begin(), uuids.end(), [&](const std::string& u) { return u.rfind(prefix, 0) == 0; }));
}

// The shortest prefix of GPU `physical`'s UUID that names no other GPU.
std::string unique_prefix(int physical) {
  const std::string full = uuid(physical);
  for (std::size_t length = 5; length <= full.size(); ++length)
    if (matches(full.substr(0, length)) == 1) return full.substr(0, length);
  FAIL("expected: a prefix of physical GPU " << physical << "'s UUID that names no other GPU — observed: every prefix"
                                             << " of " << full << " matches another GPU's UUID too");
  return full;
}
}  // namespace

TEST_CASE("integer lists: an invalid or out-of-range entry ends the list, a duplicate empties it", "[lesson08]") {
  GPULAB_REQUIRE_GPUS(6, Env{});  // "5,3" names GPU 5
  // An integer entry i is the GPU CUDA numbers i with every GPU visible: physical GPU i on the
  // default node, whose GPUs share one compute capability (CUDA's order is PCI order there).
  const auto order = cuda_order();
  const auto gpu = [&](std::size_t entry) { return order.at(entry); };
  const std::string past_the_end = std::to_string(physical_gpus());

  SECTION("the CUDA Guide's example: 0,2,-1,1 shows GPUs 0 and 2") { check_visible("0,2,-1,1", {gpu(0), gpu(2)}); }
  SECTION("an entry that is not a number ends the list") { check_visible("1,x,2", {gpu(1)}); }
  SECTION("an index past the last GPU ends the list") { check_visible("1," + past_the_end + ",2", {gpu(1)}); }
  SECTION("a repeated index hides every GPU") { check_visible("0,0", {}); }
  SECTION("-1 alone hides every GPU") { check_visible("-1", {}); }
  SECTION("an empty value hides every GPU") { check_visible("", {}); }
  SECTION("the list's order is CUDA's numbering") { check_visible("5,3", {gpu(5), gpu(3)}); }
}

TEST_CASE("UUID lists: full UUIDs and unique prefixes select GPUs, an unknown or ambiguous entry ends the list",
          "[lesson08]") {
  GPULAB_REQUIRE_GPUS(7, Env{});  // the lists name GPUs up to 6
  const std::string unknown = "GPU-00000000";
  if (matches(unknown) != 0)
    FAIL("expected: no GPU's UUID starts with " << unknown << " — observed: " << matches(unknown) << " do");
  if (matches("GPU-") <= 1)
    FAIL("expected: more than one GPU whose UUID starts with GPU- — observed: " << matches("GPU-"));

  SECTION("a full UUID") { check_visible(uuid(3), {3}); }
  SECTION("UUIDs in list order") { check_visible(uuid(6) + "," + uuid(2), {6, 2}); }
  SECTION("a unique prefix") { check_visible(unique_prefix(5), {5}); }
  SECTION("'GPU-' alone matches every GPU: ambiguous, so nothing is visible") { check_visible("GPU-", {}); }
  SECTION("an ambiguous prefix ends the list") { check_visible(uuid(1) + ",GPU-", {1}); }
  SECTION("an unknown UUID ends the list") { check_visible(uuid(2) + "," + unknown + "," + uuid(4), {2}); }
  SECTION("an unknown UUID alone hides every GPU") { check_visible(unknown, {}); }
  SECTION("a repeated UUID hides every GPU") { check_visible(uuid(4) + "," + uuid(4), {}); }
  SECTION("an integer after UUIDs ends the list") { check_visible(uuid(3) + ",1", {3}); }
}

TEST_CASE("stretch: a CUDA_VISIBLE_DEVICES value that gets the same GPUs with no entry ignored",
          "[lesson08][stretch]") {
  GPULAB_REQUIRE_GPUS(6, Env{});
  const auto order = cuda_order();
  check_same_gpus("0,2,-1,1", {order.at(0), order.at(2)});
  check_same_gpus("5,3,x", {order.at(5), order.at(3)});
  check_same_gpus(unique_prefix(4) + ",GPU-", {4});
  check_same_gpus("0,0", {});
  if (simulated()) {
    const auto mig_node = node("mig-a100");
    std::string every_gpu;
    for (std::size_t g = mig_node.gpus.size(); g-- > 0;) every_gpu += std::to_string(g) + (g > 0 ? "," : "");
    int parent = -1;
    for (std::size_t g = 0; g < mig_node.gpus.size(); ++g)
      if (!mig_node.gpus[g].mig.empty() && parent < 0) parent = static_cast<int>(g);
    check_same_gpus(every_gpu, {parent}, "mig-a100");
    // CUDA's order is not nvidia-smi's there: "0" names CUDA's first GPU, nvidia-smi's GPU 1.
    const Env mixed = {{"GPULAB_NODE", "workstation-mixed"}};
    check_same_gpus("0,x", {cuda_order(mixed).at(0)}, "workstation-mixed");
  }
}

TEST_CASE("MIG: a process sees one MIG instance, on its parent GPU, even when two are listed", "[lesson08]") {
  // The simulated node's MIG instances are in its node file; a real machine's are not
  // known to gpulab. Ends the test case as GPULAB_REQUIRE_GPUS does.
  if (!simulated()) {
    WARN("needs 1 GPU, found 0 in MIG mode that this check can list: gpulab's NVML inventory names no MIG"
         " instances, so the MIG cases run on the simulated mig-a100 node only");
    return;
  }
  const auto mig_node = node("mig-a100");
  int parent = -1;
  for (std::size_t g = 0; g < mig_node.gpus.size(); ++g)
    if (mig_node.gpus[g].mig.size() >= 2) parent = static_cast<int>(g);
  if (parent < 0)
    FAIL("expected: a GPU of node mig-a100 with at least 2 MIG instances — observed: none has more than one");
  const auto& gpu = mig_node.gpus[static_cast<std::size_t>(parent)];
  const auto& first = gpu.mig[0];

  SECTION("two MIG UUIDs: device_count is 1") {
    check_visible(first.uuid + "," + gpu.mig[1].uuid, {parent}, "mig-a100");
  }
  SECTION("the MIG-<GPU-UUID>/<gi>/<ci> form") {
    check_visible("MIG-" + gpu.uuid + "/" + std::to_string(first.gpu_instance) + "/" +
                      std::to_string(first.compute_instance),
                  {parent}, "mig-a100");
  }
  SECTION("a list reaching the MIG-mode GPU by index shows its first instance only and hides the others") {
    std::string every_gpu;
    for (std::size_t g = mig_node.gpus.size(); g-- > 0;) every_gpu += std::to_string(g) + (g > 0 ? "," : "");
    check_visible(every_gpu, {parent}, "mig-a100");
  }
}

// Generated: lists of every kind on every node: the GPUs CUDA shows and whether the program
// says it ignored part of the list, as the reference solution (the message's words, which
// must name the GPUs by UUID, are the hand-written checks' to judge).
TEST_CASE("generated scenarios: lists of every kind on every node", "[lesson08]") {
  Family family;
  family.lesson = "08";
  family.what = "CUDA_VISIBLE_DEVICES lists of every kind";
  family.count = 16;
  family.facts = {"device_count"};
  // When it is due (the observations agreed on that), the message names every GPU it got.
  family.also = [](const nlohmann::json& report, const Drawn& drawn) -> std::pair<std::string, std::string> {
    std::string message;
    for (const auto& e : report.at("errors"))
      if (e.value("label", "") == "check the list") message = e.value("message", "");
    if (message.empty()) return {};
    const auto names = names_of(drawn.env.front().second.value_or(gpulab::kDefaultNodeName));
    for (const auto& o : report.at("observations"))
      if (o.value("label", "") == kLabel)
        for (const auto& t : o.at("tensors")) {
          const int gpu = t.value("physical_index", -1);
          if (gpu < 0) continue;
          const auto& accepted = names.at(static_cast<std::size_t>(gpu));
          if (std::none_of(accepted.begin(), accepted.end(),
                           [&](const std::string& name) { return message.find(name) != std::string::npos; }))
            return {"the complaint names " + gpus({gpu}) + ", which it got, as nvidia-smi -L does: " + accepted.front(),
                    "it says \"" + message.substr(0, message.find('\n')) + "\""};
        }
    return {};
  };
  family.draw = [](Rng& rng) {
    const std::string name = draw_one(rng, simulated_nodes());
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}, {"CUDA_VISIBLE_DEVICES", draw_visible_list(rng, name, every_kind())}};
    return drawn;
  };
  check_against_reference(family);
}
