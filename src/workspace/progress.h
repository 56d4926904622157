// The learner's progress: a small plain-text file at the repository root, so it survives
// rebuilds and a learner can read or edit it. Not ignored by git: a hand-in carries it, for
// `gpulab class report` (docs/class.md, "GitHub Classroom"). One line per lesson, and one
// with the answers given (the class report reads them; "-": not answered):
//   lesson 04 passed predictions 1/2 explained 2/2
//   answers 04 predicted 4 none explained b c
//   current 05
// GPULAB_PROGRESS_FILE points it elsewhere (tests, a second learner on one checkout).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab {

struct LessonProgress {
  bool passed = false;
  std::optional<int> predictions_right;  ///< set once the lesson's predictions were scored
  int predictions_asked = 0;
  std::optional<int> explained_right;  ///< set once the explain questions were answered
  int explained_asked = 0;
  std::vector<std::string> predicted;  ///< each prediction's answer, canonical ("-": none)
  std::vector<std::string> explained;  ///< each explain answer's letter ("-": none)
};

struct Progress {
  std::string current;                            ///< the lesson the tutorial is on
  std::map<std::string, LessonProgress> lessons;  ///< by lesson id

  int passed_count() const;
};

/// A line of a progress file that parse_progress could not read (and skipped).
struct SkippedLine {
  int number = 0;  ///< from 1
  std::string text;
};

/// The progress in a progress file's text. Lines it cannot read are skipped and, when
/// `skipped` is given, listed there: a hand-edited file never stops the tutorial.
Progress parse_progress(const std::string& text, std::vector<SkippedLine>* skipped = nullptr);

/// The file's text for `progress` (what parse_progress reads back).
std::string progress_text(const Progress& progress);

/// The progress file for the repository at `root`.
std::string progress_path(const std::string& root);

/// Reads it; a missing file is no progress. Lines it cannot read are skipped (a warning
/// goes to stderr).
Progress load_progress(const std::string& path);

/// Writes it atomically (a temporary file renamed over it): a crash never leaves half a file.
void save_progress(const std::string& path, const Progress& progress);

}  // namespace gpulab
