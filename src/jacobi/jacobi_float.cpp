// Instantiations for float: one file per precision so builds use two cores.
#include "jacobi/jacobi_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_JACOBI(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_JACOBI(float, Kokkos::LayoutRight)
KSTENCIL_INSTANTIATE_JACOBI_REFERENCE(float)
}  // namespace kstencil
