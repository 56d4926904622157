// Messages passed on to the learner: what a compiler, a checks program or a lesson printed,
// without the machine's paths and cut to what fits on a screen.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpulab {

/// `text` with every occurrence of each prefix removed (a build folder, the repository root).
std::string without_prefixes(std::string text, const std::vector<std::string>& prefixes);

/// The first `count` lines of `text`, each ending in a newline.
std::string first_lines(const std::string& text, std::size_t count);

}  // namespace gpulab
