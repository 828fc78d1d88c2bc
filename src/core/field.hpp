#pragma once
// Field storage: 3D Views over a grid's allocated box, in the layout the run chose.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/huge_pages.hpp"

namespace kstencil {

template <class T, class KokkosLayout>
using Field = Kokkos::View<T***, KokkosLayout>;

// A zero-filled field of `n` points per axis, on huge pages where the host offers them.
template <class T, class KokkosLayout>
Field<T, KokkosLayout> allocate_field(const std::string& label, const Index3& n) {
  const auto field = allocate_on_huge_pages<Field<T, KokkosLayout>>(label, n[0], n[1], n[2]);
  Kokkos::deep_copy(field, T(0));
  return field;
}
// ... over the grid's local extents.
template <class T, class KokkosLayout>
Field<T, KokkosLayout> allocate_field(const std::string& label, const Grid& grid) {
  return allocate_field<T, KokkosLayout>(label, grid.local_extents());
}

// The values of `host` (a host copy of a field over the grid's allocated box) over `global_box`
// into `out`, x fastest (the order output and reference checks use), whatever the layout.
template <class HostView>
void copy_x_fastest(const HostView& host, const Grid& grid, const Box& global_box,
                    typename HostView::non_const_value_type* const out) {
  const Box b = grid.to_local(global_box);
  const Index3 n = b.extents();
  // In tiles of x and z, rows of y on the host's threads: reads along either layout's contiguous
  // axis and writes along x both come in runs, where a point-by-point copy of a layout-right field
  // would touch a new cache line for every value.
  constexpr Index tile = 32;
  const Index z_tiles = (n[2] + tile - 1) / tile;
  Kokkos::parallel_for(
      "kstencil::copy_x_fastest",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(
          0, n[1] * z_tiles),
      [&](const Index q) {
        const Index j = q % n[1], k0 = q / n[1] * tile, k1 = std::min(k0 + tile, n[2]);
        for (Index i0 = 0; i0 < n[0]; i0 += tile)
          for (Index k = k0; k < k1; ++k)
            for (Index i = i0; i < std::min(i0 + tile, n[0]); ++i)
              out[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))] =
                  host(b.lo[0] + i, b.lo[1] + j, b.lo[2] + k);
      });
}

// The values of `field` over `global_box` copied to host memory, x fastest, whatever the field's
// layout and memory space.
template <class T, class KokkosLayout>
std::vector<T> to_host_x_fastest(const Field<T, KokkosLayout>& field, const Grid& grid,
                                 const Box& global_box) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  std::vector<T> out(static_cast<std::size_t>(global_box.size()));
  copy_x_fastest(host, grid, global_box, out.data());
  return out;
}

// The values of `field` over `global_box` (within the grid's allocated box) in host memory, x
// fastest: the box alone is gathered on the device and crosses to the host, for checks of small
// parts of large fields.
template <class T, class KokkosLayout>
std::vector<T> box_to_host_x_fastest(const Field<T, KokkosLayout>& field, const Grid& grid,
                                     const Box& global_box) {
  const Box b = grid.to_local(global_box);
  const Index3 n = b.extents();
  std::vector<T> out(static_cast<std::size_t>(b.size()));
  if (out.empty()) return out;
  using XFastest =
      Kokkos::View<T***, Kokkos::LayoutLeft, typename Field<T, KokkosLayout>::memory_space>;
  const XFastest part(Kokkos::view_alloc(Kokkos::WithoutInitializing, "box"), n[0], n[1], n[2]);
  Kokkos::deep_copy(
      part, Kokkos::subview(field, std::make_pair(b.lo[0], b.hi[0]),
                            std::make_pair(b.lo[1], b.hi[1]), std::make_pair(b.lo[2], b.hi[2])));
  Kokkos::deep_copy(
      Kokkos::View<T***, Kokkos::LayoutLeft, Kokkos::HostSpace,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(), n[0], n[1], n[2]),
      part);
  return out;
}

// Host memory a device copies to and from at the link's full speed: pinned on GPUs (halo faces
// staged for MPI, the norms' partial sums).
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using StagingSpace = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using StagingSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

// The inverse of to_host_x_fastest: `values` (x fastest over `global_box`) into `field`, whose
// other values stay as they are.
template <class T, class KokkosLayout>
void from_host_x_fastest(const Field<T, KokkosLayout>& field, const Grid& grid,
                         const Box& global_box, const std::vector<T>& values) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  const Box b = grid.to_local(global_box);
  const Index3 n = b.extents();
  Kokkos::parallel_for(
      "kstencil::from_host_x_fastest",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(0, n[2]),
      [&](const Index k) {
        for (Index j = 0; j < n[1]; ++j)
          for (Index i = 0; i < n[0]; ++i)
            host(b.lo[0] + i, b.lo[1] + j, b.lo[2] + k) =
                values[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))];
      });
  Kokkos::deep_copy(field, host);
}

}  // namespace kstencil
