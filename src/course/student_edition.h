// The student edition (docs/student-edition.md): a copy of the tutorial to hand out to a
// class, without the solutions and the known wrong answers (which carry solution lines), and
// with a class file, student-edition.conf, that says it is the student edition and may cap
// the hints.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "course/manifest.h"

namespace gpulab {

/// The class file at the root of a student edition: its presence makes a tree one.
inline constexpr const char* kClassFileName = "student-edition.conf";

/// How many of a lesson's hints the class may see.
struct HintLimit {
  enum class Kind { kAll, kAllButLast, kNumber };
  Kind kind = Kind::kAll;
  int number = 0;  ///< kNumber: at most this many (0: none)

  /// Of `count` hints, how many may be shown.
  int allowed(int count) const;
  /// As written in the class file: "all", "all-but-last", "2", "none".
  std::string text() const;
};

/// A class file, as read: the overall hint cap and the lessons' own.
struct ClassSettings {
  std::string path;                  ///< the file it was read from (in messages)
  std::optional<HintLimit> hints;    ///< `hints = ...`; none: every hint
  std::map<std::string, HintLimit> lesson_hints;  ///< `hints.NN = ...`, by lesson id as written
  std::map<std::string, int> lesson_lines;        ///< the line each `hints.NN` is on

  /// Of lesson `id`'s `count` hints, how many may be shown.
  int hints_allowed(const std::string& id, int count) const;
};

/// A class file that cannot be read: the message starts with "FILE:LINE: ".
class ClassFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads a class file's text (`path` names it in errors). Lines are `key = value`, blank,
/// or comments (`#` to the end of the line). Keys: `edition` (must be `student`), `hints`,
/// `hints.NN`; values of hints: `all`, `all-but-last`, `none` or a number from 0. Throws
/// ClassFileError naming the line of the first problem.
ClassSettings parse_class_file(std::string_view text, const std::string& path);

/// Throws ClassFileError (FILE:LINE) for a `hints.NN` that names no lesson of `manifest`;
/// writes each lesson's id as the manifest has it ("4" becomes "04").
void resolve_lessons(ClassSettings& settings, const Manifest& manifest);

/// The tree `root` is a student edition: it has a class file.
bool is_student_edition(const std::string& root);

/// The class settings of the tree `manifest` is in: none in the instructor's tree (no
/// class file). Throws Failure(kUsage) with ClassFileError's message for a bad file.
std::optional<ClassSettings> load_class_settings(const Manifest& manifest);

/// Throws Failure(kUsage) saying that this edition has no solutions when `manifest`'s tree
/// is a student edition; `what` is the option asked for, e.g. "--solution".
void require_solutions(const Manifest& manifest, const std::string& what);

/// The class file an export writes: says what the tree is, and how to cap the hints.
std::string class_file_text();

/// A README for the student edition: `readme` without what names the solutions
/// (`--solution` options and examples), under a banner saying what this edition is.
std::string student_readme(std::string_view readme);

/// What export_student_edition wrote.
struct ExportSummary {
  std::size_t files = 0;                 ///< files written, the class file included
  std::vector<std::string> left_out;     ///< the source's folders and files left out, e.g. "solutions/"
};

/// Writes the student edition of the tree at `source_root` into `dir`: the files git
/// lists there (tracked, and untracked unless ignored; without git, the tree less its build
/// folders), less solutions/, tests/mutations/, tests/variants/, .ci/ and the instructor-only
/// pages (docs/instructors.md, docs/lab-plans.md), with the README rewritten and a class file added. `dir` must be empty or absent, and outside `source_root`; the source
/// is never changed. Throws Failure(kUsage) with the reason when it cannot.
ExportSummary export_student_edition(const std::string& source_root, const std::string& dir);

/// The source tree gpulab was built from.
std::string source_root();

}  // namespace gpulab
