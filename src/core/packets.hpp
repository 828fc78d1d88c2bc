#pragma once
// Sixteen bytes of neighbouring values along the contiguous axis in one access (four floats, two
// doubles): the team Jacobi kernel's rows and the blocked kernel's runs. On GPUs a 128-bit load
// through the read-only path and an evict-first store; elsewhere plain accesses. The address must
// be aligned to 16 bytes.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "core/pairs.hpp"
#include "core/stores.hpp"

namespace kstencil {

template <class T>
inline constexpr int packet_values = static_cast<int>(16 / sizeof(T));

// N neighbouring values of the contiguous axis.
template <class T, int N>
struct Run {
  T v[N];
};

template <class T>
using Packet = Run<T, packet_values<T>>;

template <class T>
KOKKOS_FORCEINLINE_FUNCTION Packet<T> load_packet(const T* const where) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(where));
    return {{v.x, v.y, v.z, v.w}};
  }
#endif
  if constexpr (packet_values<T> == 2) {
    const Pair<T> p = load_pair(where);
    return {{p.first, p.second}};
  } else {
    Packet<T> p;
    for (int q = 0; q < packet_values<T>; ++q) p.v[q] = where[q];
    return p;
  }
}

template <bool Streaming, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_packet(T* const where, const Packet<T>& p) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    const float4 v = make_float4(p.v[0], p.v[1], p.v[2], p.v[3]);
    if (Streaming)
      __stcs(reinterpret_cast<float4*>(where), v);
    else
      *reinterpret_cast<float4*>(where) = v;
    return;
  }
#endif
  if constexpr (packet_values<T> == 2) {
    store_pair<Streaming>(where, p.v[0], p.v[1]);
  } else {
    for (int q = 0; q < packet_values<T>; ++q) store_output<Streaming>(where + q, p.v[q]);
  }
}

// A run of N = 2 values (core/pairs.hpp) or of a packet's values in one access; the address must be
// aligned to the run's bytes.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION Run<T, N> load_run(const T* const where) {
  static_assert(N == 2 || N == packet_values<T>, "runs of 2 values or of a packet");
  if constexpr (N == packet_values<T>) {
    return load_packet(where);
  } else {
    const Pair<T> p = load_pair(where);
    return {{p.first, p.second}};
  }
}

template <bool Streaming, class T, int N>
KOKKOS_FORCEINLINE_FUNCTION void store_run(T* const where, const Run<T, N>& run) {
  static_assert(N == 2 || N == packet_values<T>, "runs of 2 values or of a packet");
  if constexpr (N == packet_values<T>)
    store_packet<Streaming>(where, run);
  else
    store_pair<Streaming>(where, run.v[0], run.v[1]);
}

}  // namespace kstencil
