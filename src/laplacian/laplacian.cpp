#include "laplacian/laplacian.hpp"

#include <stdexcept>

namespace kstencil {

TestField parse_test_field(const std::string& word) {
  if (word == "quadratic") return TestField::quadratic;
  if (word == "sine") return TestField::sine;
  throw std::invalid_argument("unknown test field " + word);
}

double analytic_laplacian(const TestFieldSpec& spec, Index i, Index j, Index k) {
  if (spec.kind == TestField::quadratic) return quadratic_laplacian;
  constexpr double pi = 3.14159265358979323846;
  double wave = 0;
  for (int d = 0; d < 3; ++d) {
    const double length = static_cast<double>(spec.points[d] - 1) * spec.spacing[d];
    wave += pi * pi / (length * length);
  }
  return -wave * test_field_value(spec, i, j, k);
}

}  // namespace kstencil
