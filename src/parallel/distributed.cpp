// gpulab::distributed over c10d: TCPStore for the rendezvous, ProcessGroupGloo (or NCCL on
// real GPUs) for the collectives. Compiles against LibTorch 1.13 (backends derive from
// c10d::ProcessGroup) and 2.x (from c10d::Backend); the calls used are the same.
#include "gpulab/distributed.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ops/cat.h>
#include <c10/util/Exception.h>
#include <torch/nn/module.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(GPULAB_BACKEND_CUDA) && defined(USE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define GPULAB_HAVE_NCCL 1
#endif
#include "backend/collectives.h"

#include <fmt/format.h>

namespace gpulab::distributed {
namespace {

#if TORCH_VERSION_MAJOR >= 2
using Engine = c10d::Backend;
#else
using Engine = c10d::ProcessGroup;
#endif

constexpr const char* kHowToStart =
    "start it with `gpulab launch --nproc-per-node N -- PROGRAM` or `torchrun --no-python --nproc-per-node N PROGRAM`, "
    "which set RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT for every process";

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0')
    throw DistributedError(fmt::format("{} is not set: this program is one process of a distributed job; {}", name,
                                       kHowToStart));
  return value;
}

int integer_variable(const char* name, long minimum, long maximum) {
  const std::string text = variable(name);
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || value < minimum || value > maximum)
    throw DistributedError(fmt::format("{}='{}' is not an integer from {} to {}", name, text, minimum, maximum));
  return static_cast<int>(value);
}

// The tensor a collective works on: the backend's view of it (backend/collectives.h).
at::Tensor collective_view(const at::Tensor& tensor) { return backend::collective_view(tensor); }

void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw PeerLost(fmt::format("{} failed: {} (another rank may have stopped)", what, e.what()));
  }
}

}  // namespace

World World::from_environment() {
  World world;
  world.world_size = integer_variable("WORLD_SIZE", 1, 1 << 20);
  world.rank = integer_variable("RANK", 0, world.world_size - 1);
  world.local_world_size = integer_variable("LOCAL_WORLD_SIZE", 1, world.world_size);
  world.local_rank = integer_variable("LOCAL_RANK", 0, world.local_world_size - 1);
  // GROUP_RANK is torchrun's; a launcher that does not set it runs one node.
  world.node_rank = std::getenv("GROUP_RANK") != nullptr ? integer_variable("GROUP_RANK", 0, world.world_size - 1) : 0;
  world.master_addr = variable("MASTER_ADDR");
  world.master_port = integer_variable("MASTER_PORT", 1, 65535);
  return world;
}

std::chrono::milliseconds timeout_from_environment() {
  const char* text = std::getenv("GPULAB_DIST_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(60);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0) || seconds > 24 * 3600)
    throw DistributedError(fmt::format("GPULAB_DIST_TIMEOUT='{}' is not a number of seconds (0 < s <= 86400)", text));
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

struct ProcessGroup::Impl {
  World world;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Engine> engine;
  std::string backend;
};

ProcessGroup::ProcessGroup(const World& world, std::chrono::milliseconds timeout) : impl_(std::make_unique<Impl>()) {
  impl_->world = world;
  const std::string where = fmt::format("{}:{}", world.master_addr, world.master_port);
  const auto seconds = std::chrono::duration<double>(timeout).count();
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(world.master_port);
    // torchrun's agent on node 0 already serves the store on MASTER_PORT and says so with
    // TORCHELASTIC_USE_AGENT_STORE=True: every rank is then a client (as Python's env://
    // rendezvous does). gpulab launch leaves the store to rank 0.
    const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    options.isServer = world.rank == 0 && !(agent_store != nullptr && std::string(agent_store) == "True");
    options.numWorkers = static_cast<std::size_t>(world.world_size);
    options.waitWorkers = true;
    options.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, options);
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format(
        "rank {} of {}: the rendezvous at MASTER_ADDR:MASTER_PORT = {} did not complete within {:g} s ({}). "
        "{}: is rank 0 running, do all ranks have the same MASTER_ADDR and MASTER_PORT, and is the port free? "
        "(GPULAB_DIST_TIMEOUT sets the limit)",
        world.rank, world.world_size, where, seconds, e.what(),
        world.rank == 0 ? "Rank 0 serves the store there and waits for every rank" : "Rank 0 serves the store there"));
  }
  try {
#if defined(GPULAB_HAVE_NCCL)
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    impl_->engine = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, world.rank, world.world_size, options);
    impl_->backend = "nccl";
#else
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // On one host, loopback; across hosts, the interface the host name resolves to.
    const bool one_host = world.master_addr == "127.0.0.1" || world.master_addr == "localhost";
    options->devices.push_back(one_host ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                        : c10d::ProcessGroupGloo::createDefaultDevice());
    impl_->engine = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, world.rank, world.world_size, options);
    impl_->backend = "gloo";
#endif
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format("rank {} of {}: could not connect to the other ranks (store at {}): {}",
                                       world.rank, world.world_size, where, e.what()));
  }
}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const { return impl_->world.rank; }
int ProcessGroup::size() const { return impl_->world.world_size; }
std::string ProcessGroup::backend() const { return impl_->backend; }

void ProcessGroup::all_reduce(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{collective_view(tensor)};
  wait(impl_->engine->allreduce(tensors), "all_reduce");
}

void ProcessGroup::broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> tensors{collective_view(tensor)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  wait(impl_->engine->broadcast(tensors, options), "broadcast");
}

void ProcessGroup::all_reduce_gradients(torch::nn::Module& module) {
  std::vector<at::Tensor> grads;
  for (const auto& parameter : module.parameters())
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  if (grads.empty()) return;
  const double scale = 1.0 / impl_->world.world_size;
  // One collective for all gradients (as DDP's buckets): a flat copy, unless there is one.
  if (grads.size() == 1 && grads.front().is_contiguous()) {
    at::Tensor view = collective_view(grads.front());
    std::vector<at::Tensor> tensors{view};
    wait(impl_->engine->allreduce(tensors), "all_reduce of the gradients");
    view.mul_(scale);
    return;
  }
  std::vector<at::Tensor> flat;
  flat.reserve(grads.size());
  for (const auto& grad : grads) flat.push_back(collective_view(grad.contiguous()).reshape({-1}));
  std::vector<at::Tensor> buffer{at::cat(flat)};
  wait(impl_->engine->allreduce(buffer), "all_reduce of the gradients");
  buffer.front().mul_(scale);
  std::int64_t offset = 0;
  for (auto& grad : grads) {
    const std::int64_t n = grad.numel();
    collective_view(grad).copy_(buffer.front().narrow(0, offset, n).view(grad.sizes()));
    offset += n;
  }
}

void ProcessGroup::broadcast_parameters(torch::nn::Module& module, int root) {
  at::NoGradGuard no_grad;
  for (auto tensor : module.parameters()) broadcast(tensor, root);
  for (auto tensor : module.buffers()) broadcast(tensor, root);
}

void ProcessGroup::barrier() { wait(impl_->engine->barrier(), "barrier"); }

std::string parameters_hash(const torch::nn::Module& module) {
  // FNV-1a over the bytes of every parameter, in named_parameters() order.
  std::uint64_t hash = 1469598103934665603ull;
  for (const auto& parameter : module.parameters()) {
    const at::Tensor bytes = parameter.detach().to(at::kCPU).contiguous();
    const auto* data = static_cast<const unsigned char*>(bytes.data_ptr());
    for (std::size_t i = 0; i < bytes.nbytes(); ++i) hash = (hash ^ data[i]) * 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace gpulab::distributed
