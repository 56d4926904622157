// Reading a lesson program's commands out of Ninja, and running them on another tree.
#include "grading/recipes.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "proc/confine.h"
#include "proc/process.h"
#include "report/message_text.h"
#include "report/outcome.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

constexpr double kStepTimeout = 300;  // one compile or link

std::string ninja_command(const std::string& build, const std::string& output) {
  ProcessOptions options;
  options.argv = {"ninja", "-C", build, "-t", "commands", "-s", output};
  options.timeout_s = 60;
  const ProcessResult result = run_process(options);
  std::string command = result.out;
  while (!command.empty() && (command.back() == '\n' || command.back() == '\r')) command.pop_back();
  if (!result.ok() || command.empty() || command.find('\n') != std::string::npos)
    throw Failure(Outcome::kBuildFailed, fmt::format("cannot read how {} builds {}: {}", build, output, result.err));
  return command;
}

// Every occurrence of `word` in `text` becomes `by`; at least one must be there.
std::string replaced(std::string text, const std::string& word, const std::string& by, const std::string& what) {
  std::size_t at = text.find(word);
  if (at == std::string::npos) throw Failure(Outcome::kBuildFailed, fmt::format("{}: '{}' is not in its command", what, word));
  for (; at != std::string::npos; at = text.find(word, at + by.size())) text.replace(at, word.size(), by);
  return text;
}

// A path as one word of /bin/sh, whatever it holds ("alice's tree").
std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The word of `command` that is the object file of `target` (CMakeFiles/<target>.dir/….o).
std::string object_in(const std::string& command, const std::string& target) {
  std::istringstream words(command);
  for (std::string word; words >> word;)
    if (word.find("CMakeFiles/" + target + ".dir/") != std::string::npos && word.size() > 2 &&
        word.compare(word.size() - 2, 2, ".o") == 0)
      return word;
  throw Failure(Outcome::kBuildFailed, fmt::format("the link of {} names no object file", target));
}

}  // namespace

std::map<std::string, Recipe> read_recipes(const std::string& build, const std::vector<LessonEntry>& lessons) {
  std::map<std::string, Recipe> recipes;
  for (const auto& lesson : lessons) {
    const std::string target = lesson.program_target();
    const std::string link = ninja_command(build, "bin/" + target);
    const std::string object = object_in(link, target);
    const std::string compile = ninja_command(build, object);
    Recipe recipe;
    recipe.directory = build;
    // The dependency file is the build folder's business, not the box's.
    std::string open = compile;
    const std::string depfile = fmt::format(" -MD -MT {0} -MF {0}.d", object);
    if (open.find(depfile) != std::string::npos) open.replace(open.find(depfile), depfile.size(), "");
    open = replaced(open, "-o " + object, "-o {object}", target);
    const auto source = open.rfind(" -c ");
    if (source == std::string::npos) throw Failure(Outcome::kBuildFailed, target + ": its compile command has no -c");
    // A student's warning is not a failed build, whatever this build's -Werror.
    recipe.compile = open.substr(0, source) + " -Wno-error -c {source}";
    recipe.link = replaced(replaced(link, object, "{object}", target), "-o bin/" + target, "-o {program}", target);
    recipes[lesson.id] = recipe;
  }
  return recipes;
}

nlohmann::json recipes_json(const std::map<std::string, Recipe>& recipes) {
  nlohmann::json document = nlohmann::json::object();
  for (const auto& [id, recipe] : recipes)
    document[id] = {{"compile", recipe.compile}, {"link", recipe.link}, {"directory", recipe.directory}};
  return document;
}

std::map<std::string, Recipe> parse_recipes(const std::string& text) {
  std::map<std::string, Recipe> recipes;
  try {
    const auto document = nlohmann::json::parse(text);
    if (!document.is_object()) throw Failure(Outcome::kUsage, "not a recipes document: not a JSON object");
    for (const auto& [id, entry] : document.items())
      recipes[id] = {entry.at("compile").get<std::string>(), entry.at("link").get<std::string>(),
                     entry.at("directory").get<std::string>()};
  } catch (const nlohmann::json::exception& e) {
    throw Failure(Outcome::kUsage, std::string("not a recipes document: ") + e.what());
  }
  return recipes;
}

namespace {

// One lesson's compile and link; "" when it built, else why not.
std::string build_lesson(const RecipeBuild& build, const LessonEntry& lesson) {
  const std::string source = build.root + "/" + lesson.source_file();
  if (!fs::is_regular_file(source)) return lesson.source_file() + " is missing\n";
  const auto recipe = build.recipes.find(lesson.id);
  if (recipe == build.recipes.end()) return "this build has no recipe for lesson " + lesson.id + "\n";
  const std::string object = fmt::format("{}/lesson-{}.o", build.objects, lesson.id);
  const std::string program = fmt::format("{}/lesson-{}", build.bin, lesson.id);
  std::string compile = recipe->second.compile;
  if (build.depfiles) {  // the files the compiler read, for check all --root's tree_guard.h
    std::error_code stale;
    fs::remove(dependency_file(build.objects, lesson.id), stale);
    const auto source_at = compile.rfind(" -c {source}");
    if (source_at != std::string::npos)
      compile.insert(source_at, " -MD -MF " + shell_quoted(dependency_file(build.objects, lesson.id)));
  }
  for (std::string step : {compile, recipe->second.link}) {
    for (const auto& [word, value] : {std::pair<std::string, std::string>{"{source}", shell_quoted(source)},
                                      {"{object}", shell_quoted(object)}, {"{program}", shell_quoted(program)}})
      for (auto at = step.find(word); at != std::string::npos; at = step.find(word, at + value.size()))
        step.replace(at, word.size(), value);
    ProcessOptions options;
    // In a box the compiler is the student's too (`.incbin` reads any file): confined, it
    // sees no more than their program will, and writes only the objects and programs.
    options.argv = confined({"/bin/sh", "-c", step}, {build.bin, build.objects});
    options.working_directory = recipe->second.directory;
    options.timeout_s = kStepTimeout;
    ProcessResult result = run_process(options);
    program_end_of_confined(result);
    if (!result.ok()) {
      std::string messages = without_prefixes(result.out + result.err, build.strip);
      if (result.timed_out) messages += "the build " + result.outcome(options.timeout_s) + "\n";
      // A failure must say something: an empty message reads as "built".
      return messages.empty() ? "the build " + result.outcome(options.timeout_s) + "\n" : messages;
    }
  }
  return "";
}

}  // namespace

std::string dependency_file(const std::string& objects, const std::string& id) {
  return fmt::format("{}/lesson-{}.o.d", objects, id);
}

std::map<std::string, std::string> build_from_recipes(RecipeBuild build) {
  fs::create_directories(build.objects);
  std::vector<std::string> why(build.lessons.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < build.lessons.size(); i = next++) {
      try {
        why[i] = build_lesson(build, build.lessons[i]);
      } catch (const std::exception& e) {  // a compiler that cannot be started fails its lesson only
        why[i] = std::string(e.what()) + "\n";
      }
    }
  };
  std::vector<std::thread> workers;
  const std::size_t count = std::clamp<std::size_t>(build.jobs, 1, std::max<std::size_t>(1, build.lessons.size()));
  for (std::size_t j = 1; j < count; ++j) workers.emplace_back(work);
  work();
  for (auto& worker : workers) worker.join();
  std::map<std::string, std::string> failed;
  for (std::size_t i = 0; i < build.lessons.size(); ++i)
    if (!why[i].empty()) failed[build.lessons[i].id] = why[i];
  return failed;
}

}  // namespace gpulab::grading
