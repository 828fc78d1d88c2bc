// Instantiations for float: one file per precision so builds use two cores.
#include "cg/cg_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_CG(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_CG(float, Kokkos::LayoutRight)
}  // namespace kstencil
