#include "core/peer_memory.hpp"

#include <Kokkos_Core.hpp>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kstencil {
namespace peer {

#if defined(KOKKOS_ENABLE_CUDA)
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(Handle), "IPC handle size");

namespace {
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
}  // namespace

bool available() {
  return true;
}

Buffer::Buffer(std::size_t bytes) {
  check(cudaMalloc(&data_, bytes > 0 ? bytes : 1), "cannot allocate a peer halo buffer");
}

Buffer::~Buffer() {
  cudaFree(data_);
}

Handle Buffer::handle() const {
  cudaIpcMemHandle_t h;
  check(cudaIpcGetMemHandle(&h, data_), "cannot export a peer halo buffer");
  Handle out;
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

Mapping::Mapping(const Handle& handle) {
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle.data(), sizeof h);
  check(cudaIpcOpenMemHandle(&data_, h, cudaIpcMemLazyEnablePeerAccess),
        "cannot map a neighbour's halo buffer");
}

Mapping::~Mapping() {
  cudaIpcCloseMemHandle(data_);
}

#else

bool available() {
  return false;
}

Buffer::Buffer(std::size_t) {
  throw std::logic_error("peer halo buffers need a CUDA build");
}
Buffer::~Buffer() = default;
Handle Buffer::handle() const {
  return {};
}
Mapping::Mapping(const Handle&) {
  throw std::logic_error("peer halo buffers need a CUDA build");
}
Mapping::~Mapping() = default;

#endif

}  // namespace peer
}  // namespace kstencil
