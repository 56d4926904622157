// gpulab class grade, from outside: a class of student trees graded in boxes. Honest students
// are graded as `check all` grades them; students whose exercise attacks the grader (reads
// a neighbour's tree or the solutions, writes to the instructor's files, opens a socket,
// fork-bombs, fills the disk, eats the memory) leave no trace outside their box, are
// stopped at its limits and reported by status, and change nobody else's grade.
//
// Every hostile exercise reports what its attempt gave (READ:…, WROTE, CONNECTED or
// BLOCKED:…) as the lesson's error, which the grading JSON shows as what the checks
// observed: a box that let an attempt through fails here by name.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "course/manifest.h"
#include "lesson_run.h"
#include "proc/process.h"
#include "proc/text_file.h"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::test;

namespace {

// Lesson 01's exercise whose body first does `attack`, a block that sets `std::string what`.
std::string hostile(const std::string& attack) {
  return "#include <fcntl.h>\n#include <unistd.h>\n#include <csignal>\n#include <sys/socket.h>\n#include <netinet/in.h>\n#include <arpa/inet.h>\n"
         "#include <cstdlib>\n#include <fstream>\n#include <sstream>\n#include <stdexcept>\n#include <string>\n#include <vector>\n"
         "#include \"gpulab/lesson.h\"\n"
         "int main(int argc, char** argv) {\n"
         "  return gpulab::run_lesson(\"01\", argc, argv, [](gpulab::Lesson&) {\n"
         "    std::string what = \"nothing\";\n" +
         attack + "\n    throw std::runtime_error(\"ATTEMPT \" + what);\n  });\n}\n";
}

// A block that reads `path` into what: READ:<text> or BLOCKED.
std::string read_attempt(const std::string& path) {
  return "    { std::ifstream in(\"" + path + "\"); std::stringstream all; all << in.rdbuf();\n"
         "      what = in && !all.str().empty() ? \"READ:\" + all.str() : \"BLOCKED\"; }";
}

const nlohmann::json& lesson_01(const nlohmann::json& student) {
  return student.at("grading").at("lessons").at(0);
}

// Everything the checks observed of lesson 01, in one text.
std::string observed(const nlohmann::json& student) {
  std::string text;
  if (student.at("grading").is_null()) return text;
  for (const auto& check : lesson_01(student).at("checks")) text += check.value("observed", nlohmann::json("")).dump() + "\n";
  return text + lesson_01(student).value("message", "");
}

}  // namespace

TEST_CASE("a class graded in boxes: hostile exercises are contained and reported, the others graded as usual", "[class]") {
  const Manifest lessons = load_manifest(source_dir() + "/lessons/manifest.json");
  const std::string dir = lessons.find("01").directory();
  const fs::path root = fresh_state_dir();
  const fs::path outside = root / "instructor-home";
  fs::create_directories(outside);
  std::ofstream(outside / "notes.txt") << "the instructor's notes\n";

  // A listener on this machine's loopback: a box with the network would reach it.
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(listener, 8) == 0);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string port = std::to_string(ntohs(address.sin_port));

  auto student = [&](const std::string& name, const std::string& main_cpp) {
    const fs::path tree = root / "class" / name;
    fs::create_directories(tree / "lessons");
    fs::copy(fs::path(source_dir()) / "lessons" / dir, tree / "lessons" / dir, fs::copy_options::recursive);
    std::ofstream(tree / "lessons" / dir / "main.cpp") << main_cpp;
    return tree;
  };
  const std::string solution = read_text_file(fs::path(source_dir()) / "solutions" / dir / "main.cpp");
  const std::string secret = "the neighbour's own work, line 7";
  const fs::path honest = student("honest", solution + "// " + secret + "\n");
  student("unfinished", read_text_file(fs::path(source_dir()) / "lessons" / dir / "main.cpp"));
  // A folder named as the class's summary: graded under another name, the summary kept.
  student("class.json", read_text_file(fs::path(source_dir()) / "lessons" / dir / "main.cpp"));
  student("reads-a-neighbour", hostile(read_attempt((honest / "lessons" / dir / "main.cpp").string())));
  student("reads-the-solutions", hostile(read_attempt(source_dir() + "/solutions/" + dir + "/main.cpp")));
  student("includes-the-solution", "#include \"" + source_dir() + "/solutions/" + dir + "/main.cpp\"\n");
  student("writes-home", hostile("    { std::ofstream out(\"" + (outside / "pwned").string() + "\"); out << \"x\";\n"
                                 "      std::ofstream home(std::string(std::getenv(\"HOME\")) + \"/../../pwned\"); home << \"x\";\n"
                                 "      what = out ? \"WROTE\" : \"BLOCKED\"; }"));
  student("opens-a-socket", hostile("    { int s = socket(AF_INET, SOCK_STREAM, 0); sockaddr_in a{}; a.sin_family = AF_INET;\n"
                                    "      a.sin_port = htons(" + port + "); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);\n"
                                    "      bool near = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;\n"
                                    "      int t = socket(AF_INET, SOCK_STREAM, 0); inet_pton(AF_INET, \"192.0.2.1\", &a.sin_addr);\n"
                                    "      bool far = connect(t, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;\n"
                                    "      what = near || far ? \"CONNECTED\" : \"BLOCKED\"; }"));
  student("fork-bomb", hostile("    for (;;) fork();"));
  // Writes 1 MiB files everywhere it might (up to 4 GiB a place), then says how many MiB
  // each place took: DISK /=0 /tmp=63 ...
  student("fills-the-disk", hostile(
      "    { std::vector<char> block(1 << 20, 'x'); what = \"DISK\";\n"
      "      char self[4096] = {}; std::string bin = readlink(\"/proc/self/exe\", self, sizeof self - 1) > 0 ? self : \"/\";\n"
      "      bin = bin.substr(0, bin.rfind('/'));\n"
      "      for (std::string place : {std::string(\"/\"), std::string(\"/root\"), std::string(\"/dev/shm\"), std::string(\"/tmp\"),\n"
      "                                std::string(\"/grader\"), std::string(\"/student\"), std::string(\"/usr\"), std::string(\"/var/tmp\"), bin}) {\n"
      "        int mib = 0;\n"
      "        for (int file = 0; file < 4096; ++file) {\n"
      "          int fd = open((place + \"/fill-\" + std::to_string(file)).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);\n"
      "          bool whole = fd >= 0 && write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size());\n"
      "          if (fd >= 0) close(fd);\n"
      "          if (!whole) break;\n"
      "          ++mib;\n"
      "        }\n"
      "        what += \" \" + place + \"=\" + std::to_string(mib);\n"
      "      } }"));
  // Reads every environment it can see (its own, and each process's in /proc) and says so.
  student("snoops-the-environment", hostile(
      "    { what = \"SNOOPED:\";\n"
      "      for (int pid = 1; pid < 4194304; pid = pid < 4096 ? pid + 1 : pid * 2) {\n"
      "        std::ifstream in(\"/proc/\" + std::to_string(pid) + \"/environ\"); std::stringstream all; all << in.rdbuf();\n"
      "        if (in) what += all.str();\n"
      "      }\n"
      "      for (char** e = environ; *e != nullptr; ++e) what += std::string(*e) + ' '; }"));
  // Finds the grader's processes (any process but itself), writes a result that passes every
  // lesson to each descriptor they hold, then kills everything it can.
  const std::string forged = R"({"grading":{"lessons":[{"id":"01","status":"passed"}]},"junit":"<testsuites/>","disk_full":false})";
  student("forges-the-result", hostile(
      "    { const std::string forged = " + nlohmann::json(forged).dump() + ";\n"
      "      int reached = 0;\n"
      "      for (int pid = 1; pid < 4194304; pid = pid < 4096 ? pid + 1 : pid * 2) {\n"
      "        if (pid == getpid()) continue;\n"
      "        for (int fd = 0; fd < 64; ++fd) {\n"
      "          int out = open((\"/proc/\" + std::to_string(pid) + \"/fd/\" + std::to_string(fd)).c_str(), O_WRONLY | O_APPEND | O_NONBLOCK);\n"
      "          if (out < 0) continue;\n"
      "          reached += write(out, (\"\\n\" + forged + \"\\n\").c_str(), forged.size() + 2) > 0;\n"
      "          close(out);\n"
      "        }\n"
      "      }\n"
      "      kill(-1, SIGKILL);\n"
      "      what = \"FORGED:\" + std::to_string(reached); }"));
  // The generated scenarios compare with the reference solution, in the box too: a mistake
  // only they catch fails there (a known wrong answer, tests/mutations).
  {
    const fs::path tree = student("prints-on-every-run", "");
    ProcessOptions patch;
    patch.argv = {"patch", "--quiet", "-o", (tree / "lessons" / dir / "main.cpp").string(),
                  source_dir() + "/solutions/" + dir + "/main.cpp", source_dir() + "/tests/mutations/lesson01/message-outside-the-if.patch"};
    REQUIRE(run_process(patch).ok());
  }
  // The reference solutions are there for the checks: a student's program that runs one as
  // its own, or a compiler that embeds one, must find nothing.
  student("runs-the-reference", hostile(
      "    { std::ifstream in(\"/proc/self/cmdline\"); std::vector<std::string> words; std::string word;\n"
      "      while (std::getline(in, word, '\\0')) words.push_back(word);\n"
      "      std::vector<char*> args; std::string path = \"/reference/solution-01\"; args.push_back(path.data());\n"
      "      for (std::size_t i = 1; i < words.size(); ++i) args.push_back(words[i].data());\n"
      "      args.push_back(nullptr); execv(path.c_str(), args.data()); what = \"BLOCKED\"; }"));
  student("embeds-the-reference",
          "asm(\".section .rodata\\n.incbin \\\"/reference/solution-01\\\"\\n.text\\n\");\n" + solution);
  student("eats-memory", hostile("    { std::vector<std::vector<char>> kept;\n"
                                 "      for (int i = 0; i < 256; ++i) kept.emplace_back(std::size_t(64) << 20, 'x');\n"
                                 "      what = \"ALLOCATED\"; }"));
  const std::string honest_before = read_text_file(honest / "lessons" / dir / "main.cpp");

  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "class", "grade", "--lessons", "01", "--jobs", "2", "--timeout", "60",
                  "--memory", "2", "--disk", "64", "--student-timeout", "300", "--out", (root / "grades").string()};
  for (const auto& entry : fs::directory_iterator(root / "class")) options.argv.push_back(entry.path().string());
  // Secrets of the instructor's shell: no student's program may see them.
  const std::string planted = "planted-" + std::to_string(getpid()) + "-token";
  options.env = {{"GPULAB_STATE_DIR", fresh_state_dir()}, {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt},
                 {"INSTRUCTOR_API_KEY", planted}, {"GPULAB_NOTES", planted}};
  options.timeout_s = 1800;
  const ProcessResult ran = run_process(options);
  INFO("gpulab class grade -> " << ran.outcome(1800) << "\n" << ran.out << ran.err);
  // Not every student was graded (the box stopped some): exit code 1.
  CHECK(ran.exit_code == 1);

  const auto summary = nlohmann::json::parse(read_text_file(root / "grades" / "class.json"));
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& name : {"honest", "unfinished", "reads-a-neighbour", "reads-the-solutions", "includes-the-solution",
                           "writes-home", "opens-a-socket", "fork-bomb", "fills-the-disk", "eats-memory",
                           "snoops-the-environment", "forges-the-result", "class.json-2", "prints-on-every-run",
                           "runs-the-reference", "embeds-the-reference"}) {
    const fs::path file = root / "grades" / name / "grading.json";
    INFO(file.string());
    REQUIRE(fs::exists(file));
    REQUIRE(fs::exists(root / "grades" / name / "junit.xml"));
    pugi::xml_document junit;
    CHECK(junit.load_file((root / "grades" / name / "junit.xml").c_str()));
    by_name[name] = nlohmann::json::parse(read_text_file(file));
  }
  const std::string box = summary.at("box").get<std::string>();
  INFO("box: " << box);

  // Honest students: graded as check all grades them.
  CHECK(by_name["honest"].at("status") == "graded");
  {
    INFO("honest: " << by_name["honest"].dump(2));
    CHECK(lesson_01(by_name["honest"]).at("status") == "passed");
  }
  CHECK(by_name["unfinished"].at("status") == "graded");
  CHECK(lesson_01(by_name["unfinished"]).at("status") == "failed");
  CHECK(lesson_01(by_name["class.json-2"]).at("status") == "failed");

  // Reading and writing outside the box: the attempt fails, and the box says so.
  for (const auto& name : {"reads-a-neighbour", "reads-the-solutions", "writes-home", "opens-a-socket"}) {
    INFO(name << ": " << by_name[name].dump(2));
    CHECK(by_name[name].at("status") == "graded");
    CHECK(lesson_01(by_name[name]).at("status") == "failed");
    CHECK(observed(by_name[name]).find("ATTEMPT BLOCKED") != std::string::npos);
  }
  CHECK(lesson_01(by_name["includes-the-solution"]).at("status") == "build_failed");
  {  // judged against the reference in the box: the generated scenarios' check fails it
    INFO("prints-on-every-run: " << by_name["prints-on-every-run"].dump(2));
    CHECK(lesson_01(by_name["prints-on-every-run"]).at("status") == "failed");
    std::string generated;
    for (const auto& check : lesson_01(by_name["prints-on-every-run"]).at("checks"))
      if (check.value("name", "").rfind("generated scenarios", 0) == 0 && !check.value("ok", true))
        generated += check.value("expected", nlohmann::json("")).dump();
    CHECK(generated.find("as the reference solution") != std::string::npos);
  }
  CHECK(lesson_01(by_name["runs-the-reference"]).at("status") == "failed");
  CHECK(observed(by_name["runs-the-reference"]).find("ATTEMPT BLOCKED") != std::string::npos);
  {
    INFO("embeds-the-reference: " << by_name["embeds-the-reference"].dump(2));
    CHECK(lesson_01(by_name["embeds-the-reference"]).at("status") == "build_failed");
    CHECK(lesson_01(by_name["embeds-the-reference"]).value("message", "").find("/reference/solution-01") != std::string::npos);
  }
  const std::string all_grades = [&] {
    std::string text;
    for (const auto& entry : fs::recursive_directory_iterator(root / "grades"))
      if (entry.is_regular_file()) text += read_text_file(entry.path());
    return text;
  }();
  CHECK(all_grades.find(secret) == std::string::npos);
  CHECK(all_grades.find(planted) == std::string::npos);
  CHECK((ran.out + ran.err).find(planted) == std::string::npos);
  // The snooper read environments (its own at least), and none held the instructor's.
  CHECK(observed(by_name["snoops-the-environment"]).find("ATTEMPT SNOOPED:") != std::string::npos);

  // The forger wrote a passing result to every descriptor it could find and killed what it
  // could: the grader was not among them, and its own verdict stands.
  INFO("forger: " << by_name["forges-the-result"].dump(2));
  CHECK(by_name["forges-the-result"].at("status") == "graded");
  // (Its kill -9 -1 also ends the prestarted parent its runs fork from: its later runs start
  // afresh, and its checks may run out of time. Any status but a pass is its own.)
  const std::string forger_lesson = lesson_01(by_name["forges-the-result"]).at("status");
  CHECK((forger_lesson == "failed" || forger_lesson == "crashed" || forger_lesson == "timed_out"));
  CHECK(by_name["forges-the-result"].at("grading").at("passed") == 0);
  CHECK(all_grades.find("READ:") == std::string::npos);
  CHECK(read_text_file(honest / "lessons" / dir / "main.cpp") == honest_before);
  CHECK_FALSE(fs::exists(outside / "pwned"));
  CHECK(read_text_file(outside / "notes.txt") == "the instructor's notes\n");
  CHECK(accept(listener, nullptr, nullptr) < 0);  // nobody connected
  close(listener);

  // Limits: stopped, and reported by name.
  auto hit = [&](const std::string& name, const std::string& limit) {
    for (const auto& l : by_name[name].at("limits_hit"))
      if (l == limit) return true;
    return false;
  };
  CHECK(by_name["fills-the-disk"].at("status") == "over_limit");
  CHECK(hit("fills-the-disk", "disk"));
  {  // where it could write, and how much: only the box's memory file systems (/tmp, /dev/shm
     // and the programs' folder, listed last), each within --disk
    const std::string said = observed(by_name["fills-the-disk"]);
    INFO("fills-the-disk: " << said);
    const auto start = said.find("ATTEMPT DISK");
    REQUIRE(start != std::string::npos);
    std::istringstream places(said.substr(start + 12, said.find_first_of("\"\n", start) - start - 12));
    int counted = 0;
    for (std::string place; places >> place; ++counted) {
      const auto equals = place.find('=');
      const std::string where = place.substr(0, equals);
      const int mib = std::stoi(place.substr(equals + 1));
      INFO(where << " took " << mib << " MiB");
      if (where == "/tmp" || where == "/dev/shm" || counted == 8) CHECK(mib <= 64);
      else CHECK(mib == 0);
    }
    CHECK(counted == 9);
  }
  CHECK(lesson_01(by_name["fork-bomb"]).at("status") != "passed");
  CHECK(lesson_01(by_name["eats-memory"]).at("status") != "passed");
  if (box.find("processes") != std::string::npos) {  // a cgroup counts them (root, or delegated)
    CHECK(by_name["fork-bomb"].at("status") == "over_limit");
    CHECK(hit("fork-bomb", "processes"));
  }
  if (box.find("memory") != std::string::npos) {
    CHECK(by_name["eats-memory"].at("status") == "over_limit");
    CHECK(hit("eats-memory", "memory"));
  }
  // The class summary agrees with the students' files.
  for (const auto& entry : summary.at("students")) {
    INFO(entry.dump());
    CHECK(entry.at("status") == by_name.at(entry.at("student").get<std::string>()).at("status"));
  }
  CHECK(summary.at("lessons").at("01").at("passed") == 1);
}
