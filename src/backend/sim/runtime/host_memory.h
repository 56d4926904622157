// Host memory that stands in for device memory. Pages are reserved lazily
// (MAP_NORESERVE), so an untouched 40 GiB tensor on an 80 GiB simulated GPU costs the
// host nothing while the node's accounting still counts its full size.
#pragma once

#include <cstddef>

namespace gpulab::sim {

/// nullptr when the host refuses the mapping.
void* map_host_memory(std::size_t bytes);
void unmap_host_memory(void* ptr, std::size_t bytes);

}  // namespace gpulab::sim
