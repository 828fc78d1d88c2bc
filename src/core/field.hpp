#pragma once
// Field storage: 3D Views over a grid's allocated box, in the layout the run chose.
#include <Kokkos_Core.hpp>
#include <string>

#include "core/grid.hpp"
#include "core/huge_pages.hpp"

namespace kstencil {

template <class T, class KokkosLayout>
using Field = Kokkos::View<T***, KokkosLayout>;

// A zero-filled field over the grid's local extents, on huge pages where the host offers them.
template <class T, class KokkosLayout>
Field<T, KokkosLayout> allocate_field(const std::string& label, const Grid& grid) {
  const Index3 n = grid.local_extents();
  const auto field = allocate_on_huge_pages<Field<T, KokkosLayout>>(label, n[0], n[1], n[2]);
  Kokkos::deep_copy(field, T(0));
  return field;
}

// The values of `field` over `global_box` copied to host memory, x fastest (the order output and
// reference checks use), whatever the field's layout and memory space.
template <class T, class KokkosLayout>
std::vector<T> to_host_x_fastest(const Field<T, KokkosLayout>& field, const Grid& grid,
                                 const Box& global_box) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  const Box b = grid.to_local(global_box);
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(b.size()));
  for (Index k = b.lo[2]; k < b.hi[2]; ++k)
    for (Index j = b.lo[1]; j < b.hi[1]; ++j)
      for (Index i = b.lo[0]; i < b.hi[0]; ++i) out.push_back(host(i, j, k));
  return out;
}

}  // namespace kstencil
