// The class's predictions (`gpulab class report DIR…`, docs/class.md): every student's
// progress file read, the answers they gave to each lesson's prediction and explain
// questions counted, and set against the truth the tutorial scores them with: for an
// explain question the manifest's answer key, for a prediction what the shipped exercise's
// run shows in the lesson's scenario (the run the tutor scores against, through the one
// runner). The figures go to view/class_report.h to be shown.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "course/manifest.h"
#include "grading/runner.h"
#include "workspace/progress.h"
#include "workspace/workspace.h"
#include "view/class_report.h"

namespace gpulab::classroom {

/// The name of a student's progress file in their tree (tutor/progress.h's file).
inline constexpr const char* kProgressFile = ".gpulab-progress";

/// The most of a progress file read: a real one is a few KiB; a larger one is a problem.
inline constexpr std::size_t kMaxProgressBytes = std::size_t{1} << 20;
/// The most of class grade's class.json or a student's grading.json read.
inline constexpr std::size_t kMaxGradesBytes = std::size_t{16} << 20;

/// What class grade found of one student (its class.json and <student>/grading.json).
struct Grade {
  std::string status;                          ///< graded, over_limit, no_result, not_a_tree
  std::map<std::string, std::string> lessons;  ///< lesson id -> passed, failed, build_failed, crashed, timed_out
};

/// One student's tree as read.
struct StudentTree {
  std::string name;  ///< grading::student_names's: safe to show, as class grade names its folder
  /// nullopt: nothing could be read (no folder, no progress file, not a regular file, too large).
  std::optional<Progress> progress;
  std::vector<SkippedLine> skipped;  ///< lines parse_progress could not read
  std::string problem;  ///< why there is no progress ("" when there is)
  std::optional<Grade> grade;  ///< with class grade's results (read_grades): the grade counted
  std::string grade_problem;   ///< why no grade is counted ("" when one is, or without results)
};

/// A file someone else wrote, read without trusting it: only a regular file (not a link, a
/// named pipe, a device, a socket or a folder: that is the problem, and it is never opened
/// to find out, or opened O_NOFOLLOW | O_NONBLOCK and checked again), at most `max_bytes`
/// (a larger file is a problem, never read whole).
struct UntrustedFile {
  std::optional<std::string> text;  ///< nullopt: not read
  bool missing = false;             ///< there is no such file
  std::string problem;              ///< why not: "is a named pipe, not a regular file", …
};
UntrustedFile read_untrusted_file(const std::string& path, std::size_t max_bytes);

/// Reads DIR/.gpulab-progress (read_untrusted_file, kMaxProgressBytes); never throws: a
/// missing folder or file, or one that is not a regular file or too large, is its `problem`.
/// `name` is the student's name (student_names; "": grading::student_name of `dir`).
StudentTree read_student(const std::string& dir, const std::string& name = "");

/// read_student for each folder, in order, named as class grade names them
/// (grading::student_names: "alice", "alice-2"; safe whatever the folder is called).
std::vector<StudentTree> read_students(const std::vector<std::string>& dirs);

/// class.json's text as class grade writes it (grading::class_summary): each student's
/// grade by name; nullopt, and `why`, when it is not that. Untrusted text
/// (tests/fuzz/class_grades_fuzz.cpp).
std::optional<std::map<std::string, Grade>> parse_class_summary(const std::string& text, std::string& why);

/// A student's grading.json's text (grading::student_grading_json) for student `name`;
/// nullopt, and `why`, when it is not that. Untrusted text, as above.
std::optional<Grade> parse_student_grading(const std::string& text, const std::string& name, std::string& why);

/// What read_grades found of the class as a whole.
struct GradesRead {
  std::string problem;                 ///< why class.json was not read ("": it was); then no grade counts
  std::vector<std::string> not_given;  ///< students class.json grades that are not among the folders
};

/// class grade's results (`class report --grades DIR`): DIR/class.json, then each student's
/// DIR/<name>/grading.json, both read as read_untrusted_file reads (kMaxGradesBytes). A
/// student's grade counts when class.json lists them, their grading.json reads, agrees
/// with class.json and holds a result (graded or over_limit); else `grade_problem` says why.
GradesRead read_grades(const std::string& dir, std::vector<StudentTree>& students);

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
/// `truths`: by lesson id; a lesson without one has no prediction truth. `grades`: class
/// grade's results (read_grades), whose passes then count instead of the self-reported ones
/// of the progress files, and whose lessons are listed too; nullptr: self-reported. Pure: no I/O.
view::ClassReport tally(const Manifest& manifest, const std::vector<StudentTree>& students,
                        const std::map<std::string, LessonTruth>& truths, bool truth_run, const std::string& profile,
                        const GradesRead* grades = nullptr);

/// What `gpulab class report` asks for.
struct ReportRequest {
  std::vector<std::string> dirs;  ///< the students' trees
  std::string grades_dir;         ///< class grade's --out: who passed comes from there ("": the progress files)
  bool no_truth = false;          ///< no lesson run: the explain questions' truth only
  double timeout_s = 120;         ///< per lesson's run
  std::string profile;            ///< the software profile's name, for the report
};

/// The class report from start to end: the students' trees read (`students_given`: how many
/// were named), their grades (throws Failure(kUsage) for a --grades that is no folder), the
/// exercises of the lessons they started built and run on the workspace's build (unless
/// no_truth; a line per lesson to `log`), and tallied.
view::ClassReport make_report(const Workspace& workspace, const ReportRequest& request, std::ostream& log,
                              std::size_t& students_given);

/// Writes the report as JSON to `json_file` and as a page to `html_file`, those named, and
/// says so on `out` ("wrote FILE" lines, after a blank line); then the last line: how many
/// of the `students_given` were read, and the problems. Throws Failure(kUsage) for a file it
/// cannot write.
void write_report(const view::ClassReport& report, const std::string& json_file, const std::string& html_file,
                  std::size_t students_given, std::ostream& out);

}  // namespace gpulab::classroom
