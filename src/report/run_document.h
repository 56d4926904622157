// The run document: what one `gpulab run NN` produced, as `gpulab run NN --json` prints it
// (docs/report-schema.md, "The run document"). One lesson report for a single process; one
// per step for a lesson in steps ({"steps": [...]}); one per rank plus the launcher's
// summary for a launched lesson ({"ranks": [...], "launch": {...}}).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/launch_summary.h"
#include "report/report_reader.h"

namespace gpulab {

/// One report of the document, as the program wrote it and as parsed.
struct RunPart {
  std::string json;              ///< the program's own JSON text, exactly
  std::optional<Report> report;  ///< nullopt when `json` is not a valid report
  std::string problem;           ///< why not, when it is not
  int rank = -1;                 ///< a launched lesson's rank; -1 otherwise
};

struct RunDocument {
  enum class Kind { kSingle, kSteps, kRanks };
  Kind kind = Kind::kSingle;
  std::vector<RunPart> parts;           ///< one, one per step, or one per rank (rank order)
  std::optional<LaunchSummary> launch;  ///< kRanks: the launcher's summary, when it wrote one

  /// The document as `gpulab run --json` prints it: a single report's own text, or
  /// {"steps": [...]} / {"ranks": [...], "launch": {...}}.
  std::string json() const;
  /// The simulated host of a rank ("" when the summary does not say).
  std::string host_of(int rank) const;
};

/// Parses what `gpulab run --json` printed. Throws ReportError when the text is not a run
/// document at all; a part that is not a valid report is kept with its `problem`.
RunDocument parse_run_document(const std::string& json);

}  // namespace gpulab
