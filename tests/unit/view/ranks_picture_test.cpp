// Every rank of a launched lesson on one picture (render_ranks_picture), from hand-built
// reports on the shipped tiny2 node.
#include <catch2/catch.hpp>

#include "test_lines.h"
#include "view/node_picture.h"

using namespace gpulab;
using namespace gpulab::view;
using namespace gpulab::view_test;

namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;

// A rank's report on tiny2 under CUDA_VISIBLE_DEVICES=`visible`: its weight on cuda:0,
// `used` bytes with a context on physical GPU `physical`.
RankReport rank_on(int rank, const std::string& host, const std::string& visible, int physical, std::uint64_t used) {
  RankReport r;
  r.rank = rank;
  r.host = host;
  r.report.lesson = "13";
  r.report.backend = Backend::kSim;
  r.report.node = "tiny2";
  r.report.env.cuda_visible_devices = visible;
  r.report.env_at_exit = r.report.env;
  Observation end;
  end.label = "end";
  end.gpus.push_back({physical, used, true});
  end.tensors.push_back({"weight", "cuda:0", physical});
  r.report.observations.push_back(end);
  return r;
}

}  // namespace

TEST_CASE("ranks picture: each rank's device and GPU, then a memory row per rank and GPU", "[view][picture]") {
  const PictureStyle style{false, 100, true};
  const std::string text = render_ranks_picture({rank_on(0, "", "0", 0, 600 * kMiB), rank_on(1, "", "1", 1, 300 * kMiB)}, style);
  const auto lines = lines_of(text);
  CHECK(lines.front().rfind("2 ranks, CUDA_VISIBLE_DEVICES=0", 0) == 0);
  CHECK(contains(lines.front(), "node tiny2"));
  CHECK(line_with(text, "rank 0  cuda") == "  rank 0  cuda:0 ─► GPU 0  ◄ weight");
  CHECK(line_with(text, "rank 1  CUDA") == "  rank 1  CUDA_VISIBLE_DEVICES=1  cuda:0 ─► GPU 1  ◄ weight");
  CHECK(contains(text, "each rank on each physical GPU (its last observation):"));
  const std::string gpu0 = line_with(text, "600.0 MiB");
  CHECK(gpu0.rfind("  GPU 0 ", 0) == 0);
  CHECK(contains(gpu0, " rank 0  ▓"));
  CHECK(contains(gpu0, "600.0 MiB  ctx"));
  const std::string gpu1 = line_with(text, "300.0 MiB");
  CHECK(gpu1.rfind("  GPU 1 ", 0) == 0);
  CHECK(contains(gpu1, " rank 1  ▓"));
  CHECK_FALSE(contains(text, "shared"));
  for (const auto& line : lines) CHECK(display_width(line) <= style.width);
}

TEST_CASE("ranks picture: ranks on several hosts are named by host, two on one GPU are marked shared", "[view][picture]") {
  const std::string text = render_ranks_picture(
      {rank_on(0, "a", "0", 0, 600 * kMiB), rank_on(1, "a", "0", 0, 300 * kMiB), rank_on(2, "b", "0", 0, 300 * kMiB)},
      {false, 120, true});
  CHECK(contains(lines_of(text).front(), "(each of 2 hosts)"));
  CHECK(contains(text, "  rank 2 @b  cuda:0 ─► GPU 0  ◄ weight\n"));
  CHECK(contains(line_with(text, "a GPU 0  rank 0"), "shared"));
  CHECK(contains(line_with(text, "a GPU 0  rank 1"), "shared"));
  const std::string alone = line_with(text, "b GPU 0  rank 2");
  CHECK_FALSE(contains(alone, "shared"));
  CHECK(contains(alone, "300.0 MiB  ctx"));
}

TEST_CASE("ranks picture: no rank, no picture", "[view][picture]") {
  CHECK(render_ranks_picture({}) == "no rank wrote a report: nothing to picture\n");
}
