#pragma once
// Transparent huge pages for large host allocations.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>
#include <type_traits>

namespace kstencil {

// Asks the kernel to back the whole 2 MiB pages within [data, data + bytes) with transparent huge
// pages (Linux madvise MADV_HUGEPAGE); call it before the memory is first touched. Where THP is
// set to "madvise" (Debian's and Ubuntu's default) host memory otherwise comes in 4 KiB pages,
// and a stencil keeping ten streams going misses the TLB at every page: on the 2-core Xeon
// development machine 2 MiB pages moved the Laplacian's host default 5-14% and the same-run copy
// 1-11% faster (384^3 and 512^3, both layouts, 11 alternating pairs; docs/PERFORMANCE.md, host
// section). Nothing elsewhere, or where the kernel declines (THP "never").
void advise_huge_pages(void* data, std::size_t bytes);

// A view of `extents` in the default memory space, not initialised; where that is host memory it
// is advised to huge pages, so the caller's first touch (a fill) gets them.
template <class View, class... Extents>
View allocate_on_huge_pages(const std::string& label, const Extents... extents) {
  View view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  if constexpr (std::is_same<typename View::memory_space, Kokkos::HostSpace>::value)
    advise_huge_pages(view.data(), view.span() * sizeof(typename View::value_type));
  return view;
}

}  // namespace kstencil
