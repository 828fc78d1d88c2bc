#pragma once
// Device buffers that another process of this node writes into directly: the face exchange
// between GPU ranks of one node as device-to-device copies (CUDA IPC: over NVLink or PCIe peer
// to peer, no host staging). The one interface to the backend's IPC calls; where the backend has
// none (hosts, HIP), available() is false and faces go through MPI.
#include <array>
#include <cstddef>

namespace kstencil {
namespace peer {

// A buffer's handle as it travels between processes (cudaIpcMemHandle_t is 64 bytes).
using Handle = std::array<char, 64>;

bool available();

// Device memory this process allocates and exports: the base of its own allocation, as IPC needs.
class Buffer {
 public:
  explicit Buffer(std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  Handle handle() const;

 private:
  void* data_ = nullptr;
};

// Another process's Buffer, mapped into this one (peer access enabled as needed).
class Mapping {
 public:
  explicit Mapping(const Handle& handle);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

}  // namespace peer
}  // namespace kstencil
