// Instantiations for double: one file per precision so builds use two cores.
#include "cg/cg_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_CG(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_CG(double, Kokkos::LayoutRight)
}  // namespace kstencil
