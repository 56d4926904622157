// The learner's progress: a small plain-text file at the repository root (ignored by git),
// so it survives rebuilds and a learner can read or edit it. One line per lesson:
//   lesson 04 passed predictions 1/2
//   current 05
// GPULAB_PROGRESS_FILE points it elsewhere (tests, a second learner on one checkout).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gpulab::cli {

struct LessonProgress {
  bool passed = false;
  std::optional<int> predictions_right;  ///< set once the lesson's predictions were scored
  int predictions_asked = 0;
};

struct Progress {
  std::string current;                            ///< the lesson the tutorial is on
  std::map<std::string, LessonProgress> lessons;  ///< by lesson id

  int passed_count() const;
};

/// The progress file for the repository at `root`.
std::string progress_path(const std::string& root);

/// Reads it; a missing file is no progress. Lines it cannot read are skipped (a warning
/// goes to stderr), so a hand-edited file never stops the tutorial.
Progress load_progress(const std::string& path);

/// Writes it atomically (a temporary file renamed over it): a crash never leaves half a file.
void save_progress(const std::string& path, const Progress& progress);

}  // namespace gpulab::cli
