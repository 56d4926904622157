// The lesson manifest (lessons/manifest.json): the one ordered list of lessons that the
// build, the CLI, the tests and the docs all read.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {

/// A question the tutorial asks before a lesson first runs, scored against what the run's
/// report shows (never against an answer written here). `observe` says what to look at:
///   "tensor"     where tensor `subject` lives: a physical GPU number or "cpu";
///   "gpus_used"  the physical GPUs the process holds memory on: a list, or "none";
///   "gpu_memory" whether the process holds memory on physical GPU `subject`: yes/no;
///   "fact"       the lesson's fact `subject` (e.g. device_count): a number or text; a fact
///                named `..._gpus` (gpulab::WorkerPool's `workerN_gpus`) is a GPU list, or
///                "none", asked and compared as gpus_used's;
///   "error"      whether an error whose label starts with `subject` was reported: yes/no;
///   "succeeds"   the opposite: whether no such error was reported ("will it run?"): yes/no.
/// The kinds let a question be asked either way, so that "yes" is not always the answer.
struct Prediction {
  std::string question;  ///< what the tutorial asks
  std::string observe;   ///< what to look at: tensor, gpus_used, gpu_memory, fact or error
  std::string subject;   ///< the tensor, GPU, fact or error label the question is about
  std::string at;   ///< observation label; empty: the last observation that shows the subject
  int rank = 0;     ///< launched lessons: whose report
  int step = 0;     ///< stepped lessons: which step's report
  std::string why;  ///< the explanation, shown after the explain question
  /// The explain step: after the run, the learner picks the mechanism behind what it showed.
  /// The wrong choices are the real misconceptions; `answer` is the right one's index.
  struct Explain {
    std::string question;
    std::vector<std::string> choices;
    std::size_t answer = 0;
  };
  std::optional<Explain> explain;  ///< none: the tutorial shows the why straight away
};

/// One lesson of the manifest: its files, scenario, hints, predictions and tasks.
struct LessonEntry {
  std::string id;                  ///< "04"
  std::string slug;                ///< "cuda-1-is-gpu-3"
  std::string title;               ///< as the lesson list and the site show it
  std::vector<std::string> claims; ///< docs/article-claims.md ids, e.g. "A2.6"
  /// The default scenario: environment variables to set (unless the user set them).
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> args;   ///< default scenario arguments
  std::vector<std::string> hints;  ///< progressively more specific
  std::vector<Prediction> predictions;  ///< asked before the first run
  /// The lesson's task as a goal in physical terms ("make the model use physical GPU 5
  /// without touching CUDA_VISIBLE_DEVICES"), never the edit.
  std::string goal;
  /// The optional stretch task's goal (checks tagged [stretch]); empty: none.
  std::string stretch;
  /// Multi-process lessons run under `gpulab launch`: processes per node (0: one process,
  /// not launched) and nodes ("launch" in the scenario).
  int nproc_per_node = 0;
  int nnodes = 1;  ///< nodes of a launched lesson (`--nnodes`)
  /// A lesson in several runs (save on one machine, load on another): each step's
  /// environment and arguments, on top of the scenario's. Empty: one run.
  struct Step {
    std::string title;  ///< what the step does ("save on dgx-a100")
    std::vector<std::pair<std::string, std::string>> env;  ///< environment on top of the scenario's
    std::vector<std::string> args;  ///< arguments on top of the scenario's
  };
  std::vector<Step> steps;  ///< empty: one run

  /// Runs several processes under `gpulab launch`.
  bool launched() const { return nproc_per_node > 0; }

  /// "04-which-gpu-is-cuda-1": the folder under lessons/ and solutions/.
  std::string directory() const { return id + "-" + slug; }

  // What the lesson's files and build targets are called: stated here once, for every
  // command, the tutor and the graders.
  /// "lessons/04-…/main.cpp" (the exercise) or, with `solution`, "solutions/04-…/main.cpp".
  std::string source_file(bool solution = false) const {
    return (solution ? "solutions/" : "lessons/") + directory() + "/main.cpp";
  }
  /// "lessons/04-…/EXPLAIN.md": why the run came out so.
  std::string explanation_file() const { return "lessons/" + directory() + "/EXPLAIN.md"; }
  /// "lesson-04" (the exercise's program) or, with `solution`, "solution-04".
  std::string program_target(bool solution = false) const { return (solution ? "solution-" : "lesson-") + id; }
  /// "lesson04-checks": the lesson's checks program.
  std::string checks_target() const { return "lesson" + id + "-checks"; }

  /// The scenario in a line, e.g. " CUDA_VISIBLE_DEVICES=2,3 launched: 1 node(s) x 4 processes".
  std::string scenario_text() const;
};

/// A manifest that cannot be read or is inconsistent; the message names the file and entry.
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The lessons, in order, and the tree their paths are relative to.
struct Manifest {
  std::string root;  ///< repository root the paths are relative to
  std::vector<LessonEntry> lessons;  ///< in the manifest's order

  /// Finds "4", "04" or "04-slug"; otherwise throws a message listing the lessons.
  /// On a temporary manifest (`load_manifest().find(id)`) it returns a copy: a reference
  /// into the temporary would dangle at the end of the statement.
  const LessonEntry& find(const std::string& id) const&;
  /// find() on a temporary manifest: returns a copy.
  LessonEntry find(const std::string& id) &&;
};

/// Reads `path`, or the manifest of the source tree gpulab was built from.
Manifest load_manifest(const std::string& path = {});

/// The manifest in `text`, as if read from `path` (which names it in errors and sets root).
Manifest parse_manifest(std::string_view text, const std::string& path);

}  // namespace gpulab
