#pragma once
// What the Laplacian kernels share: their views of the fields and indexing by axis role.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "laplacian/stencil.hpp"

namespace kstencil {
namespace laplacian_kernels {

// u and f never alias, so loads may move past stores (without this a work item's next loads wait
// for its previous store), and u goes through the read-only cache on GPUs. Kokkos 4's CUDA
// backend matches two data handles for Restrict | RandomAccess on a const view: there
// RandomAccess alone.
#if KOKKOS_VERSION >= 40000 && defined(KOKKOS_ENABLE_CUDA)
using InputTraits = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
#else
using InputTraits = Kokkos::MemoryTraits<Kokkos::Restrict | Kokkos::RandomAccess>;
#endif
template <class T, class KokkosLayout>
using StencilInput = Kokkos::View<const T***, KokkosLayout, InputTraits>;
template <class T, class KokkosLayout>
using StencilOutput = Kokkos::View<T***, KokkosLayout, Kokkos::MemoryTraits<Kokkos::Restrict>>;

// v at slowest-axis index s, y index j, contiguous index c.
template <class View>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) at_slow_y_contiguous(const View& v, const int s,
                                                                const int j, const int c) {
  return x_is_slowest<typename View::array_layout>() ? v(s, j, c) : v(c, j, s);
}

// Calls body(std::integral_constant<int, V>) for the V of Values equal to `value`; false if none
// is.
template <int... Values, class Body>
bool dispatch_constant(std::int64_t value, Body&& body) {
  return ((value == Values && (body(std::integral_constant<int, Values>{}), true)) || ...);
}

// Calls body(std::true_type) for evict-first stores, body(std::false_type) for plain ones.
template <class Body>
void dispatch_store_kind(bool streaming_stores, Body&& body) {
  if (streaming_stores)
    body(std::true_type{});
  else
    body(std::false_type{});
}

// Calls body(std::integral_constant<int, MS>) for the runtime points per work item along the
// slowest axis.
template <class Body>
void dispatch_slow_points_per_item(int m_slow, Body&& body) {
  if (!dispatch_constant<1, 2, 4>(m_slow, body))
    throw std::invalid_argument(
        "points per work item along the slowest axis (m_slow) must be 1, 2 or 4");
}

// Calls body(std::integral_constant<int, MC>) for the runtime points per work item along the
// contiguous axis.
template <class Body>
void dispatch_contiguous_points_per_item(int m_contiguous, Body&& body) {
  if (!dispatch_constant<1, 2, 4>(m_contiguous, body))
    throw std::invalid_argument(
        "points per work item along the contiguous axis (m_contiguous) must be 1, 2 or 4");
}

// Calls body(std::integral_constant<int, M>) for the runtime points per work item.
template <class Body>
void dispatch_points_per_item(int m, Body&& body) {
  if (!dispatch_constant<1, 2, 4, 8, 16>(m, body))
    throw std::invalid_argument("points per work item (m) must be 1, 2, 4, 8 or 16");
}

}  // namespace laplacian_kernels
}  // namespace kstencil
