// What the tutorial prints about a build, a run and the checks, as text (no I/O): the same
// words `gpulab run` and `gpulab check` use, so the tutorial reads as those commands do.
#pragma once

#include <optional>
#include <string>

#include "course/manifest.h"
#include "grading/runner.h"
#include "report/run_document.h"
#include "view/node_picture.h"
#include "workspace/rules.h"  // checks_header, crash_line, verdict_lines

namespace gpulab::tutor {

/// "#####..............." for `done` of `total`.
std::string bar(int done, int total, int width = 20);

/// The compiler's messages, then that the exercise does not compile yet.
std::string compile_error_text(const grading::BuildResult& result);

/// Why a run gave nothing to show (it timed out, crashed or wrote no report), or nullopt
/// when its document can be shown.
std::optional<std::string> run_failure_text(const LessonEntry& lesson, const grading::RunResult& result,
                                            double timeout_s);

/// The node picture of each report (each step's, or every rank's on one picture) and the
/// errors the reports name.
std::string pictures_text(const RunDocument& document, const view::PictureStyle& style);

/// The checks' verdict as `gpulab check NN` says it: each check, then passed or not yet.
std::string checks_text(const LessonEntry& lesson, const grading::ChecksResult& result, bool stretch,
                        double timeout_s);

}  // namespace gpulab::tutor
