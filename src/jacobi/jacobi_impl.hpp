#pragma once
// JacobiSolver definitions; included by one file per precision.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/policy.hpp"
#include "jacobi/jacobi.hpp"

namespace kstencil {
namespace jacobi_detail {

// The update of one point; both strategies and the plain iteration share it, so every variant
// computes the same values.
template <class T, class KokkosLayout>
struct Update {
  Field<const T, KokkosLayout> old_values;
  Field<T, KokkosLayout> new_values;
  Field<const T, KokkosLayout> rhs;
  T cx, cy, cz, inverse_diagonal;
  bool use_y, use_z, use_rhs;

  KOKKOS_FORCEINLINE_FUNCTION double operator()(const int i, const int j, const int k) const {
    T sum = (old_values(i - 1, j, k) + old_values(i + 1, j, k)) * cx;
    if (use_y) sum = sum + (old_values(i, j - 1, k) + old_values(i, j + 1, k)) * cy;
    if (use_z) sum = sum + (old_values(i, j, k - 1) + old_values(i, j, k + 1)) * cz;
    if (use_rhs) sum = sum - rhs(i, j, k);
    const T value = sum * inverse_diagonal;
    new_values(i, j, k) = value;
    const double change = static_cast<double>(value) - static_cast<double>(old_values(i, j, k));
    return change * change;
  }
};

template <class T, class KokkosLayout, bool Reversed>
struct PlainLoop {
  Update<T, KokkosLayout> update;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    update(Reversed ? p2 : p0, j, Reversed ? p0 : p2);
  }
};

template <class T, class KokkosLayout, bool Reversed>
struct ReduceLoop {
  Update<T, KokkosLayout> update;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2,
                                         double& sum) const {
    sum += update(Reversed ? p2 : p0, j, Reversed ? p0 : p2);
  }
};

template <class T, class KokkosLayout, bool Reversed>
struct AtomicLoop {
  Update<T, KokkosLayout> update;
  Kokkos::View<double> total;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    Kokkos::atomic_add(&total(), update(Reversed ? p2 : p0, j, Reversed ? p0 : p2));
  }
};

// The update over a flat index, the contiguous axis fastest (x for LayoutLeft, z for LayoutRight).
template <class T, class KokkosLayout>
struct FlatReduceLoop {
  Update<T, KokkosLayout> update;
  Kokkos::Array<int, 3> lo, extent;  // of the update box, local indices, per axis x y z
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t q, double& sum) const {
    constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    const int fast = right ? 2 : 0, slow = right ? 0 : 2;
    const std::int64_t rest = q / extent[fast];
    int p[3];
    p[fast] = lo[fast] + static_cast<int>(q % extent[fast]);
    p[1] = lo[1] + static_cast<int>(rest % extent[1]);
    p[slow] = lo[slow] + static_cast<int>(rest / extent[1]);
    sum += update(p[0], p[1], p[2]);
  }
};

inline std::array<Index3, 2> policy_bounds(const Grid& grid, const Mapping& mapping) {
  const Box box = grid.to_local(jacobi_update_box(grid));
  return {to_policy_order(mapping, box.lo), to_policy_order(mapping, box.hi)};
}

}  // namespace jacobi_detail

template <class T, class KokkosLayout>
std::optional<std::string> JacobiSolver<T, KokkosLayout>::config_problem(
    const Grid& grid, const JacobiKernelConfig& config, const ExecLimits& limits) {
  const auto bounds = jacobi_detail::policy_bounds(grid, config.mapping);
  const auto tile = to_policy_order(config.mapping, config.tile);
  std::optional<std::string> result;
  dispatch_traits(config.mapping, config.launch_bounds, [&](auto, auto iterate, auto bound) {
    const auto merged =
        resolved_tile<decltype(iterate)::value, decltype(bound)::value>(bounds[0], bounds[1], tile);
    std::array<std::int64_t, 3> extents;
    for (int d = 0; d < 3; ++d) extents[d] = bounds[1][d] - bounds[0][d];
    if (auto why = tile_problem(merged, extents, limits, config.launch_bounds))
      result = "policy tile " + format_triple(merged) + " over extents " + format_triple(extents) +
               ": " + *why;
  });
  return result;
}

template <class T, class KokkosLayout>
JacobiSolver<T, KokkosLayout>::JacobiSolver(const JacobiProblem& problem,
                                            const JacobiKernelConfig& config)
    : grid_(problem.grid), config_(config) {
  config_.layout = layout_of<KokkosLayout>();
  static const ExecLimits limits = default_exec_limits();
  if (auto why = config_problem(grid_, config_, limits))
    throw std::invalid_argument("Jacobi kernel configuration not valid on " + limits.backend +
                                ": " + *why);
  old_ = allocate_field<T, KokkosLayout>("u_old", grid_);
  atomic_total_ = Kokkos::View<double>("jacobi_norm");
  new_ = allocate_field<T, KokkosLayout>("u_new", grid_);
  has_rhs_ = static_cast<bool>(problem.rhs);
  rhs_ = allocate_field<T, KokkosLayout>("rhs", has_rhs_ ? grid_ : Grid::whole({1, 1, 1}, {}, {}));
  // Boundary values, start values and the right-hand side are set on the host once.
  auto host = Kokkos::create_mirror_view(old_);
  auto host_rhs = Kokkos::create_mirror_view(rhs_);
  const Index3& n = grid_.points;
  for (Index k = 0; k < n[2]; ++k)
    for (Index j = 0; j < n[1]; ++j)
      for (Index i = 0; i < n[0]; ++i) {
        const Index3 p{i, j, k};
        const bool edge = is_boundary(grid_, p);
        host(i, j, k) = static_cast<T>(edge ? problem.boundary(p)
                                            : (problem.initial ? problem.initial(p) : 0.0));
        if (has_rhs_) host_rhs(i, j, k) = static_cast<T>(edge ? 0.0 : problem.rhs(p));
      }
  Kokkos::deep_copy(old_, host);
  Kokkos::deep_copy(new_, host);
  if (has_rhs_) Kokkos::deep_copy(rhs_, host_rhs);
  double diagonal = 0;
  T c[3];
  for (int d = 0; d < 3; ++d) {
    const double h2 = grid_.spacing[d] * grid_.spacing[d];
    c[d] = is_collapsed(grid_, d) ? T(0) : static_cast<T>(1 / h2);
    if (!is_collapsed(grid_, d)) diagonal += 2 / h2;
  }
  cx_ = c[0];
  cy_ = c[1];
  cz_ = c[2];
  inverse_diagonal_ = static_cast<T>(1 / diagonal);
}

template <class T, class KokkosLayout>
std::optional<double> JacobiSolver<T, KokkosLayout>::iterate(bool norm) {
  using namespace jacobi_detail;
  const Update<T, KokkosLayout> update{old_,
                                       new_,
                                       rhs_,
                                       cx_,
                                       cy_,
                                       cz_,
                                       inverse_diagonal_,
                                       !is_collapsed(grid_, 1),
                                       !is_collapsed(grid_, 2),
                                       has_rhs_};
  const auto bounds = policy_bounds(grid_, config_.mapping);
  const auto tile = to_policy_order(config_.mapping, config_.tile);
  double sum = 0;
  dispatch_traits(
      config_.mapping, config_.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
        constexpr bool R = decltype(reversed)::value;
        const auto policy = make_policy<decltype(iterate)::value, decltype(bound)::value>(
            bounds[0], bounds[1], tile);
        if (!norm) {
          Kokkos::parallel_for("kstencil::jacobi::update", policy,
                               PlainLoop<T, KokkosLayout, R>{update});
        } else if (config_.norm == NormStrategy::reduce) {
          Kokkos::parallel_reduce("kstencil::jacobi::update_reduce", policy,
                                  ReduceLoop<T, KokkosLayout, R>{update}, sum);
        } else {
          Kokkos::deep_copy(atomic_total_, 0.0);  // allocated once: no allocation per iteration
          Kokkos::parallel_for("kstencil::jacobi::update_atomic", policy,
                               AtomicLoop<T, KokkosLayout, R>{update, atomic_total_});
          Kokkos::deep_copy(sum, atomic_total_);
        }
      });
  std::swap(old_, new_);
  if (!norm) return std::nullopt;
  const double points = static_cast<double>(grid_.points[0]) * grid_.points[1] * grid_.points[2];
  return std::sqrt(sum / points);
}

template <class T, class KokkosLayout>
JacobiResult JacobiSolver<T, KokkosLayout>::solve(
    const JacobiStop& stop, const std::function<void(std::int64_t, double)>& on_error) {
  JacobiResult result;
  double error = std::numeric_limits<double>::max();
  std::int64_t iteration = 0;
  while (error > stop.tolerance && iteration < stop.max_iterations) {
    if (auto e = iterate(iteration % std::max(stop.norm_every, 1) == 0)) {
      error = *e;
      result.history.push_back({iteration, error});
      if (on_error) on_error(iteration, error);
    }
    ++iteration;
  }
  result.iterations = iteration;
  result.error = error;
  // The seed's test, kept for line-by-line comparison: converged before the last iteration.
  result.converged = error <= stop.tolerance && iteration < stop.max_iterations;
  return result;
}

template <class T, class KokkosLayout>
std::vector<T> JacobiSolver<T, KokkosLayout>::solution_host() const {
  return to_host_x_fastest(old_, grid_, grid_.global());
}

template <class T>
double jacobi_reference_iteration(const Grid& grid, const std::vector<T>& old_values,
                                  const std::vector<T>& rhs, std::vector<T>& new_values) {
  const Index3& n = grid.points;
  const auto at = [&](Index i, Index j, Index k) {
    return static_cast<std::size_t>(i + n[0] * (j + n[1] * k));
  };
  T c[3];
  double diagonal = 0;
  for (int d = 0; d < 3; ++d) {
    const double h2 = grid.spacing[d] * grid.spacing[d];
    c[d] = is_collapsed(grid, d) ? T(0) : static_cast<T>(1 / h2);
    if (!is_collapsed(grid, d)) diagonal += 2 / h2;
  }
  const T inverse_diagonal = static_cast<T>(1 / diagonal);
  new_values = old_values;
  double sum = 0;
  const Box box = jacobi_update_box(grid);
  for (Index k = box.lo[2]; k < box.hi[2]; ++k)
    for (Index j = box.lo[1]; j < box.hi[1]; ++j)
      for (Index i = box.lo[0]; i < box.hi[0]; ++i) {
        T s = (old_values[at(i - 1, j, k)] + old_values[at(i + 1, j, k)]) * c[0];
        if (!is_collapsed(grid, 1))
          s = s + (old_values[at(i, j - 1, k)] + old_values[at(i, j + 1, k)]) * c[1];
        if (!is_collapsed(grid, 2))
          s = s + (old_values[at(i, j, k - 1)] + old_values[at(i, j, k + 1)]) * c[2];
        if (!rhs.empty()) s = s - rhs[at(i, j, k)];
        const T value = s * inverse_diagonal;
        new_values[at(i, j, k)] = value;
        const double change =
            static_cast<double>(value) - static_cast<double>(old_values[at(i, j, k)]);
        sum += change * change;
      }
  return sum;
}

#define KSTENCIL_INSTANTIATE_JACOBI(T, L) template class JacobiSolver<T, L>;
#define KSTENCIL_INSTANTIATE_JACOBI_REFERENCE(T)                                    \
  template double jacobi_reference_iteration<T>(const Grid&, const std::vector<T>&, \
                                                const std::vector<T>&, std::vector<T>&);

}  // namespace kstencil
