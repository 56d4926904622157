// The memory model: what a process uses on a physical GPU is its context plus what
// PyTorch's caching allocator has reserved there (what nvidia-smi shows); memory_allocated
// counts only live tensors; freed blocks stay reserved until empty_cache (docs/reference.md "Contexts and memory").
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "child.h"
#include "memory_support.h"

using namespace gpulab::test;

namespace {

std::string alloc(const std::string& name, int index, std::uint64_t bytes) {
  return "alloc:" + name + ":" + std::to_string(index) + ":" + std::to_string(bytes);
}

std::uint64_t fact_bytes(const LessonRun& run, const std::string& key) { return run.fact(key).get<std::uint64_t>(); }

// Resident host memory of a process (VmRSS), in bytes.
std::uint64_t resident_bytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  FAIL("no VmRSS in /proc/" << pid << "/status");
  return 0;
}

}  // namespace

TEST_CASE("memory_allocated counts live tensors, memory_reserved the allocator's segments, and smi shows the "
          "context plus the reserved memory until empty_cache",
          "[memory][allocator]") {
  constexpr int kIndex = 1;  // no CUDA_VISIBLE_DEVICES: cuda:1 is physical GPU 1
  const std::uint64_t context = node().gpus[kIndex].context_bytes;
  // One request from each of PyTorch's size classes, then one that a cached block can hold.
  const std::uint64_t small = 1000;               // small pool: a 2 MiB segment
  const std::uint64_t medium = 3 * kMiB + 1;      // 1-10 MiB: a 20 MiB segment, split
  const std::uint64_t large = 25 * kMiB + 7;      // its own segment, rounded to 2 MiB, not split
  const std::uint64_t reuse = 5 * kMiB;           // fits in what the 20 MiB segment has left
  const auto run = probe({"steps", alloc("small", kIndex, small), alloc("medium", kIndex, medium),
                          alloc("large", kIndex, large), "observe:three tensors", alloc("reuse", kIndex, reuse),
                          "observe:four tensors", "free:medium", "free:large", "free:reuse", "observe:freed",
                          "empty_cache", "observe:emptied"});
  const std::string on = "." + std::to_string(kIndex);

  const std::uint64_t reserved = segment_bytes(small) + segment_bytes(medium) + segment_bytes(large);
  {
    INFO("three tensors: rounded blocks allocated, three segments reserved; smi: context + reserved");
    CHECK(fact_bytes(run, "three tensors.allocated" + on) ==
          fresh_block_bytes(small) + fresh_block_bytes(medium) + fresh_block_bytes(large));
    CHECK(fact_bytes(run, "three tensors.reserved" + on) == reserved);
    CHECK(run.usage("three tensors") == std::map<int, std::uint64_t>{{kIndex, context + reserved}});
  }
  {
    INFO("the large tensor's block is its whole segment: the rest was too small to split off");
    CHECK(fresh_block_bytes(large) == segment_bytes(large));
    CHECK(fresh_block_bytes(large) > block_bytes(large));
  }
  {
    INFO("a 5 MiB tensor reuses the 20 MiB segment's free rest: allocated grows, reserved does not");
    const std::uint64_t rest = segment_bytes(medium) - fresh_block_bytes(medium);
    REQUIRE(block_bytes(reuse) < rest - kMiB);  // it fits, and what remains is split off again
    CHECK(fact_bytes(run, "four tensors.allocated" + on) ==
          fact_bytes(run, "three tensors.allocated" + on) + block_bytes(reuse));
    CHECK(fact_bytes(run, "four tensors.reserved" + on) == reserved);
    CHECK(run.usage("four tensors") == run.usage("three tensors"));
  }
  {
    INFO("freed tensors leave memory_allocated but stay reserved, and nvidia-smi still shows them");
    CHECK(fact_bytes(run, "freed.allocated" + on) == fresh_block_bytes(small));
    CHECK(fact_bytes(run, "freed.reserved" + on) == reserved);
    CHECK(run.usage("freed") == run.usage("three tensors"));
  }
  {
    INFO("empty_cache returns every entirely free segment; the live small tensor keeps its own; the context stays");
    CHECK(fact_bytes(run, "emptied.allocated" + on) == fresh_block_bytes(small));
    CHECK(fact_bytes(run, "emptied.reserved" + on) == segment_bytes(small));
    CHECK(run.usage("emptied") == std::map<int, std::uint64_t>{{kIndex, context + segment_bytes(small)}});
    CHECK(run.contexts("emptied") == std::vector<int>{kIndex});
  }
  {
    INFO("memory_allocated() without an index is the current device's: cuda:0, untouched");
    for (const char* label : {"three tensors", "freed", "emptied"}) {
      CHECK(fact_bytes(run, std::string(label) + ".allocated.current") == 0);
      CHECK(fact_bytes(run, std::string(label) + ".reserved.0") == 0);
    }
  }
}

TEST_CASE("an untouched 40 GiB tensor on an 80 GiB GPU is counted in full but costs the host almost nothing",
          "[memory][allocator]") {
  const std::uint64_t tensor = 40 * kGiB;
  const gpulab::Gpu gpu = node().gpus[0];
  REQUIRE(gpu.capacity_bytes >= gpu.context_bytes + tensor);  // it fits the simulated GPU
  const std::string state = fresh_state_dir();
  Child holder({bin("memory-hold"), "cuda:0", std::to_string(tensor / kMiB)}, state);
  REQUIRE(holder.read_line() == "ready");

  const auto view = smi(state);
  CHECK(view.usage(0, holder.pid()) == gpu.context_bytes + segment_bytes(tensor));
  CHECK(view.gpus_of(holder.pid()) == std::vector<int>{0});
  INFO("the host backs device memory only when it is written");
  CHECK(resident_bytes(holder.pid()) < tensor / 16);
}
