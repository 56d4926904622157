// class_grade.cpp's parts, exposed for their unit tests (tests/unit/grading/
// class_grade_test.cpp): what a box binds, how a box's result becomes a student's grade,
// and how grade-in-box hands its result over. Nothing else includes this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "grading/box.h"
#include "grading/class_grade.h"
#include "grading/grading.h"

namespace gpulab::grading {

/// What the box sees of this repository (`source`) and build (`build`): the lesson API's
/// headers, the library and its precompiled header, the checks and the CLI, LibTorch (the
/// build cache's LIBTORCH_PREFIX, unless under /usr/), the lessons as shipped, the nodes and
/// the `recipes` file; of bin/, only the CLI and the checks of `lesson_ids`, and their
/// reference solutions (nothing else a student's program could run).
BoxLayout box_layout(const std::string& source, const std::string& build, const std::string& recipes,
                     const std::set<std::string>& lesson_ids);

/// The most of a box's result the grader reads.
inline constexpr std::size_t kMaxResultBytes = 64u << 20;  // twenty lessons' JSON and JUnit are far less

/// At most `limit` bytes of a file ("" when it cannot be read).
std::string read_bounded(const std::string& path, std::size_t limit);

/// A JUnit document with one error: a student whose box gave no result.
std::string junit_error(const std::string& student, const std::string& message);

/// The box's result (`result`: what it wrote on its descriptor) as the student's grade; a
/// limit hit is the student's status even when there is a result. `limit_s`: the box's
/// time limit, `ids`: the lessons asked.
void read_result(StudentGrade& student, const BoxResult& box, const std::string& result, double limit_s,
                 const std::vector<std::string>& ids);

/// The student's line of `class grade`'s progress.
std::string student_line(const StudentGrade& student);

/// grade-in-box's one line on its result descriptor: {"grading", "junit", "disk_full"}.
std::string box_result_document(const Grading& grading, bool disk_full);

/// Writes all of `document` to `fd`. Throws std::runtime_error when it cannot.
void write_result(int fd, const std::string& document);

/// One of `paths` has less than `min_free` bytes left for us (a path that cannot be asked
/// about counts as not full).
bool nearly_full(const std::vector<std::string>& paths, std::uint64_t min_free = 1u << 20);

}  // namespace gpulab::grading
