// Instantiations for float: one file per precision so builds use two cores.
#include "fdtd/fdtd_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_FDTD(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_FDTD(float, Kokkos::LayoutRight)
}  // namespace kstencil
