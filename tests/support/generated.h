// Generated scenarios, judged against the reference solution: a lesson's checks draw many
// scenarios (CUDA_VISIBLE_DEVICES lists with duplicates, leading zeros, spaces, UUIDs and
// their prefixes, MIG, bad entries; other nodes; other arguments), run the learner's
// program and the lesson's solution in each, and compare what the node observed of the two:
// the physical GPU of every tensor at every observation, the GPUs holding memory and
// contexts, how much memory, the errors and the exit code. The program's own facts count
// only where a lesson names them (a fact the reference reports truly).
//
// One seed per checks run: GPULAB_SEED=N, else a random one. A failure names the scenario
// in the learner's terms and the seed, so `GPULAB_SEED=N ./gpulab check NN` runs it again.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lesson_run.h"

namespace gpulab::test {

/// One drawn scenario: the environment over a clean CUDA environment, and the arguments.
struct Drawn {
  Env env;
  std::vector<std::string> args;
};
using Rng = std::mt19937_64;
using Generator = std::function<Drawn(Rng&)>;

/// This checks run's seed: GPULAB_SEED (a decimal number), else one drawn at random. The same
/// for every family in the run.
std::uint64_t generated_seed();

struct Family {
  std::string lesson;                 ///< "04"
  std::string what;                   ///< "integer lists that name the GPU", for the failure's line
  Generator draw;
  int count = 12;                     ///< scenarios drawn when grading; a learner's check draws half
  std::vector<std::string> facts;     ///< facts of the report that must equal the reference's
  /// The observations (and errors) compared: those whose label starts with one of these;
  /// empty: all. A task's family leaves out what only the stretch task observes (the
  /// reference solution does both).
  std::vector<std::string> labels;
  /// Lines the program prints (lesson.say) that must appear exactly when the reference's
  /// do: each is a needle; the learner's line holding it must be present when due, absent
  /// when not (its wording is the learner's).
  std::vector<std::string> said;
  /// Bytes on one GPU may differ from the reference's by this much (an extra small tensor).
  std::uint64_t memory_slack = 8ull * 1024 * 1024;
  /// What the lesson asks beyond the observations, judged once those agree (lesson 08: its
  /// message names the GPUs it got): (expected, observed), or two empty strings.
  std::function<std::pair<std::string, std::string>(const nlohmann::json& learner_report, const Drawn& drawn)> also;
};

/// How many scenarios `family` draws: all of them under GPULAB_SCENARIOS=all (grading, the
/// mutants and variants: src/grading/runner.h's fix_generated_seed sets it), else half, so a
/// learner's edit-to-verdict stays short (each check draws a new half at random).
int scenario_count(const Family& family);

/// Runs `family`'s scenarios (seeded by generated_seed() and the lesson) on the learner's
/// program and the reference solution, two at a time, and fails with the first scenario
/// whose observations differ: "expected (as the reference solution does): weight on
/// physical GPU 3 (after forward) — observed: on cpu", the scenario and the seed beside it.
/// Simulated node only (the nodes are drawn); nothing to compare against where the build has
/// no solution (a student edition): a warning then.
void check_against_reference(const Family& family);

// ---- what the generators draw from ----------------------------------------------------------

/// The kinds of CUDA_VISIBLE_DEVICES entries a list may be drawn with.
struct ListKinds {
  bool duplicates = true;     ///< an entry again ("3,3")
  bool leading_zeros = true;  ///< "02"
  bool out_of_range = true;   ///< an index past the node's GPUs
  bool negative = true;       ///< "-1"
  bool spaces = false;        ///< " 3" (CUDA's parse, not the text's, decides)
  bool uuids = false;         ///< GPU-… of a GPU, or a unique prefix of one
  bool mig = false;           ///< MIG-… of an instance, on a node that has them
  bool garbage = false;       ///< "x", an empty entry
};

/// Every kind at once: what CUDA makes of any list.
ListKinds every_kind();

/// The simulated nodes (nodes/*.json), by name.
const std::vector<std::string>& simulated_nodes();

/// A CUDA_VISIBLE_DEVICES list of 1 to `max_entries` entries for `node_name`, mostly plain
/// indices of its GPUs, with the kinds `kinds` allows mixed in.
std::string draw_visible_list(Rng& rng, const std::string& node_name, const ListKinds& kinds, int max_entries = 5);

/// Like draw_visible_list, but a list that leaves this process at least one GPU (drawn again
/// until it does): for lessons whose programs need one, and whose arguments count them.
std::string draw_list_with_gpus(Rng& rng, const std::string& node_name, const ListKinds& kinds, int max_entries = 5);

/// Where a drawn scenario runs: GPULAB_NODE one of `nodes` and, with probability
/// `list_chance`, a CUDA_VISIBLE_DEVICES list of entries that keep GPUs (no negative or
/// out-of-range entry; repeated ones only with `repeats`, and never all of them hidden);
/// `visible`: how many GPUs the process then sees, at least 1.
struct Place {
  Drawn drawn;
  std::string node;
  int visible = 0;
};
Place draw_place(Rng& rng, const std::vector<std::string>& nodes, double list_chance, bool repeats = true,
                 int max_entries = 4);

/// `count` distinct CUDA indices below `visible` (fewer when `visible` is smaller), in a
/// random order, comma-separated: "2,0".
std::string draw_indices(Rng& rng, int visible, int count);

/// DataParallel's scenarios (lessons 09, 10): dgx-a100, half the time under a drawn list, and
/// --device-ids of 1 to 3 distinct GPUs the process sees.
Generator device_ids_scenarios();

/// One of `names`, uniformly.
std::string draw_one(Rng& rng, const std::vector<std::string>& names);

/// An integer in [low, high].
int draw_int(Rng& rng, int low, int high);

/// The physical GPUs (nvidia-smi's numbers) a list leaves this process, in CUDA index order,
/// on a simulated node (the simulator's own rule, gpulab::visible_devices).
std::vector<int> visible_after(const std::string& node_name, const std::optional<std::string>& list,
                               const std::optional<std::string>& order = std::nullopt);

}  // namespace gpulab::test
