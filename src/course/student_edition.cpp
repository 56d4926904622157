// The student edition: the class file's reader, and the export (docs/student-edition.md).
#include "course/student_edition.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "proc/process.h"
#include "report/outcome.h"

namespace gpulab {
namespace fs = std::filesystem;
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\f\v");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\f\v");
  return text.substr(first, last - first + 1);
}

// A value quoted in a message: at most 40 characters, unprintable bytes as '?'.
std::string shown(std::string_view text) {
  std::string printable;
  for (const char c : text.substr(0, 40)) printable += (c >= ' ' && c < 127) ? c : '?';
  if (text.size() > 40) printable += "...";
  return "'" + printable + "'";
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

HintLimit parse_limit(std::string_view value, const std::string& where) {
  if (value == "all") return {HintLimit::Kind::kAll, 0};
  if (value == "all-but-last") return {HintLimit::Kind::kAllButLast, 0};
  if (value == "none") return {HintLimit::Kind::kNumber, 0};
  if (all_digits(value) && value.size() <= 3) return {HintLimit::Kind::kNumber, std::stoi(std::string(value))};
  throw ClassFileError(fmt::format("{}: a hint cap is all, all-but-last, none or a number of hints (0 to 999), got {}", where,
                                   shown(value)));
}

std::string edition_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `inner` is `outer` or a path below it (both absolute and normalized).
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// The source's files, relative to it: what git tracks there, or, without git, every file
// but those of the build folders and the learner's own state.
std::vector<std::string> source_files(const fs::path& root) {
  ProcessOptions git;
  git.argv = {"git", "-C", root.string(), "ls-files", "-z", "--cached"};
  git.timeout_s = 60;
  try {
    const ProcessResult listed = run_process(git);
    if (listed.ok()) {
      std::vector<std::string> files;
      std::string_view rest = listed.out;
      while (!rest.empty()) {
        const auto end = rest.find('\0');
        files.emplace_back(rest.substr(0, end));
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
      }
      // A file in the middle of a merge is listed once per side: once is enough.
      std::sort(files.begin(), files.end());
      files.erase(std::unique(files.begin(), files.end()), files.end());
      return files;
    }
  } catch (const std::exception&) {
    // no git: the walk below
  }
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    const bool top = it.depth() == 0;
    if (it->is_directory() && !it->is_symlink()) {
      const bool skip = name == ".git" || fs::exists(it->path() / "CMakeCache.txt") ||
                        (top && (name.rfind("build", 0) == 0 || name == "out" || name == ".cache" || name == ".whl" ||
                                 name == ".gl" || name == ".gpulab-backups" || name == ".state"));
      if (skip) it.disable_recursion_pending();
      continue;
    }
    if (top && (name == ".gpulab-progress" || name == "compile_commands.json")) continue;
    files.push_back(fs::relative(it->path(), root).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Left out of the edition: the solutions, and what carries their lines or needs them; and
// the instructor-only pages (the site's answer key is generated: docs/site/generate_pages.py
// writes none in an edition, docs/site/markdown_filter.py unlinks all three).
constexpr const char* kLeftOut[] = {"solutions/", "tests/mutations/", "tests/variants/", ".ci/", "docs/instructors.md",
                                    "docs/lab-plans.md"};

}  // namespace

int HintLimit::allowed(int count) const {
  switch (kind) {
    case Kind::kAll: return count;
    case Kind::kAllButLast: return std::max(count - 1, 0);
    case Kind::kNumber: return std::clamp(number, 0, std::max(count, 0));
  }
  return count;
}

std::string HintLimit::text() const {
  switch (kind) {
    case Kind::kAll: return "all";
    case Kind::kAllButLast: return "all-but-last";
    case Kind::kNumber: return number == 0 ? "none" : std::to_string(number);
  }
  return "all";
}

int ClassSettings::hints_allowed(const std::string& id, int count) const {
  if (const auto found = lesson_hints.find(id); found != lesson_hints.end()) return found->second.allowed(count);
  return hints ? hints->allowed(count) : count;
}

ClassSettings parse_class_file(std::string_view text, const std::string& path) {
  ClassSettings settings;
  settings.path = path;
  int line_number = 0;
  std::map<std::string, int> seen;  // key -> its line
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const std::string where = fmt::format("{}:{}", path, line_number);
    if (const auto comment = line.find('#'); comment != std::string_view::npos) line = line.substr(0, comment);
    line = trim(line);
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos)
      throw ClassFileError(fmt::format("{}: expected a setting such as hints = all-but-last, got {}", where, shown(line)));
    const std::string key(trim(line.substr(0, equals)));
    const std::string_view value = trim(line.substr(equals + 1));
    if (const auto before = seen.find(key); before != seen.end())
      throw ClassFileError(fmt::format("{}: {} is set twice (first on line {})", where, shown(key), before->second));
    seen[key] = line_number;
    if (key == "edition") {
      if (value != "student")
        throw ClassFileError(fmt::format("{}: edition must be student (this file marks the student edition), got {}", where,
                                         shown(value)));
    } else if (key == "hints") {
      settings.hints = parse_limit(value, where);
    } else if (key.rfind("hints.", 0) == 0) {
      const std::string id = key.substr(6);
      if (!all_digits(id) || id.size() > 3)
        throw ClassFileError(fmt::format("{}: hints.NN takes a lesson number, e.g. hints.04, got {}", where, shown(key)));
      settings.lesson_hints[id] = parse_limit(value, where);
      settings.lesson_lines[id] = line_number;
    } else {
      throw ClassFileError(fmt::format("{}: unknown setting {}; the settings are edition, hints and hints.NN", where,
                                       shown(key)));
    }
  }
  return settings;
}

void resolve_lessons(ClassSettings& settings, const Manifest& manifest) {
  std::map<std::string, HintLimit> resolved;
  std::map<std::string, int> lines;
  for (const auto& entry : settings.lesson_hints) {
    const std::string& id = entry.first;
    const HintLimit& limit = entry.second;
    const int line = settings.lesson_lines[id];
    const auto lesson = std::find_if(manifest.lessons.begin(), manifest.lessons.end(), [&](const LessonEntry& l) {
      return all_digits(l.id) && l.id.size() <= 3 && std::stoi(l.id) == std::stoi(id);
    });
    if (lesson == manifest.lessons.end())
      throw ClassFileError(fmt::format("{}:{}: hints.{} names no lesson; the lessons are {} to {}", settings.path, line, id,
                                       manifest.lessons.empty() ? "none" : manifest.lessons.front().id,
                                       manifest.lessons.empty() ? "none" : manifest.lessons.back().id));
    if (const auto before = lines.find(lesson->id); before != lines.end())
      throw ClassFileError(fmt::format("{}:{}: lesson {}'s hints are capped twice (first on line {})", settings.path,
                                       std::max(line, before->second), lesson->id, std::min(line, before->second)));
    resolved[lesson->id] = limit;
    lines[lesson->id] = line;
  }
  settings.lesson_hints = std::move(resolved);
  settings.lesson_lines = std::move(lines);
}

bool is_student_edition(const std::string& root) {
  std::error_code error;
  return fs::exists(fs::path(root) / kClassFileName, error);
}

std::optional<ClassSettings> load_class_settings(const Manifest& manifest) {
  if (!is_student_edition(manifest.root)) return std::nullopt;
  try {
    ClassSettings settings = parse_class_file(edition_file_text((fs::path(manifest.root) / kClassFileName).string()), kClassFileName);
    resolve_lessons(settings, manifest);
    return settings;
  } catch (const ClassFileError& e) {
    throw Failure(Outcome::kUsage, fmt::format("{} (the class file your instructor wrote: fix it, or ask them)", e.what()));
  }
}

void require_solutions(const Manifest& manifest, const std::string& what) {
  if (!is_student_edition(manifest.root)) return;
  throw Failure(Outcome::kUsage,
                fmt::format("{}: this is the student edition of gpulab ({}), which has no solutions. "
                            "Check your own exercise with ./gpulab check NN, and ask for a hint with ./gpulab hint NN",
                            what, kClassFileName));
}

std::string class_file_text() {
  return "# gpulab, student edition: this tree has no solutions (docs/student-edition.md).\n"
         "# This file marks it as such; an instructor may cap the hints here.\n"
         "edition = student\n"
         "\n"
         "# hints = all | all-but-last | none | N   (every lesson; default: all)\n"
         "# hints.NN = ...                         (lesson NN only, e.g. hints.04 = 1)\n"
         "hints = all\n";
}

std::string student_readme(std::string_view readme) {
  std::string out =
      "> **Student edition.** This copy of gpulab has no solutions: `./gpulab check NN` tells you\n"
      "> what is still wrong, `./gpulab hint NN` gives hints (your instructor may cap them in\n"
      "> `student-edition.conf`). Start with `./gpulab start`.\n\n";
  while (!readme.empty()) {
    const auto end = readme.find('\n');
    std::string line(readme.substr(0, end));
    readme = end == std::string_view::npos ? std::string_view{} : readme.substr(end + 1);
    for (const std::string_view token : {std::string_view("[--solution] "), std::string_view("`--solution`, ")}) {
      for (auto at = line.find(token); at != std::string::npos; at = line.find(token)) line.erase(at, token.size());
    }
    if (line.find("--solution") != std::string::npos) continue;  // an example that runs the solution
    out += line;
    if (end != std::string_view::npos) out += '\n';
  }
  return out;
}

ExportSummary export_student_edition(const std::string& source_root, const std::string& dir) {
  if (dir.empty()) throw Failure(Outcome::kUsage, "export --student needs a folder to write to");
  std::error_code error;
  const fs::path source = fs::weakly_canonical(fs::absolute(source_root), error);
  if (error || !fs::is_directory(source))
    throw Failure(Outcome::kUsage, fmt::format("cannot read the source tree {}", source_root));
  const fs::path target = fs::weakly_canonical(fs::absolute(dir), error);
  if (error) throw Failure(Outcome::kUsage, fmt::format("cannot use {}: {}", dir, error.message()));
  if (within(target, source))
    throw Failure(Outcome::kUsage, fmt::format("{} is inside the tree it would be exported from ({}): choose a folder outside it",
                                               dir, source.string()));
  if (fs::exists(target)) {
    if (!fs::is_directory(target)) throw Failure(Outcome::kUsage, fmt::format("{} exists and is not a folder", dir));
    if (!fs::is_empty(target))
      throw Failure(Outcome::kUsage,
                    fmt::format("{} is not empty: the student edition is written only into an empty or new folder", dir));
  }
  fs::create_directories(target, error);
  if (error) throw Failure(Outcome::kUsage, fmt::format("cannot create {}: {}", dir, error.message()));

  ExportSummary summary;
  for (const std::string& file : source_files(source)) {
    const char* const* left = std::find_if(std::begin(kLeftOut), std::end(kLeftOut),
                                           [&](const char* prefix) { return file.rfind(prefix, 0) == 0; });
    if (left != std::end(kLeftOut)) {
      if (std::find(summary.left_out.begin(), summary.left_out.end(), *left) == summary.left_out.end())
        summary.left_out.emplace_back(*left);
      continue;
    }
    if (file == kClassFileName) continue;  // written below
    if (file == ".gpulab-progress") continue;  // the instructor's own progress, even when committed
    const fs::path from = source / file;
    const fs::path to = target / file;
    const fs::file_status status = fs::symlink_status(from, error);
    if (error || !(fs::is_regular_file(status) || fs::is_symlink(status))) continue;  // listed but deleted
    if (file != "classroom/autograding.yml") fs::create_directories(to.parent_path(), error);
    if (fs::is_symlink(status)) {
      fs::copy_symlink(from, to, error);
    } else if (file == "README.md") {
      std::ofstream(to, std::ios::binary) << student_readme(edition_file_text(from.string()));
    } else if (file == "classroom/autograding.yml") {
      // Where GitHub Classroom runs it: the edition is the assignment's template repository.
      const fs::path workflow = target / ".github" / "workflows" / "classroom.yml";
      fs::create_directories(workflow.parent_path(), error);
      if (!error) fs::copy_file(from, workflow, error);
    } else {
      fs::copy_file(from, to, error);
      if (!error) fs::permissions(to, status.permissions(), error);
    }
    if (error) throw Failure(Outcome::kUsage, fmt::format("cannot write {}: {}", to.string(), error.message()));
    ++summary.files;
  }
  std::ofstream class_file(target / kClassFileName, std::ios::binary);
  class_file << class_file_text();
  if (!class_file.flush()) throw Failure(Outcome::kUsage, fmt::format("cannot write {}", (target / kClassFileName).string()));
  ++summary.files;
  return summary;
}

std::string source_root() { return GPULAB_SOURCE_DIR; }

}  // namespace gpulab
