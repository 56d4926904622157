#include "report/program_ends.h"

#include <sstream>

namespace gpulab {

std::string program_end_line(const ProgramEnd& end) { return end.program + " " + end.how + ".\n"; }

std::vector<ProgramEnd> parse_program_ends(const std::string& text) {
  std::vector<ProgramEnd> ends;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.back() == '.') line.pop_back();
    const auto space = line.find(' ');
    if (space == std::string::npos) ends.push_back({"", line});
    else ends.push_back({line.substr(0, space), line.substr(space + 1)});
  }
  return ends;
}

Outcome outcome_of(const std::vector<ProgramEnd>& ends) {
  Outcome outcome = Outcome::kChecksFailed;
  for (const auto& end : ends) {
    if (end.how.rfind("crashed", 0) == 0) return Outcome::kCrashed;
    if (end.how.rfind("did not finish", 0) == 0) outcome = Outcome::kTimedOut;
  }
  return outcome;
}

}  // namespace gpulab
