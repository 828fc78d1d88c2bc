// Instantiations for float: one file per precision so builds use two cores.
#include "laplacian/verify_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_LAPLACIAN(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_LAPLACIAN(float, Kokkos::LayoutRight)
KSTENCIL_INSTANTIATE_LAPLACIAN_VERIFY(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_LAPLACIAN_VERIFY(float, Kokkos::LayoutRight)
}  // namespace kstencil
