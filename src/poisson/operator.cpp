// Assembly of the Poisson operator as a CrsMatrix, on the default execution space.
#include "poisson/operator.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace kstencil {

namespace {

// Row r <-> point (i, j, k) of an unpadded field of the layout; the axes slowest first.
struct RowGeometry {
  Kokkos::Array<int, 3> extent, stride, slowest_first;

  template <class KokkosLayout>
  static RowGeometry of(const Grid& grid) {
    const Index3& n = grid.points;
    const bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    RowGeometry g;
    for (int d = 0; d < 3; ++d) g.extent[d] = static_cast<int>(n[d]);
    g.stride[0] = right ? static_cast<int>(n[1] * n[2]) : 1;
    g.stride[1] = static_cast<int>(right ? n[2] : n[0]);
    g.stride[2] = right ? 1 : static_cast<int>(n[0] * n[1]);
    g.slowest_first = right ? Kokkos::Array<int, 3>{0, 1, 2} : Kokkos::Array<int, 3>{2, 1, 0};
    return g;
  }

  KOKKOS_INLINE_FUNCTION bool active(int axis) const { return extent[axis] > 1; }

  KOKKOS_INLINE_FUNCTION bool boundary_row(int row) const {
    for (int q = 0; q < 3; ++q) {
      const int axis = slowest_first[q];
      const int index = row / stride[axis];
      row -= index * stride[axis];
      if (active(axis) && (index == 0 || index == extent[axis] - 1)) return true;
    }
    return false;
  }

  KOKKOS_INLINE_FUNCTION int entries(int row) const {
    if (boundary_row(row)) return 1;
    return 1 + 2 * (active(0) + active(1) + active(2));
  }
};

}  // namespace

template <class T, class KokkosLayout>
PoissonMatrix<T> assemble_poisson_matrix(const Grid& grid) {
  using Matrix = PoissonMatrix<T>;
  using Offset = typename Matrix::size_type;
  using Exec = Kokkos::DefaultExecutionSpace;
  const double points = point_count(grid);
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

  const Box interior = interior_box(grid);
  const Offset interior_rows = static_cast<Offset>(interior.size());
  const int neighbours = 2 * (geometry.active(0) + geometry.active(1) + geometry.active(2));
  const Offset nonzeros = static_cast<Offset>(rows) + interior_rows * neighbours;

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
        if (geometry.boundary_row(row)) {
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
  const Index3& n = grid.points;
  auto b = allocate_field<T, KokkosLayout>("b", grid);
  const auto u = fields.u;
  const auto rhs = fields.rhs;
  const bool has_rhs = fields.has_rhs;
  const Kokkos::Array<int, 3> extent{static_cast<int>(n[0]), static_cast<int>(n[1]),
                                     static_cast<int>(n[2])};
  Kokkos::parallel_for(
      "kstencil::poisson::rhs_vector",
      Kokkos::MDRangePolicy<Kokkos::Rank<3>>({0, 0, 0}, {n[0], n[1], n[2]}),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const int p[3] = {i, j, k};
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
