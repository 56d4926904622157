// The checks' own note of each lesson program that crashed or hung while they ran it: the
// checks append one line per program to the file GPULAB_CHECK_OUTCOMES names, and the
// grader reads them back to say so and to end with the matching outcome.
#pragma once

#include <string>
#include <vector>

#include "report/outcome.h"

namespace gpulab {

struct ProgramEnd {
  std::string program;  ///< "lesson-04" (a file name, never a path)
  std::string how;      ///< "crashed with SIGSEGV (signal 11)", "did not finish within 60 s"
};

/// "lesson-04 crashed with SIGSEGV (signal 11).\n": one line of the file.
std::string program_end_line(const ProgramEnd& end);
/// Every line of the file; a line that is not one is kept whole as `how`.
std::vector<ProgramEnd> parse_program_ends(const std::string& text);
/// kCrashed when a program crashed, else kTimedOut when one hung, else kChecksFailed.
Outcome outcome_of(const std::vector<ProgramEnd>& ends);

}  // namespace gpulab
