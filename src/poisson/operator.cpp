// Assembly of the Poisson operator as a CrsMatrix, on the default execution space.
#include "poisson/operator.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "core/policy.hpp"

namespace kstencil {

namespace {

// Row r <-> point (i, j, k) of an unpadded field of the layout over a rank's allocated box; the
// axes slowest first. Ghost points (outside the owned box) get empty rows, so that A x is zero
// there and dot products over the whole field count owned points only.
struct RowGeometry {
  Kokkos::Array<int, 3> extent, stride, slowest_first;
  Kokkos::Array<int, 3> points;              // of the whole grid
  Kokkos::Array<int, 3> offset;              // global index of the local (0, 0, 0)
  Kokkos::Array<int, 3> owned_lo, owned_hi;  // local indices

  template <class KokkosLayout>
  static RowGeometry of(const Grid& grid) {
    const Index3 n = grid.local_extents();
    const Box owned = grid.to_local(grid.owned);
    const bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    RowGeometry g;
    for (int d = 0; d < 3; ++d) {
      g.extent[d] = static_cast<int>(n[d]);
      g.points[d] = static_cast<int>(grid.points[d]);
      g.offset[d] = static_cast<int>(grid.allocated.lo[d]);
      g.owned_lo[d] = static_cast<int>(owned.lo[d]);
      g.owned_hi[d] = static_cast<int>(owned.hi[d]);
    }
    g.stride[0] = right ? static_cast<int>(n[1] * n[2]) : 1;
    g.stride[1] = static_cast<int>(right ? n[2] : n[0]);
    g.stride[2] = right ? 1 : static_cast<int>(n[0] * n[1]);
    g.slowest_first = right ? Kokkos::Array<int, 3>{0, 1, 2} : Kokkos::Array<int, 3>{2, 1, 0};
    return g;
  }

  KOKKOS_INLINE_FUNCTION bool active(int axis) const { return points[axis] > 1; }

  // 0: ghost, 1: boundary (identity), 2: interior (the stencil).
  KOKKOS_INLINE_FUNCTION int kind(int row) const {
    bool boundary = false;
    for (int q = 0; q < 3; ++q) {
      const int axis = slowest_first[q];
      const int index = row / stride[axis];
      row -= index * stride[axis];
      if (index < owned_lo[axis] || index >= owned_hi[axis]) return 0;
      const int global = index + offset[axis];
      boundary = boundary || (active(axis) && (global == 0 || global == points[axis] - 1));
    }
    return boundary ? 1 : 2;
  }

  KOKKOS_INLINE_FUNCTION int entries(int row) const {
    const int k = kind(row);
    return k < 2 ? k : 1 + 2 * (active(0) + active(1) + active(2));
  }
};

}  // namespace

template <class T, class KokkosLayout>
PoissonMatrix<T> assemble_poisson_matrix(const Grid& grid) {
  using Matrix = PoissonMatrix<T>;
  using Offset = typename Matrix::size_type;
  using Exec = Kokkos::DefaultExecutionSpace;
  const double points = static_cast<double>(grid.allocated.size());
  if (points > std::numeric_limits<int>::max())
    throw std::length_error("the Poisson matrix has int row indices: at most " +
                            std::to_string(std::numeric_limits<int>::max()) + " points");
  const int rows = static_cast<int>(points);
  const RowGeometry geometry = RowGeometry::of<KokkosLayout>(grid);
  const PoissonCoefficients coefficients = poisson_coefficients(grid);
  const Kokkos::Array<T, 3> off_diagonal{static_cast<T>(-coefficients.c[0]),
                                         static_cast<T>(-coefficients.c[1]),
                                         static_cast<T>(-coefficients.c[2])};
  const T diagonal = static_cast<T>(coefficients.diagonal);

  const Offset interior_rows = static_cast<Offset>(owned_interior(grid).size());
  const int neighbours = 2 * (geometry.active(0) + geometry.active(1) + geometry.active(2));
  const Offset nonzeros = static_cast<Offset>(grid.owned.size()) + interior_rows * neighbours;

  typename Matrix::row_map_type::non_const_type row_map("poisson_row_map", rows + 1);
  typename Matrix::index_type::non_const_type columns("poisson_columns", nonzeros);
  typename Matrix::values_type::non_const_type values("poisson_values", nonzeros);
  Kokkos::parallel_scan(
      "kstencil::poisson::row_map", Kokkos::RangePolicy<Exec>(0, rows),
      KOKKOS_LAMBDA(const int row, Offset& before, const bool final) {
        const Offset count = geometry.entries(row);
        if (final) {
          row_map(row) = before;
          if (row == rows - 1) row_map(rows) = before + count;
        }
        before += count;
      });
  Kokkos::parallel_for(
      "kstencil::poisson::entries", Kokkos::RangePolicy<Exec>(0, rows),
      KOKKOS_LAMBDA(const int row) {
        Offset e = row_map(row);
        const int kind = geometry.kind(row);
        if (kind == 0) return;
        if (kind == 1) {
          columns(e) = row;
          values(e) = T(1);
          return;
        }
        // Ascending columns: the minus neighbours slowest axis first, the diagonal, then the plus
        // neighbours fastest axis first.
        for (int q = 0; q < 3; ++q) {
          const int axis = geometry.slowest_first[q];
          if (!geometry.active(axis)) continue;
          columns(e) = row - geometry.stride[axis];
          values(e++) = off_diagonal[axis];
        }
        columns(e) = row;
        values(e++) = diagonal;
        for (int q = 2; q >= 0; --q) {
          const int axis = geometry.slowest_first[q];
          if (!geometry.active(axis)) continue;
          columns(e) = row + geometry.stride[axis];
          values(e++) = off_diagonal[axis];
        }
      });
  return Matrix("poisson_operator", rows, rows, nonzeros, values, row_map, columns);
}

template <class T, class KokkosLayout>
Field<T, KokkosLayout> poisson_rhs_vector(const Grid& grid,
                                          const PoissonFields<T, KokkosLayout>& fields) {
  // Over the owned points; ghost points stay 0, like the rows of A there.
  auto b = allocate_field<T, KokkosLayout>("b", grid);
  const auto u = fields.u;
  const auto rhs = fields.rhs;
  const bool has_rhs = fields.has_rhs;
  const Box o = grid.to_local(grid.owned);
  const Kokkos::Array<int, 3> extent{static_cast<int>(grid.points[0]),
                                     static_cast<int>(grid.points[1]),
                                     static_cast<int>(grid.points[2])};
  const Kokkos::Array<int, 3> offset{static_cast<int>(grid.allocated.lo[0]),
                                     static_cast<int>(grid.allocated.lo[1]),
                                     static_cast<int>(grid.allocated.lo[2])};
  Kokkos::parallel_for(
      "kstencil::poisson::rhs_vector",
      FieldPolicy3<KokkosLayout>({int(o.lo[0]), int(o.lo[1]), int(o.lo[2])},
                                 {int(o.hi[0]), int(o.hi[1]), int(o.hi[2])}),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const int p[3] = {i + offset[0], j + offset[1], k + offset[2]};
        bool edge = false;
        for (int d = 0; d < 3; ++d)
          edge = edge || (extent[d] > 1 && (p[d] == 0 || p[d] == extent[d] - 1));
        b(i, j, k) = edge ? u(i, j, k) : (has_rhs ? -rhs(i, j, k) : T(0));
      });
  return b;
}

#define KSTENCIL_INSTANTIATE_POISSON_OPERATOR(T, L)                     \
  template PoissonMatrix<T> assemble_poisson_matrix<T, L>(const Grid&); \
  template Field<T, L> poisson_rhs_vector<T, L>(const Grid&, const PoissonFields<T, L>&);
KSTENCIL_INSTANTIATE_POISSON_OPERATOR(double, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_POISSON_OPERATOR(double, Kokkos::LayoutRight)
KSTENCIL_INSTANTIATE_POISSON_OPERATOR(float, Kokkos::LayoutLeft)
KSTENCIL_INSTANTIATE_POISSON_OPERATOR(float, Kokkos::LayoutRight)

}  // namespace kstencil
