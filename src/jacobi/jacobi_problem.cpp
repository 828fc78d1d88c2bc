// Grid geometry of the Jacobi problem and the norm strategies' names.
#include <stdexcept>

#include "jacobi/jacobi.hpp"

namespace kstencil {

NormStrategy parse_norm_strategy(const std::string& word) {
  if (word == "reduce") return NormStrategy::reduce;
  if (word == "reduce-range") return NormStrategy::reduce_range;
  if (word == "atomic") return NormStrategy::atomic;
  throw std::invalid_argument("unknown norm strategy " + word);
}

std::string to_string(NormStrategy strategy) {
  switch (strategy) {
    case NormStrategy::reduce:
      return "reduce";
    case NormStrategy::reduce_range:
      return "reduce-range";
    case NormStrategy::atomic:
      return "atomic";
  }
  return "?";
}

bool is_collapsed(const Grid& grid, int axis) {
  return grid.points[axis] == 1;
}

bool is_boundary(const Grid& grid, const Index3& p) {
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(grid, d) && (p[d] == 0 || p[d] == grid.points[d] - 1)) return true;
  return false;
}

Box jacobi_update_box(const Grid& grid) {
  Box box = grid.global();
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(grid, d)) {
      box.lo[d] = 1;
      box.hi[d] = grid.points[d] - 1;
    }
  return box.intersect(grid.owned);
}

}  // namespace kstencil
