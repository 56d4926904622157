// Messages passed on to the learner: what a compiler, a checks program or a lesson printed,
// without the machine's paths and cut to what fits on a screen.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// `text` with every occurrence of each prefix removed (a build folder, the repository root).
std::string without_prefixes(std::string text, const std::vector<std::string>& prefixes);

/// The first `count` lines of `text`, each ending in a newline.
std::string first_lines(const std::string& text, std::size_t count);

/// What may be shown of text someone else wrote (a student's file, its folder's name) in a
/// terminal, JSON or HTML: valid UTF-8 is kept; each byte that is not part of valid UTF-8
/// (overlong forms, surrogates and code points past U+10FFFF included) and each control
/// character (C0 with tab and newline, DEL, C1, and the bidirectional marks, embeddings,
/// overrides and isolates that reorder a line) becomes U+FFFD. At most `max_points` code
/// points are kept, "…" marking a cut. The one place student-derived text is made safe to
/// show (tests/unit/report/printable_test.cpp).
std::string printable(std::string_view text, std::size_t max_points = std::string_view::npos);

}  // namespace gpulab
