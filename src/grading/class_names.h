// How a class's students are named, by `class grade` (its output folders) and `class report`
// (its lines, and to find each student's grades): one function, so one student has one name
// in both, and a name safe as a folder name and on a terminal whatever the student's folder
// is called (escape codes, invalid UTF-8, "..", "class.json").
#pragma once

#include <string>
#include <vector>

namespace gpulab::grading {

/// The class summary `class grade` writes beside the students' folders: no student is named so.
inline constexpr const char* kClassSummary = "class.json";

/// A student's name from the path of their tree: the folder's own name ("alice" for
/// "class/alice/"; for "." or ".." the folder they name), each character but ASCII letters,
/// digits, '-', '_' and '.' (a non-ASCII letter, a control character, each byte that is not
/// UTF-8) replaced by '_', a leading '.' too (no hidden folder, never "." or ".."), at most
/// 64 characters; "student" when nothing is left.
std::string student_name(const std::string& tree);

/// Names unique within a class, in order: "alice", "alice-2", …; a suffix never takes the
/// name of another student's folder (a real "alice-2" keeps its own).
std::vector<std::string> unique_names(const std::vector<std::string>& names);

/// The class's names, in order: student_name of each tree, made unique, never kClassSummary
/// (a folder called "class.json" is named as a second one of that name, "class.json-2").
std::vector<std::string> student_names(const std::vector<std::string>& trees);

}  // namespace gpulab::grading
