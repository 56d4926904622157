// The learner's workspace: the tree, its manifest, the learner's progress, the class file
// and edition, this build's programs and its builder. Made once (cli/main.cpp) and shared
// by every command and the tutor; each part is read on first use, so a command that needs
// no manifest (devices, launch) reads none, and none is read twice. The learner's rules
// (workspace/rules.h) are answered here from the parts.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "course/manifest.h"
#include "course/student_edition.h"
#include "grading/runner.h"
#include "workspace/progress.h"
#include "workspace/rules.h"

namespace gpulab {

class Workspace {
 public:
  /// The source tree gpulab was built from, with this build's programs (beside the running
  /// gpulab): nothing is read yet.
  Workspace();
  /// A workspace of given parts (tests): `progress_file` is where save_progress writes.
  Workspace(Manifest manifest, Progress progress, std::optional<ClassSettings> class_settings, std::string progress_file);
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The tree: the source tree gpulab was built from.
  const std::string& root() const { return root_; }
  /// The tree is a student edition (it has a class file; docs/student-edition.md).
  bool student_edition() const;
  /// Throws Failure(kUsage) in a student edition, which has no solutions (`what`: the option).
  void require_solutions(const std::string& what) const;

  const Manifest& manifest() const;
  /// The lesson "4", "04" or "04-slug" names; throws ManifestError listing the lessons.
  const LessonEntry& lesson(const std::string& id) const { return manifest().find(id); }
  /// The class file's settings (a student edition's hint caps); none in the instructor's tree.
  const std::optional<ClassSettings>& class_settings() const;

  const std::string& progress_file() const;
  const Progress& progress() const;
  /// Writes `progress` to the progress file, and keeps it as this workspace's.
  void save_progress(const Progress& progress);

  /// This build's programs, and the builder of its build folder (ninja on just the targets).
  const grading::Programs& programs() const;
  grading::Builder& builder() const;
  /// The build folder (bin/.. of this build).
  std::string build_dir() const;

  // ---- the learner's rules, on this workspace's parts (workspace/rules.h) -------------------
  int hints_allowed(const LessonEntry& lesson) const { return gpulab::hints_allowed(class_settings(), lesson); }
  HintReply hint(const std::string& lesson_id, int level) const { return hint_reply(class_settings(), lesson(lesson_id), level); }
  bool predicted(const std::string& lesson_id) const { return gpulab::predicted(progress(), lesson_id); }
  /// Goals for lessons whose manifest gives none: their exercise's TODO block.
  std::map<std::string, std::string> exercise_goals() const;
  /// Lesson `id`'s explanation as `gpulab explain` shows it; Failure(kUsage) when the tree has none.
  std::string explanation(const LessonEntry& lesson) const;
  /// What a learner builds after lesson `first`'s program (rules.h's targets_ahead).
  std::vector<std::string> targets_ahead(std::size_t first) const;

  /// Builds `targets` for `run` or `check`; when the learner's file does not compile, says
  /// so on `err` (build_failure_text) and throws Ended{kBuildFailed}.
  void build_for_command(const std::vector<std::string>& targets, std::ostream& err) const;

 private:
  std::string root_;
  mutable std::optional<Manifest> manifest_;
  mutable std::optional<std::optional<ClassSettings>> class_settings_;
  mutable std::optional<std::string> progress_file_;
  mutable std::optional<Progress> progress_;
  mutable std::optional<grading::Programs> programs_;
  mutable std::unique_ptr<grading::Builder> builder_;
};

}  // namespace gpulab
