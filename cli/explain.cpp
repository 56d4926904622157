// gpulab explain NN: the lesson's explanation (lessons/NN-slug/EXPLAIN.md), read after its
// predictions. Shown on demand; before the predictions it says that it gives them away.
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "commands.h"
#include "course/manifest.h"
#include "report/outcome.h"
#include "tutor/progress.h"

namespace gpulab::cli {

void setup_explain(CLI::App& app) {
  auto lesson_id = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("explain", "why the lesson's run came out as it did (read it after predicting)");
  cmd->add_option("lesson", *lesson_id, "lesson number, e.g. 04")->required();
  cmd->callback([lesson_id] {
    const Manifest manifest = load_manifest();
    const LessonEntry& lesson = manifest.find(*lesson_id);
    const std::string file = "lessons/" + lesson.directory() + "/EXPLAIN.md";
    std::ifstream in(manifest.root + "/" + file);
    if (!in) throw Failure(Outcome::kUsage, file + " is missing: this tree has no explanation for lesson " + lesson.id);
    const auto progress = tutor::load_progress(tutor::progress_path(manifest.root));
    const auto mine = progress.lessons.find(lesson.id);
    if (mine == progress.lessons.end() || !mine->second.predictions_right)
      std::cerr << fmt::format("(you have not predicted lesson {} yet: this gives the answers away. "
                               "./gpulab start --lesson {} asks first.)\n\n", lesson.id, lesson.id);
    std::ostringstream text;
    text << in.rdbuf();
    // The <!-- run: ... --> notes are for the test that checks them against the run, not the reader.
    std::cout << std::regex_replace(text.str(), std::regex(" ?<!-- run: [^>]*-->"), "");
    std::cout << "\nThe predictions' answers, as the tutorial explains them:\n";
    for (std::size_t i = 0; i < lesson.predictions.size(); ++i)
      std::cout << fmt::format("  {}. {}\n     {}\n", i + 1, lesson.predictions[i].question, lesson.predictions[i].why);
  });
}

}  // namespace gpulab::cli
