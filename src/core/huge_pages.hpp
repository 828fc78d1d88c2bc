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

// Whether views in MemSpace are ordinary host memory, where advise_huge_pages applies.
template <class MemSpace>
constexpr bool plain_host_memory() {
  return std::is_same<MemSpace, Kokkos::HostSpace>::value;
}

// A view of `extents` in the default memory space, zero-filled, its memory advised to huge pages
// first where it is plain host memory.
template <class View, class... Extents>
View allocate_on_huge_pages(const std::string& label, const Extents... extents) {
  View view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  if constexpr (plain_host_memory<typename View::memory_space>())
    advise_huge_pages(view.data(), view.span() * sizeof(typename View::value_type));
  Kokkos::deep_copy(view, typename View::value_type(0));
  return view;
}

}  // namespace kstencil
