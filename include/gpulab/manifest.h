// The lesson manifest (lessons/manifest.json): the one ordered list of lessons that the
// build, the CLI, the tests and the docs all read.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {

struct LessonEntry {
  std::string id;                  ///< "04"
  std::string slug;                ///< "cuda-1-is-gpu-3"
  std::string title;
  std::vector<std::string> claims; ///< docs/article-claims.md ids, e.g. "A2.6"
  /// The default scenario: environment variables to set (unless the user set them).
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> args;   ///< default scenario arguments
  std::vector<std::string> hints;  ///< progressively more specific
  /// Multi-process lessons run under `gpulab launch`: processes per node (0: one process,
  /// not launched) and nodes ("launch" in the scenario).
  int nproc_per_node = 0;
  int nnodes = 1;
  /// A lesson in several runs (save on one machine, load on another): each step's
  /// environment and arguments, on top of the scenario's. Empty: one run.
  struct Step {
    std::string title;
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::string> args;
  };
  std::vector<Step> steps;

  bool launched() const { return nproc_per_node > 0; }

  std::string directory() const { return id + "-" + slug; }
};

class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Manifest {
  std::string root;  ///< repository root the paths are relative to
  std::vector<LessonEntry> lessons;

  /// Finds "4", "04" or "04-slug"; otherwise throws a message listing the lessons.
  /// On a temporary manifest (`load_manifest().find(id)`) it returns a copy: a reference
  /// into the temporary would dangle at the end of the statement.
  const LessonEntry& find(const std::string& id) const&;
  LessonEntry find(const std::string& id) &&;
};

/// Reads `path`, or the manifest of the source tree gpulab was built from.
Manifest load_manifest(const std::string& path = {});

/// The manifest in `text`, as if read from `path` (which names it in errors and sets root).
Manifest parse_manifest(std::string_view text, const std::string& path);

}  // namespace gpulab
