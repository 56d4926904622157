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
