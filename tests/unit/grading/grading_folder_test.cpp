// Where a student's checkout is graded (grading/grading_folder.h): a build cache read as
// name -> value, and a folder name per tree that is readable, safe and the same every run.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "grading/grading_folder.h"
#include "proc/temp_dir.h"

using gpulab::TempDir;
using gpulab::grading::folder_name;
using gpulab::grading::read_build_cache;

TEST_CASE("a build cache is read as name -> value; comments and lines that are no entry are not", "[unit][grading]") {
  const TempDir build("grading-folder");
  std::ofstream(build.path() + "/CMakeCache.txt") << "# This is the CMakeCache file.\n"
                                                     "// the prefix of LibTorch\n"
                                                     "LIBTORCH_PREFIX:PATH=/opt/torch\n"
                                                     "\n"
                                                     "CMAKE_CXX_FLAGS:STRING=-DX=1 -O2\n"
                                                     "EMPTY:STRING=\n"
                                                     "no colon here=1\n"
                                                     "A=B:C\n"
                                                     "//DOCUMENTED:BOOL=ON\n";
  const auto cache = read_build_cache(build.path());
  CHECK(cache.at("LIBTORCH_PREFIX") == "/opt/torch");
  CHECK(cache.at("CMAKE_CXX_FLAGS") == "-DX=1 -O2");  // the value from the first '=' on, whole
  CHECK(cache.at("EMPTY").empty());
  CHECK(cache.count("no colon here") == 0);
  CHECK(cache.count("A") == 0);  // the type's colon comes after the '=': no entry
  CHECK(cache.count("//DOCUMENTED") == 0);
  CHECK(cache.size() == 3);
}

TEST_CASE("a build folder without a cache reads as an empty cache", "[unit][grading]") {
  const TempDir build("grading-folder");
  CHECK(read_build_cache(build.path()).empty());
  CHECK(read_build_cache(build.path() + "/missing").empty());
}

TEST_CASE("a tree's folder is its name made safe, then an FNV-1a hash of its whole path", "[unit][grading]") {
  // FNV-1a (32 bits) of "/home/x/the class" is 196ce13a.
  CHECK(folder_name("/home/x/the class") == "the_class-196ce13a");
  CHECK(folder_name("/home/x/the class") == folder_name("/home/x/the class"));  // the same every run
  // Two trees of one name do not share a folder.
  CHECK(folder_name("/a/alice") != folder_name("/b/alice"));
  CHECK(folder_name("/a/alice").rfind("alice-", 0) == 0);
  // Letters, digits, '-', '_' and '.' stay; anything else (a slash cannot come) is '_'.
  const std::string name = folder_name("/t/al-i_c.e $(rm)");
  CHECK(name.substr(0, name.rfind('-')) == "al-i_c.e___rm_");
  CHECK(name.size() == std::string("al-i_c.e___rm_").size() + 9);
}

TEST_CASE("a path with no name of its own (the root, a trailing slash) is called root", "[unit][grading]") {
  CHECK(folder_name("/").rfind("root-", 0) == 0);
  CHECK(folder_name("/home/x/").rfind("root-", 0) == 0);
  CHECK(folder_name("/") != folder_name("/home/x/"));
}
