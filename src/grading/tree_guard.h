// What `gpulab check all --root DIR` refuses to grade: a student's lesson that is, or reads,
// a file from outside the student's tree. Before a build, no symbolic link in the tree's
// lessons/; after it, every file the compiler read (its dependency file, -MD -MF) is in the
// student's lessons/ or in a folder the grader's own command reads headers from (its -I,
// -isystem, precompiled header, the compiler's system folders). Not a sandbox: the lesson
// programs still run with the grader's rights (docs/grading.md); `gpulab class grade` boxes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::grading {

/// The folders a compile command reads headers from, as written in it: its -I, -isystem,
/// -iquote and -idirafter folders, and the folders of the files it -include's (a
/// precompiled header, also through -Xclang). The compiler's own folders are not in it.
std::vector<std::string> include_dirs_of(std::string_view compile_command);

/// The files a compile command -include's (-include, -include-pch, also through -Xclang): a
/// precompiled header and the header CMake wraps it in.
std::vector<std::string> forced_includes_of(std::string_view compile_command);

/// The files the header `path` includes by absolute path (`#include "/…"`), as CMake's
/// precompiled header wrapper names the project's own header; none when it cannot be read.
std::vector<std::string> absolute_includes_in(const std::string& path);

/// The compiler's system include folders (`COMPILER -xc++ -E -v /dev/null`): what it reads
/// <vector> and <cstdlib> from. Empty when the compiler cannot be asked.
std::vector<std::string> system_include_dirs(const std::string& compiler);

/// The files a Make-style dependency file (-MD -MF) lists after its target's colon, as
/// written: escaped spaces, `$$` and line continuations undone.
std::vector<std::string> dependency_inputs(std::string_view depfile);

class TreeGuard {
 public:
  /// `root`: the student's tree; `allowed`: the folders the grader's command may read from
  /// (include_dirs_of and system_include_dirs). Each is taken with its real path, and a
  /// folder of links (a LibTorch include folder made of links) with its links' targets.
  TreeGuard(std::string root, const std::vector<std::string>& allowed);

  /// Why no lesson of the tree may be graded: lessons/ is a link, or holds one outside any
  /// lesson's folder (`lesson_dirs`: the lessons' folder names). Nothing: none.
  std::optional<std::string> tree_refusal(const std::vector<std::string>& lesson_dirs) const;

  /// Why lesson folder `dir` (lessons/<dir>) may not be graded: it, or something in it, is
  /// a symbolic link. Nothing: none.
  std::optional<std::string> links_refusal(const std::string& dir) const;

  /// Why a lesson whose compile read `inputs` (as dependency_inputs gives them; a relative
  /// one is relative to `working_dir`) may not be graded: the files outside the student's
  /// lessons/ and the allowed folders, by their real paths. Nothing: none.
  std::optional<std::string> reads_refusal(const std::vector<std::string>& inputs, const std::string& working_dir) const;

  const std::string& root() const { return root_; }
  const std::vector<std::string>& allowed() const { return allowed_; }

 private:
  std::string root_;                  ///< real path
  std::string lessons_;               ///< root_/lessons, real path
  std::vector<std::string> allowed_;  ///< real paths
};

}  // namespace gpulab::grading
