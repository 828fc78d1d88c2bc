// Instantiations for double: one file per precision so builds use two cores.
#include "jacobi/jacobi_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_JACOBI(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_JACOBI(double, Kokkos::LayoutRight)
KSTENCIL_INSTANTIATE_JACOBI_REFERENCE(double)
}  // namespace kstencil
