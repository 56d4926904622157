// gpulab quiz, played from outside as a script would: answers on stdin, the transcript
// parsed back. Expected scores come from the quiz's own printed truths (never from a copy
// of a run), and the truths themselves are checked against `gpulab devices`.
#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "proc/process.h"
#include "lesson_run.h"
#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::test;

namespace {

constexpr double kTimeout = 300;

struct Round {
  std::string scenario;  // what the quiz showed before asking
  std::string truth;     // "error", "3", "2,5"
  std::string result;    // "correct" or "incorrect"
  bool scored = true;    // false: "(not scored: … FASTEST_FIRST …)"
};

struct Played {
  ProcessResult process;
  std::vector<Round> rounds;  // the rounds the quiz answered
  int score = -1, asked = -1;  // "score: k/K": K counts the scored rounds
};

#define SHOW(played) \
  INFO("exit: " << (played).process.outcome(kTimeout) << "\nstdout:\n" << (played).process.out << "\nstderr:\n" << (played).process.err)

// `gpulab quiz <args> < answers`, on a fresh simulated node with a clean CUDA environment.
Played play(const std::vector<std::string>& args, const std::vector<std::string>& answers) {
  const std::string state = fresh_state_dir();
  const std::string input = state + "/answers.txt";
  {
    std::ofstream file(input);
    for (const auto& answer : answers) file << answer << '\n';
  }
  ProcessOptions options;
  // The shell only redirects stdin: the quiz then reads a file, not a terminal.
  options.argv = {"/bin/sh", "-c", "exec \"$0\" quiz \"$@\" < \"$QUIZ_ANSWERS\"", bin_dir() + "/gpulab"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"QUIZ_ANSWERS", input},          {"GPULAB_STATE_DIR", state},   {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt}, {"GPULAB_NODE", std::nullopt}, {"LOCAL_RANK", std::nullopt}};
  options.timeout_s = kTimeout;
  Played played{run_process(options), {}};

  std::istringstream lines(played.process.out);
  const std::regex round_start(R"(^Round \d+ of \d+$)"), score(R"(^score: (\d+)/(\d+)$)");
  std::smatch match;
  Round current;
  bool asking = false;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, round_start)) {
      current = {};
      asking = true;
    } else if (line.rfind("Which physical GPU(s)?", 0) == 0) {
      asking = false;
    } else if (asking) {
      current.scenario += line + '\n';
    } else if (line.rfind("  result: ", 0) == 0) {
      current.result = line.substr(10, line.find(' ', 10) - 10);
      current.scored = line.find("(not scored: the answer rests on gpulab's model of FASTEST_FIRST") == std::string::npos;
    } else if (line.rfind("  truth: ", 0) == 0) {
      current.truth = line.substr(9);
      played.rounds.push_back(current);
    } else if (std::regex_match(line, match, score)) {
      played.score = std::stoi(match[1]);
      played.asked = std::stoi(match[2]);
    }
  }
  return played;
}

std::vector<std::string> repeat(const std::string& answer, int times) { return std::vector<std::string>(static_cast<std::size_t>(times), answer); }

std::vector<std::string> scenarios(const Played& played) {
  std::vector<std::string> shown;
  for (const auto& round : played.rounds) shown.push_back(round.scenario);
  return shown;
}

int error_truths(const Played& played, bool scored_only = false) {
  int count = 0;
  for (const auto& round : played.rounds) count += round.truth == "error" && (round.scored || !scored_only) ? 1 : 0;
  return count;
}

int scored_rounds(const Played& played) {
  int count = 0;
  for (const auto& round : played.rounds) count += round.scored ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("quiz: a seed replays the same scenarios, another seed draws others") {
  const auto first = play({"--seed", "7", "--rounds", "6"}, repeat("error", 6));
  const auto again = play({"--seed", "7", "--rounds", "6"}, repeat("error", 6));
  const auto other = play({"--seed", "8", "--rounds", "6"}, repeat("error", 6));
  SHOW(first);
  REQUIRE(first.process.exit_code == 0);
  REQUIRE(first.rounds.size() == 6);
  CHECK(first.process.out.find("seed 7 — replay with --seed 7") != std::string::npos);
  CHECK(scenarios(again) == scenarios(first));
  CHECK(again.process.out == first.process.out);
  CHECK(scenarios(other) != scenarios(first));
}

TEST_CASE("quiz: scripted answers are scored against the truths the quiz prints") {
  const int rounds = 10;
  // A seed whose first rounds have both kinds of truth (4 of 10 are errors since lesson 17's idea).
  const std::vector<std::string> args = {"--seed", "4", "--rounds", std::to_string(rounds)};
  const auto first = play(args, repeat("error", rounds));
  SHOW(first);
  REQUIRE(first.process.exit_code == 0);
  REQUIRE(first.rounds.size() == static_cast<std::size_t>(rounds));
  const int errors = error_truths(first);
  INFO(errors << " of " << rounds << " truths are 'error'");
  // Both kinds must occur, or a quiz that always says "correct" (or never) would pass.
  REQUIRE(errors > 0);
  REQUIRE(errors < rounds);

  {
    INFO("answering 'error' to every round scores the rounds whose truth is an error");
    CHECK(first.asked == scored_rounds(first));
    CHECK(first.score == error_truths(first, /*scored_only=*/true));
    for (const auto& round : first.rounds) {
      INFO(round.scenario << "truth: " << round.truth);
      CHECK(round.result == (round.truth == "error" ? "correct" : "incorrect"));
    }
  }

  {
    INFO("replayed, answering each round's truth in any accepted spelling scores every round");
    std::vector<std::string> answers;
    for (std::size_t i = 0; i < first.rounds.size(); ++i) {
      const std::string& truth = first.rounds[i].truth;
      // Alternate the plain form with the tolerant ones: "ERR", " GPU 2, 5 ".
      if (i % 2 == 0) answers.push_back(truth);
      else if (truth == "error") answers.push_back("ERR");
      else answers.push_back(" GPU " + std::regex_replace(truth, std::regex(","), ", ") + " ");
    }
    const auto second = play(args, answers);
    SHOW(second);
    REQUIRE(second.process.exit_code == 0);
    CHECK(scenarios(second) == scenarios(first));
    CHECK(second.asked == scored_rounds(second));
    CHECK(second.score == scored_rounds(second));
  }
}

TEST_CASE("quiz: unreadable answers score nothing, say what is expected, and do not stall the script") {
  const auto played = play({"--seed", "5", "--rounds", "5"}, {"banana", "", "cuda:1", "3 apples", "gpu"});
  SHOW(played);
  REQUIRE_FALSE(played.process.timed_out);
  CHECK(played.process.exit_code == 0);
  CHECK(played.rounds.size() == 5);
  CHECK(played.asked == scored_rounds(played));
  CHECK(played.score == 0);
  CHECK(played.process.out.find("expected a GPU number such as 3") != std::string::npos);
}

TEST_CASE("quiz: the end of input ends the quiz early with the score so far") {
  const auto played = play({"--seed", "2", "--rounds", "5"}, {"error", "0"});
  SHOW(played);
  CHECK(played.process.exit_code == 0);
  CHECK(played.rounds.size() == 2);
  CHECK(played.asked == scored_rounds(played));
  CHECK(played.score >= 0);
  CHECK(played.process.out.find("end of input: the quiz stops after 2 of 5 rounds") != std::string::npos);

  const auto nothing = play({"--seed", "2", "--rounds", "3"}, {});
  SHOW(nothing);
  CHECK(nothing.process.exit_code == 0);
  CHECK(nothing.asked == 0);
  CHECK(nothing.score == 0);
}

TEST_CASE("quiz: no rounds, negative rounds or a negative seed is a usage error") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--rounds", "0"}, {"--rounds", "-2"}, {"--seed", "-1"}, {"--rounds", "three"}}) {
    const auto played = play(args, {"error"});
    SHOW(played);
    CHECK(played.process.exit_code == 2);
    CHECK(played.rounds.empty());
  }
}

// The truth is what the scenario does when run: `gpulab devices` under the same environment,
// another program, must agree on which physical GPU each CUDA index is.
TEST_CASE("quiz: --json gives each round, and its truths agree with gpulab devices") {
  const int rounds = 20;  // every idea once (one per lesson, two for 05, none of its own for 04)
  const auto played = play({"--seed", "3", "--rounds", std::to_string(rounds), "--json"}, repeat("1", rounds));
  SHOW(played);
  REQUIRE(played.process.exit_code == 0);
  const auto report = nlohmann::json::parse(played.process.out);
  REQUIRE(report["rounds"].size() == static_cast<std::size_t>(rounds));
  CHECK(report["asked"] == rounds);
  int correct = 0, scored = 0;
  for (const auto& round : report["rounds"]) {
    INFO(round.dump(2));
    const bool counts = round["scored"].get<bool>();
    // Only unlike GPUs counted in FASTEST_FIRST order (workstation-mixed, pascal-rig) go unscored.
    const bool unlike = round["node"] == "workstation-mixed" || round["node"] == "pascal-rig";
    if (!counts) CHECK((unlike && round["env"]["CUDA_DEVICE_ORDER"] != "PCI_BUS_ID"));
    if (!unlike) CHECK(counts);
    CHECK(!round["lesson"].get<std::string>().empty());
    scored += counts ? 1 : 0;
    correct += counts && round["correct"].get<bool>() ? 1 : 0;
    CHECK(round["correct"] == (round["truth"] == "1"));

    ProcessOptions devices;
    devices.argv = {bin_dir() + "/gpulab", "devices", "--json"};
    devices.env = {{"GPULAB_NODE", round["node"].get<std::string>()}, {"GPULAB_STATE_DIR", fresh_state_dir()}};
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES"})
      devices.env.emplace_back(name, !round["env"].contains(name) || round["env"][name].is_null() ? std::nullopt
                                                                   : std::optional<std::string>(round["env"][name].get<std::string>()));
    const auto seen = run_process(devices);
    REQUIRE(seen.ok());
    std::vector<int> physical;
    const auto listed = nlohmann::json::parse(seen.out);
    for (const auto& device : listed["devices"]) physical.push_back(device["physical_index"]);
    const auto& scenario = round["scenario"];
    const std::string code = scenario["code"];
    const auto on = [&](std::size_t index) { return index < physical.size() ? std::to_string(physical[index]) : "error"; };
    if (code == "data_parallel") {
      const std::vector<int> ids = scenario["device_ids"];
      const bool missing = std::any_of(ids.begin(), ids.end(), [&](int id) { return id >= static_cast<int>(physical.size()); });
      // DataParallel needs the model on device_ids[0]; model->to(torch::kCUDA) puts it on cuda:0.
      if (missing || (scenario["model_on_cuda0"] == true && ids[0] != 0)) {
        CHECK(round["truth"] == "error");
        continue;
      }
      if (scenario["ask_output"] == true) {  // gathered on device_ids[0]
        CHECK(round["truth"] == on(static_cast<std::size_t>(ids[0])));
        continue;
      }
      std::set<int> replicas;
      for (int id : scenario["device_ids"]) replicas.insert(physical.at(static_cast<std::size_t>(id)));
      if (scenario["batch_to_cuda"] == true) replicas.insert(physical.at(0));  // the batch went to cuda:0 first
      std::string expected;
      for (int gpu : replicas) expected += (expected.empty() ? "" : ",") + std::to_string(gpu);
      CHECK(round["truth"] == expected);
    } else if (code == "default" || code == "no_set_device" || code == "default_ids") {  // cuda:0
      CHECK(round["truth"] == on(0));
    } else if (code == "thread") {  // set_device(i) must work; the thread is on cuda:0
      CHECK(round["truth"] == (scenario["index"].get<std::size_t>() < physical.size() ? on(0) : "error"));
    } else if (code == "fork") {  // a child forked after CUDA started cannot use it
      const auto index = scenario["index"].get<std::size_t>();
      CHECK(round["truth"] == (scenario["fork_after_init"] == true || index >= physical.size() ? "error" : on(index)));
    } else if (code == "guard") {  // a guard restores cuda:index; set_device(borrowed) stays
      const auto index = scenario["index"].get<std::size_t>(), borrowed = scenario["borrowed"].get<std::size_t>();
      if (index >= physical.size() || borrowed >= physical.size()) {
        CHECK(round["truth"] == "error");
      } else if (scenario["ask_memory"] == true) {  // x on cuda:index, and on CUDA 12+ a context on cuda:borrowed
        const std::string truth = "," + round["truth"].get<std::string>() + ",";
        CHECK(truth.find("," + on(index) + ",") != std::string::npos);
      } else {
        CHECK(round["truth"] == on(scenario["scoped"] == true ? index : borrowed));
      }
    } else if (code == "mixed_device") {  // the model on cuda:index; x on cuda:0 or the model's GPU
      const auto index = scenario["index"].get<std::size_t>();
      const bool apart = (scenario["batch_to_cuda"] == true && index != 0) || scenario["cpu_mask"] == true;
      CHECK(round["truth"] == (apart || index >= physical.size() ? "error" : on(index)));
    } else if (code == "device_string" || code == "load") {
      continue;  // their truths are checked by the unit tests and the lessons (06, 16)
    } else {  // ones, set_device, local_rank, rank, setenv_late: cuda:index of what CUDA showed at start
      CHECK(round["truth"] == on(scenario["index"].get<std::size_t>()));
    }
  }
  CHECK(report["score"] == correct);
  CHECK(report["scored"] == scored);
}

// The quiz's state machine (src/tutor/quiz.h), played in process with the same probe, prints
// byte for byte what `gpulab quiz` prints: transcript and --json document alike.
TEST_CASE("quiz: the state machine in process plays the same quiz as gpulab quiz") {
  const std::vector<std::string> answers = {"error", "3", "banana", "2,3", "none", ""};
  for (const bool json : {false, true}) {
    std::vector<std::string> args = {"--seed", "4", "--rounds", "5"};
    if (json) args.push_back("--json");
    const auto played = play(args, answers);
    SHOW(played);
    REQUIRE(played.process.exit_code == 0);
    tutor::Quiz quiz({4, 5, /*interactive=*/false, /*color=*/false, json});
    std::string transcript, document;
    std::size_t next_answer = 0;
    std::vector<tutor::QuizAction> todo = quiz.start();
    while (!todo.empty()) {
      const tutor::QuizAction action = todo.front();
      todo.erase(todo.begin());
      tutor::QuizActions more;
      switch (action.kind) {
        case tutor::QuizAction::Kind::kPrint: transcript += action.text; break;
        case tutor::QuizAction::Kind::kAsk:
          transcript += action.text;
          more = next_answer < answers.size() ? quiz.on_answer(answers[next_answer++]) : quiz.on_end();
          break;
        case tutor::QuizAction::Kind::kProbe: more = quiz.on_truth(tutor::run_scenario(action.scenario, bin_dir() + "/quiz-probe")); break;
        case tutor::QuizAction::Kind::kDocument: document += action.text; break;
        case tutor::QuizAction::Kind::kQuit: break;
      }
      todo.insert(todo.end(), more.begin(), more.end());
    }
    CHECK(quiz.awaiting() == tutor::QuizAwaiting::kNothing);
    // With --json the transcript goes to stderr and stdout carries only the document.
    CHECK((json ? played.process.err : played.process.out) == transcript);
    CHECK((json ? played.process.out : std::string()) == document);
  }
}
