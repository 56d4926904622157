// The class's predictions (`gpulab class report DIR…`, docs/class.md): every student's
// progress file read, the answers they gave to each lesson's prediction and explain
// questions counted, and set against the truth the tutorial scores them with: for an
// explain question the manifest's answer key, for a prediction what the shipped exercise's
// run shows in the lesson's scenario (the run the tutor scores against, through the one
// runner). The figures go to view/class_report.h to be shown.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "course/manifest.h"
#include "grading/runner.h"
#include "tutor/progress.h"
#include "view/class_report.h"

namespace gpulab::classroom {

/// The name of a student's progress file in their tree (tutor/progress.h's file).
inline constexpr const char* kProgressFile = ".gpulab-progress";

/// One student's tree as read.
struct StudentTree {
  std::string name;  ///< the folder's name, never its path
  /// nullopt: nothing could be read (no folder, no progress file, not readable).
  std::optional<tutor::Progress> progress;
  std::vector<tutor::SkippedLine> skipped;  ///< lines parse_progress could not read
  std::string problem;  ///< why there is no progress ("" when there is)
};

/// Reads DIR/.gpulab-progress; never throws: a missing folder or file is its `problem`.
StudentTree read_student(const std::string& dir);

/// read_student for each folder, in order; two folders of one name are told apart as
/// "alice", "alice (2)".
std::vector<StudentTree> read_students(const std::vector<std::string>& dirs);

/// The ids of the lessons some student's progress names, in the manifest's order (ids the
/// manifest does not know are left out: tally() reports them).
std::vector<std::string> lessons_started(const Manifest& manifest, const std::vector<StudentTree>& students);

/// The truth of a lesson's predictions, as the tutor would score them.
struct LessonTruth {
  std::vector<std::optional<std::string>> predictions;  ///< by prediction; nullopt: the run cannot tell
  std::string note;  ///< what was run, or why there is no truth
};

/// Runs lesson `lesson`'s exercise (bin/lesson-NN, as the tutor does before it scores) in
/// the lesson's scenario alone (this shell's CUDA_VISIBLE_DEVICES ignored) and reads each
/// prediction's answer off its report (observed_answer). Never throws.
LessonTruth run_truth(const LessonEntry& lesson, const grading::Programs& programs, double timeout_s);

/// Builds the exercises of `ids` (`builder`), then run_truth for each, once; a line per
/// lesson to `log`.
std::map<std::string, LessonTruth> truths(const Manifest& manifest, const std::vector<std::string>& ids,
                                          grading::Builder& builder, const grading::Programs& programs,
                                          double timeout_s, std::ostream& log);

/// The class report: for each lesson a student started (manifest order), each
/// prediction's and explain question's answers counted against the truth ("-" and
/// missing answers count as no answer), and who passed; the students' problems listed.
/// `truths`: by lesson id; a lesson without one has no prediction truth. Pure: no I/O.
view::ClassReport tally(const Manifest& manifest, const std::vector<StudentTree>& students,
                        const std::map<std::string, LessonTruth>& truths, bool truth_run, const std::string& profile);

}  // namespace gpulab::classroom
