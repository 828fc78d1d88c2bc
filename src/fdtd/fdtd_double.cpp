// Instantiations for double: one file per precision so builds use two cores.
#include "fdtd/fdtd_impl.hpp"

namespace kstencil {
KSTENCIL_INSTANTIATE_FDTD(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_FDTD(double, Kokkos::LayoutRight)
}  // namespace kstencil
