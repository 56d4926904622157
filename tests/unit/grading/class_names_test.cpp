// A class's students are named by their folders, uniquely, the same way in the grades and in
// the report (grading/class_names.h), and safely: a folder name of the grades' output and a
// line of the report, whatever the student's folder is called.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/class_names.h"

using gpulab::grading::student_name;
using gpulab::grading::student_names;
using gpulab::grading::unique_names;
using Names = std::vector<std::string>;

TEST_CASE("two folders of one name become alice and alice-2, in order", "[unit][classroom]") {
  CHECK(unique_names({"alice", "bob", "alice", "alice"}) == Names{"alice", "bob", "alice-2", "alice-3"});
  CHECK(unique_names({}).empty());
}

TEST_CASE("a suffix never takes the name of another student's folder", "[unit][classroom]") {
  // A real alice-2 keeps its name, whichever comes first; the second alice moves on.
  CHECK(unique_names({"alice", "alice", "alice-2"}) == Names{"alice", "alice-3", "alice-2"});
  CHECK(unique_names({"alice-2", "alice", "alice"}) == Names{"alice-2", "alice", "alice-3"});
  // The same folder name twice with a suffix of its own still ends unique.
  CHECK(unique_names({"alice-2", "alice-2", "alice"}) == Names{"alice-2", "alice-2-2", "alice"});
}

TEST_CASE("a student is named by the folder's own name, never its path", "[unit][classroom]") {
  CHECK(student_name("class/alice") == "alice");
  CHECK(student_name("class/alice/") == "alice");
  CHECK(student_name("/srv/class/bob.smith-2_x") == "bob.smith-2_x");
  CHECK(student_name("alice") == "alice");
  // "." and ".." are the folders they name.
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gpulab-names-" + std::to_string(getpid())) / "carol";
  fs::create_directories(root / "sub");
  const fs::path here = fs::current_path();
  fs::current_path(root);
  CHECK(student_name(".") == "carol");
  CHECK(student_name("sub/..") == "carol");
  CHECK(student_name("sub/../") == "carol");
  fs::current_path(root / "sub");
  CHECK(student_name("..") == "carol");
  fs::current_path(here);
  fs::remove_all(root.parent_path());
}

TEST_CASE("a name is safe as a folder name and on a terminal, whatever the folder is called", "[unit][classroom]") {
  CHECK(student_name("class/\x1b[2J\x1b]0;owned\x07") == "__2J__0_owned_");  // escape codes
  CHECK(student_name("class/\xff\xfe" "ab") == "__ab");                          // not UTF-8: a '_' a byte
  CHECK(student_name("class/José") == "Jos_");                                 // a character: one '_'
  CHECK(student_name("class/a b/") == "a_b");
  CHECK(student_name("class/.hidden") == "_hidden");  // no hidden folder, never "." or ".."
  CHECK(student_name("class/...") == "_..");
  CHECK(student_name("") != "");
  CHECK(student_name("class/" + std::string(300, 'x')).size() == 64);
  for (const std::string& name : {student_name("class/\n"), student_name("class/\xE2\x80\xAE"), student_name("")}) {
    CHECK(!name.empty());
    CHECK(name.find('/') == std::string::npos);
    CHECK(name != ".");
    CHECK(name != "..");
  }
}

TEST_CASE("no student takes the class summary's name", "[unit][classroom]") {
  CHECK(student_names({"x/class.json", "y/class.json", "z/bob"}) == Names{"class.json-2", "class.json-3", "bob"});
  CHECK(student_names({"a/alice", "b/alice", "c/alice-2"}) == Names{"alice", "alice-3", "alice-2"});
  // Two different folders whose safe names meet are still told apart.
  CHECK(student_names({"a/\x1b", "b/\x07"}) == Names{"_", "_-2"});
}
