#pragma once
// Stores for outputs a kernel never reads back: on GPUs marked evict-first (CUDA st.global.cs,
// HIP non-temporal) so they do not push the inputs' reused lines out of the L2; plain elsewhere
// (host lines stream through arch/streams.hpp).
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
