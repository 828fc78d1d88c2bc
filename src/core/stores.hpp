#pragma once
// Stores for outputs a kernel never reads back: on GPUs marked evict-first (CUDA st.global.cs,
// HIP non-temporal) so they do not push the inputs' reused lines out of the L2; plain elsewhere
// (host lines stream through arch/streams.hpp).
#include <Kokkos_Core.hpp>

namespace kstencil {

// What a host row stores at the points just before and after it: nothing; zeros (the Laplacian's
// zero_row_ends); or the input's values there where that completes the row's first and last cache
// lines, so that every line streams whole (for updates that leave those points as they are:
// Jacobi's boundary, points no part of the update writes).
enum class RowEnds { none, zero, input };

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
