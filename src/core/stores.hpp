#pragma once
// Stores for outputs a kernel never reads back: on GPUs they are marked evict-first
// (CUDA st.global.cs, HIP non-temporal) so they do not push the inputs' reused lines out of the
// L2; on the host they are plain stores (non-temporal host stores were measured slower on the
// development machine, docs/PERFORMANCE.md).
#include <Kokkos_Core.hpp>

namespace kstencil {

template <bool Streaming, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_output(T* where, const T value) {
#if defined(__CUDA_ARCH__)
  if (Streaming) {
    __stcs(where, value);
    return;
  }
#elif defined(__HIP_DEVICE_COMPILE__)
  if (Streaming) {
    __builtin_nontemporal_store(value, where);
    return;
  }
#endif
  *where = value;
}

}  // namespace kstencil
