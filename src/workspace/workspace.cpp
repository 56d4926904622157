#include "workspace/workspace.h"

#include <fstream>
#include <ostream>
#include <sstream>

#include "proc/self.h"
#include "report/outcome.h"

namespace gpulab {
namespace {

std::string text_of(const std::string& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Workspace::Workspace() : root_(source_root()) {}

Workspace::Workspace(Manifest manifest, Progress progress, std::optional<ClassSettings> class_settings,
                     std::string progress_file)
    : root_(manifest.root), manifest_(std::move(manifest)), class_settings_(std::move(class_settings)),
      progress_file_(std::move(progress_file)), progress_(std::move(progress)) {}

bool Workspace::student_edition() const { return is_student_edition(root_); }

void Workspace::require_solutions(const std::string& what) const { gpulab::require_solutions(manifest(), what); }

const Manifest& Workspace::manifest() const {
  if (!manifest_) manifest_ = load_manifest();
  return *manifest_;
}

const std::optional<ClassSettings>& Workspace::class_settings() const {
  if (!class_settings_) class_settings_ = load_class_settings(manifest());
  return *class_settings_;
}

const std::string& Workspace::progress_file() const {
  if (!progress_file_) progress_file_ = progress_path(manifest().root);
  return *progress_file_;
}

const Progress& Workspace::progress() const {
  if (!progress_) progress_ = load_progress(progress_file());
  return *progress_;
}

void Workspace::save_progress(const Progress& progress) {
  gpulab::save_progress(progress_file(), progress);
  progress_ = progress;
}

const grading::Programs& Workspace::programs() const {
  if (!programs_) programs_ = grading::this_build(manifest());
  return *programs_;
}

std::string Workspace::build_dir() const { return executable_dir() + "/.."; }

grading::Builder& Workspace::builder() const {
  if (!builder_) builder_ = grading::make_builder(build_dir(), programs().strip);
  return *builder_;
}

std::map<std::string, std::string> Workspace::exercise_goals() const {
  std::map<std::string, std::string> goals;
  for (const auto& lesson : manifest().lessons)
    if (lesson.goal.empty()) goals[lesson.id] = goal_of_text(text_of(manifest().root + "/" + lesson.source_file()));
  return goals;
}

std::string Workspace::explanation(const LessonEntry& lesson) const {
  const std::string file = lesson.explanation_file();
  std::ifstream in(manifest().root + "/" + file);
  if (!in) throw Failure(Outcome::kUsage, file + " is missing: this tree has no explanation for lesson " + lesson.id);
  std::ostringstream text;
  text << in.rdbuf();
  return explanation_text(lesson, text.str());
}

std::vector<std::string> Workspace::targets_ahead(std::size_t first) const {
  return gpulab::targets_ahead(manifest(), first, !student_edition());
}

void Workspace::build_for_command(const std::vector<std::string>& targets, std::ostream& err) const {
  const grading::BuildResult built = builder().build(targets);
  if (built.ok) return;
  err << build_failure_text(built, targets) << std::flush;
  throw Ended{Outcome::kBuildFailed};
}

}  // namespace gpulab
