// Instantiations for double: one file per precision so builds use two cores.
#include "laplacian/verify_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_LAPLACIAN(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_LAPLACIAN(double, Kokkos::LayoutRight)
KSTENCIL_INSTANTIATE_LAPLACIAN_VERIFY(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_LAPLACIAN_VERIFY(double, Kokkos::LayoutRight)
}  // namespace kstencil
