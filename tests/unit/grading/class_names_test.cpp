// A class's students are named by their folders, uniquely, the same way in the grades and in
// the report (grading/class_grade.h).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/class_grade.h"

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
