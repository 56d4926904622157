// What check all --root refuses: links in a student's lessons/, and compiles that read files
// from outside the student's tree and the grader's include folders (tree_guard.h).
#include "grading/tree_guard.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "proc/process.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

// `path` is `folder` or below it (both real, normalized paths).
bool within(const std::string& path, const std::string& folder) {
  if (folder.empty()) return false;
  if (path == folder) return true;
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

// The real path (links resolved); nothing when it cannot be resolved.
std::optional<std::string> real_path(const fs::path& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  if (error) return std::nullopt;
  return real.string();
}

std::string relative_to(const std::string& path, const std::string& root) {
  return within(path, root) && path.size() > root.size() ? path.substr(root.size() + 1) : path;
}

std::vector<std::string> words_of(std::string_view command) {
  std::vector<std::string> words;
  std::istringstream in{std::string(command)};
  for (std::string word; in >> word;) {
    // A word the recipe quoted for /bin/sh ('...'): the grader's own paths.
    if (word.size() >= 2 && word.front() == '\'' && word.back() == '\'') word = word.substr(1, word.size() - 2);
    words.push_back(word);
  }
  return words;
}

constexpr const char* kAdvice = "docs/grading.md: what check all --root refuses";

}  // namespace

namespace {

// The value of the option at `words[at]`: the next word, or, for `-Xclang OPTION -Xclang
// VALUE`, the word after the second -Xclang.
std::string value_after(const std::vector<std::string>& words, std::size_t at) {
  std::size_t next = at + 1;
  if (next < words.size() && words[next] == "-Xclang" && at > 0 && words[at - 1] == "-Xclang") ++next;
  return next < words.size() ? words[next] : std::string();
}

}  // namespace

std::vector<std::string> include_dirs_of(std::string_view compile_command) {
  static const char* const kFolderOptions[] = {"-isystem", "-iquote", "-idirafter", "-I"};
  static const char* const kFileOptions[] = {"-include-pch", "-include"};
  std::vector<std::string> dirs;
  const std::vector<std::string> words = words_of(compile_command);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    for (const char* option : kFolderOptions) {
      const std::string name(option);
      if (word == name) {
        dirs.push_back(value_after(words, i));
        break;
      }
      if (word.rfind(name, 0) == 0 && word.size() > name.size()) {
        dirs.push_back(word.substr(name.size()));
        break;
      }
    }
    for (const char* option : kFileOptions) {
      if (word == option) {
        if (const std::string file = value_after(words, i); !file.empty()) dirs.push_back(fs::path(file).parent_path().string());
        break;
      }
    }
  }
  dirs.erase(std::remove(dirs.begin(), dirs.end(), std::string()), dirs.end());
  return dirs;
}

std::vector<std::string> forced_includes_of(std::string_view compile_command) {
  std::vector<std::string> files;
  const std::vector<std::string> words = words_of(compile_command);
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] == "-include" || words[i] == "-include-pch")
      if (std::string file = value_after(words, i); !file.empty()) files.push_back(std::move(file));
  return files;
}

std::vector<std::string> absolute_includes_in(const std::string& path) {
  std::vector<std::string> files;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line[hash] != '#') continue;
    const auto include = line.find("include", hash);
    const auto open = line.find('"', hash);
    if (include == std::string::npos || open == std::string::npos || open < include) continue;
    const auto close = line.find('"', open + 1);
    if (close == std::string::npos || close == open + 1 || line[open + 1] != '/') continue;
    files.push_back(line.substr(open + 1, close - open - 1));
  }
  return files;
}

std::vector<std::string> system_include_dirs(const std::string& compiler) {
  ProcessOptions options;
  options.argv = {compiler, "-xc++", "-E", "-v", "/dev/null"};
  options.timeout_s = 60;
  ProcessResult result;
  try {
    result = run_process(options);
  } catch (const std::exception&) {
    return {};
  }
  std::vector<std::string> dirs;
  std::istringstream in(result.err);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#include <...> search starts here:", 0) == 0 || line.rfind("#include \"...\" search starts here:", 0) == 0) {
      listing = true;
    } else if (line.rfind("End of search list.", 0) == 0) {
      listing = false;
    } else if (listing && line.size() > 1 && line.front() == ' ') {
      std::string dir = line.substr(1);
      if (const auto note = dir.find(" (framework directory)"); note != std::string::npos) dir.erase(note);
      dirs.push_back(dir);
    }
  }
  return dirs;
}

std::vector<std::string> dependency_inputs(std::string_view depfile) {
  // The target ends at the first colon followed by white space (or the end).
  std::size_t colon = 0;
  for (; colon < depfile.size(); ++colon) {
    if (depfile[colon] == ':' && (colon + 1 == depfile.size() || depfile[colon + 1] == ' ' || depfile[colon + 1] == '\t' ||
                                  depfile[colon + 1] == '\n' || depfile[colon + 1] == '\r' || depfile[colon + 1] == '\\'))
      break;
  }
  std::vector<std::string> inputs;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) inputs.push_back(current);
    current.clear();
  };
  for (std::size_t i = colon + 1; i < depfile.size(); ++i) {
    const char c = depfile[i];
    if (c == '\\' && i + 1 < depfile.size()) {
      const char next = depfile[i + 1];
      if (next == '\n' || next == '\r') {  // a continued line
        flush();
        ++i;
        if (next == '\r' && i + 1 < depfile.size() && depfile[i + 1] == '\n') ++i;
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        current += next;
        ++i;
        continue;
      }
      current += c;
    } else if (c == '$' && i + 1 < depfile.size() && depfile[i + 1] == '$') {
      current += '$';
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      if (c == '\n') {  // a second rule (-MP's empty targets): the first lists every input
        flush();
        break;
      }
    } else {
      current += c;
    }
  }
  flush();
  return inputs;
}

TreeGuard::TreeGuard(std::string root, const std::vector<std::string>& allowed) {
  root_ = real_path(root).value_or(fs::absolute(root).lexically_normal().string());
  lessons_ = (fs::path(root_) / "lessons").string();
  for (const auto& dir : allowed) {
    const auto real = real_path(dir);
    if (!real) continue;
    allowed_.push_back(*real);
    // A folder of links (the build's LibTorch include folder): their targets too.
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(*real, error)) {
      std::error_code link_error;
      if (!entry.is_symlink(link_error)) continue;
      if (const auto target = real_path(entry.path()); target) allowed_.push_back(*target);
    }
  }
  std::sort(allowed_.begin(), allowed_.end());
  allowed_.erase(std::unique(allowed_.begin(), allowed_.end()), allowed_.end());
}

std::optional<std::string> TreeGuard::tree_refusal(const std::vector<std::string>& lesson_dirs) const {
  const fs::path lessons = fs::path(root_) / "lessons";
  std::error_code error;
  if (fs::is_symlink(lessons, error))
    return fmt::format("lessons/ is a symbolic link: refused ({})", kAdvice);
  for (auto it = fs::recursive_directory_iterator(lessons, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    const std::string top = it->path().lexically_relative(lessons).begin()->string();
    if (std::find(lesson_dirs.begin(), lesson_dirs.end(), top) != lesson_dirs.end()) {
      if (it.depth() == 0) it.disable_recursion_pending();  // a lesson's own folder: its lesson's business
      continue;
    }
    std::error_code link_error;
    if (it->is_symlink(link_error))
      return fmt::format("lessons/{} is a symbolic link: refused ({})", it->path().lexically_relative(lessons).string(), kAdvice);
  }
  return std::nullopt;
}

std::optional<std::string> TreeGuard::links_refusal(const std::string& dir) const {
  const fs::path folder = fs::path(root_) / "lessons" / dir;
  std::error_code error;
  if (fs::is_symlink(folder, error)) return fmt::format("lessons/{} is a symbolic link: refused ({})", dir, kAdvice);
  for (auto it = fs::recursive_directory_iterator(folder, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    std::error_code link_error;
    if (it->is_symlink(link_error))
      return fmt::format("lessons/{}/{} is a symbolic link: refused ({})", dir, it->path().lexically_relative(folder).string(),
                         kAdvice);
  }
  return std::nullopt;
}

std::optional<std::string> TreeGuard::reads_refusal(const std::vector<std::string>& inputs, const std::string& working_dir) const {
  std::vector<std::string> outside;
  for (const auto& input : inputs) {
    const fs::path path = fs::path(input).is_absolute() ? fs::path(input) : fs::path(working_dir) / input;
    const auto real = real_path(path);
    if (real && within(*real, lessons_)) continue;
    if (real && std::any_of(allowed_.begin(), allowed_.end(), [&](const std::string& dir) { return within(*real, dir); }))
      continue;
    const std::string shown = real ? relative_to(*real, root_) : path.lexically_normal().string();
    if (std::find(outside.begin(), outside.end(), shown) == outside.end()) outside.push_back(shown);
  }
  if (outside.empty()) return std::nullopt;
  std::string list;
  for (std::size_t i = 0; i < outside.size() && i < 3; ++i) list += (i ? ", " : "") + outside[i];
  if (outside.size() > 3) list += fmt::format(" and {} more", outside.size() - 3);
  return fmt::format("its build read {}, from outside the student's lessons/ and the grader's include folders: refused ({})",
                     list, kAdvice);
}

}  // namespace gpulab::grading
