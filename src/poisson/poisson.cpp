// Grid geometry and coefficients of the Poisson problem.
#include "poisson/poisson.hpp"

namespace kstencil {

bool is_collapsed(const Grid& grid, int axis) {
  return grid.points[axis] == 1;
}

bool is_boundary(const Grid& grid, const Index3& p) {
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(grid, d) && (p[d] == 0 || p[d] == grid.points[d] - 1)) return true;
  return false;
}

Box interior_box(const Grid& grid) {
  Box box = grid.global();
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(grid, d)) {
      box.lo[d] = 1;
      box.hi[d] = grid.points[d] - 1;
    }
  return box;
}

double point_count(const Grid& grid) {
  return static_cast<double>(grid.points[0]) * grid.points[1] * grid.points[2];
}

PoissonCoefficients poisson_coefficients(const Grid& grid) {
  PoissonCoefficients out{{0, 0, 0}, 0};
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(grid, d)) {
      out.c[d] = 1 / (grid.spacing[d] * grid.spacing[d]);
      out.diagonal += 2 / (grid.spacing[d] * grid.spacing[d]);
    }
  return out;
}

}  // namespace kstencil
