#pragma once
// The Poisson problem's operator A (poisson.hpp) assembled as a Kokkos Kernels CrsMatrix, and its
// right-hand side b. Row r is the point stored at offset r of a field of the run's layout, so
// KokkosSparse::spmv applies A to flat(field) directly, in either layout.
// Kokkos Kernels 3.4 headers need Kokkos_Core.hpp before them.
// clang-format off
#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
// clang-format on

#include "poisson/poisson.hpp"

namespace kstencil {

template <class T>
using PoissonMatrix = KokkosSparse::CrsMatrix<T, int, Kokkos::DefaultExecutionSpace::device_type>;

// Assembled on the default execution space over the grid's allocated box (one rank: the whole
// grid); columns in each row ascending. Rows of owned points read their neighbours, ghost points
// included; rows of ghost points are empty.
template <class T, class KokkosLayout>
PoissonMatrix<T> assemble_poisson_matrix(const Grid& grid);

// b: g on the boundary (taken from fields.u), -f inside, 0 at ghost points.
template <class T, class KokkosLayout>
Field<T, KokkosLayout> poisson_rhs_vector(const Grid& grid,
                                          const PoissonFields<T, KokkosLayout>& fields);

}  // namespace kstencil
