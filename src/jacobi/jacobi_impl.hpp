#pragma once
// JacobiSolver definitions; included by one file per precision.
// Kokkos Kernels 3.4 headers need Kokkos_Core.hpp before them.
// clang-format off
#include <Kokkos_Core.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosBlas1_update.hpp>
// clang-format on
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/interrupt.hpp"
#include "core/policy.hpp"
#include "jacobi/blocked.hpp"
#include "jacobi/formula.hpp"
#include "jacobi/jacobi.hpp"
#include "jacobi/line.hpp"
#include "jacobi/team.hpp"
#include "jacobi/update.hpp"

namespace kstencil {
namespace jacobi_detail {

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
  Kokkos::View<double*> totals;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    Kokkos::atomic_add(&totals(slot), update(Reversed ? p2 : p0, j, Reversed ? p0 : p2));
  }
};

// The update over a flat index, the contiguous axis fastest (x for LayoutLeft, z for LayoutRight).
// Index is 32-bit whenever the box allows: the two integer divisions per point are the loop's main
// cost on CPUs, and 64-bit division is several times slower than 32-bit on CPUs and GPUs.
template <class T, class KokkosLayout, class Index>
struct FlatReduceLoop {
  Update<T, KokkosLayout> update;
  Kokkos::Array<int, 3> lo, extent;  // of the update box, local indices, per axis x y z
  KOKKOS_INLINE_FUNCTION void operator()(const Index q, double& sum) const {
    constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    constexpr int fast = right ? 2 : 0, slow = right ? 0 : 2;
    const Index line = q / static_cast<Index>(extent[fast]);
    const Index plane = line / static_cast<Index>(extent[1]);
    int p[3];
    p[fast] = lo[fast] + static_cast<int>(q - line * static_cast<Index>(extent[fast]));
    p[1] = lo[1] + static_cast<int>(line - plane * static_cast<Index>(extent[1]));
    p[slow] = lo[slow] + static_cast<int>(plane);
    sum += update(p[0], p[1], p[2]);
  }
};

// The second stage of blocked: the sum of the partial sums. A RangePolicy reduction: a
// TeamPolicy one (each team a chunk of the sums) measured slower on H100 with Kokkos 3.4
// (docs/perf/LOG.md).
struct SumParts {
  Kokkos::View<const double*> sums;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t n, double& total) const {
    total += sums(n);
  }

  // Into `total` (a device scalar) on `space`, without waiting for it.
  static void launch(const Kokkos::DefaultExecutionSpace& space, const char* label,
                     const Kokkos::View<const double*>& sums, const std::int64_t count,
                     const Kokkos::View<double>& total) {
    Kokkos::parallel_reduce(
        label,
        Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>(
            space, 0, count),
        SumParts{sums}, total);
  }
};

}  // namespace jacobi_detail

template <class T, class KokkosLayout>
JacobiSolver<T, KokkosLayout>::JacobiSolver(const PoissonProblem& problem, const JacobiPlan& plan,
                                            const Decomposition& d,
                                            std::vector<JacobiPlan> overlap_plans)
    : grid_(problem.grid),
      plan_(plan),
      overlap_plans_(std::move(overlap_plans)),
      comm_(d.comm),
      halo_(problem.grid, d, HaloSides::both, 1) {
  if (plan_.problem) throw std::invalid_argument("Jacobi plan not valid: " + *plan_.problem);
  if (plan_.config.layout != layout_of<KokkosLayout>() || plan_.points != grid_.points)
    throw std::invalid_argument("Jacobi plan made for other fields");
  // Warp sums of lanes this build's kernels do not add would lose the other lanes' sums.
  bool lanes_summed = plan_.sum_lanes == 1 || plan_.sum_lanes == warp_sum_lanes;
  for (const JacobiPlan& part : overlap_plans_)
    lanes_summed = lanes_summed && (part.sum_lanes == 1 || part.sum_lanes == warp_sum_lanes);
  if (!lanes_summed)
    throw std::invalid_argument(
        "Jacobi plan made for warps of other lane counts than this build's");
  const auto fields = make_poisson_fields<T, KokkosLayout>(problem, true);
  old_ = fields.u;
  rhs_ = fields.rhs;
  has_rhs_ = fields.has_rhs;
  uniform_rhs_ = fields.uniform_rhs;
  new_ = allocate_field<T, KokkosLayout>("u_new", grid_);
  Kokkos::deep_copy(new_, old_);  // the boundary values, which no iteration writes
  partial_sums_ =
      Kokkos::View<double*>("jacobi_norm_parts", std::max<std::size_t>(overlap_plans_.size(), 1));
  for (auto& buffer : sums_host_)
    buffer = Kokkos::View<double*, StagingSpace>("jacobi_norm_parts_host", partial_sums_.extent(0));
  const auto largest = [&](const auto& count) {
    std::int64_t most = count(plan_);
    for (const JacobiPlan& part : overlap_plans_) most = std::max(most, count(part));
    return std::max<std::int64_t>(most, 1);
  };
  if (plan_.config.norm == NormStrategy::team) {
    team_sums_ = Kokkos::View<double*>("jacobi_team_sums",
                                       largest([](const JacobiPlan& p) { return p.league; }));
    teams_finished_ = Kokkos::View<int*>("jacobi_teams_finished", partial_sums_.extent(0));
    // Packets need the rows contiguous, whole and aligned to 16 bytes in every field they touch.
    const auto aligned = [](const void* data) {
      return reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
    };
    const auto packets_fit = [&](const JacobiPlan& p) {
      if (p.team_width == 1) return true;
      const int fast = p.team_axes[0];
      return p.team_width == packet_values<T> && old_.stride(fast) == 1 &&
             std::int64_t(old_.extent(fast)) == p.team_row && aligned(old_.data()) &&
             aligned(new_.data()) && (!has_rhs_ || aligned(rhs_.data()));
    };
    bool fit = packets_fit(plan_);
    for (const JacobiPlan& part : overlap_plans_) fit = fit && packets_fit(part);
    if (!fit) throw std::invalid_argument("Jacobi team plan's packets do not fit these fields");
    // Kokkos refuses a team larger than the kernel's registers allow: said here, before any work
    // (the parts of an overlapped update have the same team size, their kernels may differ).
    int most = jacobi_detail::team_size_most<T, KokkosLayout>(plan_);
    for (const JacobiPlan& part : overlap_plans_)
      most = std::min(most, jacobi_detail::team_size_most<T, KokkosLayout>(part));
    if (plan_.team_size > most)
      throw std::invalid_argument(
          "jacobi.norm = \"team\": teams of " + std::to_string(plan_.team_size) +
          " threads are more than this device runs its team kernel with (" + std::to_string(most) +
          "); set kernel.tile along " + "xyz"[plan_.team_axes[0]] + " to at most " +
          std::to_string(most) + " (kernel.variant = \"mdrange\")");
  }
  if (plan_.config.norm == NormStrategy::blocked) {
    item_sums_per_part_ = largest([](const JacobiPlan& p) {
      return p.blocked->launch ? jacobi_detail::blocked_slots(*p.blocked->launch, p.sum_lanes)
                               : std::int64_t(0);
    });
    for (auto& buffer : item_sums_)
      buffer = Kokkos::View<double*>("jacobi_item_sums",
                                     item_sums_per_part_ * std::int64_t(partial_sums_.extent(0)));
    sums_side_ = std::make_unique<SideInstance>();
  }
  if (plan_.config.norm == NormStrategy::kokkos_kernels)
    difference_ = allocate_field<T, KokkosLayout>("u_new - u_old", grid_);
  const PoissonCoefficients coefficients = poisson_coefficients(grid_);
  cx_ = static_cast<T>(coefficients.c[0]);
  cy_ = static_cast<T>(coefficients.c[1]);
  cz_ = static_cast<T>(coefficients.c[2]);
  inverse_diagonal_ = static_cast<T>(1 / coefficients.diagonal);
}

template <class T, class KokkosLayout>
void JacobiSolver<T, KokkosLayout>::update_part(const JacobiPlan& plan, bool norm, int slot) {
  using namespace jacobi_detail;
  const JacobiFormula<T> formula{cx_,
                                 cy_,
                                 cz_,
                                 inverse_diagonal_,
                                 !is_collapsed(grid_, 1),
                                 !is_collapsed(grid_, 2),
                                 has_rhs_ || uniform_rhs_.has_value()};
  const T rhs_value = uniform_rhs_.value_or(T(0));
  const Update<T, KokkosLayout> update{old_,    new_,      rhs_,
                                       formula, rhs_value, uniform_rhs_.has_value()};
  const auto sum = Kokkos::subview(partial_sums_, slot);
  if (plan.config.norm == NormStrategy::blocked) {
    // The second stage runs on the side instance: a few microseconds an iteration that overlap
    // the next update (docs/PERFORMANCE.md, Jacobi).
    const Kokkos::DefaultExecutionSpace& side = sums_side_->space();
    if (!plan.blocked->launch) {  // nothing to update: a sum of none
      if (norm) Kokkos::deep_copy(side, sum, 0.0);
      return;
    }
    const std::int64_t slots = blocked_slots(*plan.blocked->launch, plan.sum_lanes);
    const Kokkos::View<double*> item_sums = Kokkos::subview(
        item_sums_[next_buffer_],
        std::make_pair(slot * item_sums_per_part_, (slot + 1) * item_sums_per_part_));
    launch_blocked_update<T, KokkosLayout>(*plan.blocked, plan.sum_lanes, formula, has_rhs_, rhs_,
                                           rhs_value, old_, new_,
                                           norm ? item_sums : Kokkos::View<double*>());
    if (norm) {
      updated_.record(Kokkos::DefaultExecutionSpace());
      updated_.make_wait(side);
      SumParts::launch(side, "kstencil::jacobi::item_sums", item_sums, slots, sum);
    }
  } else if (plan.config.norm == NormStrategy::line) {
    launch_line_update<T, KokkosLayout>(plan, formula, has_rhs_, rhs_, rhs_value, old_, new_, norm,
                                        sum);
  } else if (plan.config.norm == NormStrategy::team) {
    if (plan.league > 0)
      launch_team_update<T, KokkosLayout>(plan, update, norm, team_sums_, teams_finished_,
                                          sums_host_[next_buffer_], slot);
    else if (norm)  // nothing to update: a sum of none
      sums_host_[next_buffer_](slot) = 0;
  } else if (norm && plan.config.norm == NormStrategy::reduce_range) {
    const auto launch = [&](auto index) {
      using I = decltype(index);
      Kokkos::parallel_reduce("kstencil::jacobi::update_reduce_range",
                              Kokkos::RangePolicy<Kokkos::IndexType<I>>(0, plan.box_size),
                              FlatReduceLoop<T, KokkosLayout, I>{
                                  update,
                                  {plan.box_lo[0], plan.box_lo[1], plan.box_lo[2]},
                                  {plan.box_extent[0], plan.box_extent[1], plan.box_extent[2]}},
                              sum);
    };
    if (plan.box_size <= std::numeric_limits<std::uint32_t>::max())
      launch(std::uint32_t{});
    else
      launch(std::int64_t{});
  } else {
    dispatch_traits(
        plan.mapping, plan.config.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
          constexpr bool R = decltype(reversed)::value;
          const auto policy = planned_policy<decltype(iterate)::value, decltype(bound)::value>(
              plan.lower, plan.upper, plan.tile);
          if (!norm || plan.config.norm == NormStrategy::kokkos_kernels) {
            Kokkos::parallel_for("kstencil::jacobi::update", policy,
                                 PlainLoop<T, KokkosLayout, R>{update});
          } else if (plan.config.norm == NormStrategy::reduce) {
            Kokkos::parallel_reduce("kstencil::jacobi::update_reduce", policy,
                                    ReduceLoop<T, KokkosLayout, R>{update}, sum);
          } else {  // atomic (reduce-range is launched above); iterate() zeroed the sums
            Kokkos::parallel_for("kstencil::jacobi::update_atomic", policy,
                                 AtomicLoop<T, KokkosLayout, R>{update, partial_sums_, slot});
          }
        });
  }
}

template <class T, class KokkosLayout>
auto JacobiSolver<T, KokkosLayout>::launch(const std::int64_t iteration, const bool norm)
    -> std::optional<Launched> {
  const bool sums = norm && plan_.config.norm != NormStrategy::kokkos_kernels;
  if (sums && plan_.config.norm == NormStrategy::atomic) Kokkos::deep_copy(partial_sums_, 0.0);
  // blocked: this update writes the item sums that the second stage two iterations ago read.
  if (sums && sums_side_) sums_ready_[next_buffer_].make_wait(Kokkos::DefaultExecutionSpace());
  int slots = 0;  // the parts updated (one, or the interior and the shell's boxes)
  halo_.step({old_}, static_cast<int>(overlap_plans_.size()), [&](int part) {
    update_part(part < 0 ? plan_ : overlap_plans_[part], norm, std::max(part, 0));
    slots = std::max(slots, std::max(part, 0) + 1);
  });
  std::optional<Launched> launched;
  if (sums) {
    const Kokkos::DefaultExecutionSpace space;
    launched = Launched{iteration, next_buffer_, slots, std::nullopt};
    // team's last team wrote its sums into sums_host_ already; blocked's are added on the side.
    const Kokkos::DefaultExecutionSpace& where = sums_side_ ? sums_side_->space() : space;
    if (plan_.config.norm != NormStrategy::team)
      Kokkos::deep_copy(where, sums_host_[next_buffer_], partial_sums_);
    sums_ready_[next_buffer_].record(where);
    next_buffer_ ^= 1;
  }
  if (norm && plan_.config.norm == NormStrategy::kokkos_kernels) {
    // Kokkos Kernels accumulates in the field's type: in float, float sums. Its BLAS sums every
    // stored point: one rank only (jacobi_setup_from_deck).
    KokkosBlas::update(T(1), flat(new_), T(-1), flat(old_), T(0), flat(difference_));
    const double length = KokkosBlas::nrm2(flat(difference_));
    launched = Launched{iteration, 0, 0, length * length};
  }
  std::swap(old_, new_);
  return launched;
}

template <class T, class KokkosLayout>
double JacobiSolver<T, KokkosLayout>::error_of(const Launched& launched) {
  double sum = 0;
  if (launched.sum) {
    sum = *launched.sum;
  } else {
    sums_ready_[launched.buffer].wait();
    for (int slot = 0; slot < launched.slots; ++slot) sum += sums_host_[launched.buffer](slot);
  }
  return std::sqrt(global_sum(sum, comm_) / point_count(grid_));
}

template <class T, class KokkosLayout>
std::optional<double> JacobiSolver<T, KokkosLayout>::iterate(const bool norm) {
  const std::optional<Launched> launched = launch(0, norm);
  if (!launched) return std::nullopt;
  return error_of(*launched);
}

template <class T, class KokkosLayout>
SolveResult JacobiSolver<T, KokkosLayout>::solve(
    const JacobiStop& stop, const std::function<void(std::int64_t, double)>& on_error,
    const SolveContinuation& from) {
  SolveResult result = from.start;
  double error = result.history.empty() ? std::numeric_limits<double>::max() : result.error;
  std::int64_t iteration = result.iterations;
  std::optional<Launched> pending;  // the last iteration launched, its error not read yet
  const auto read_pending = [&] {
    if (!pending) return;
    error = error_of(*pending);
    result.history.push_back({pending->iteration, error});
    if (on_error) on_error(pending->iteration, error);
    pending.reset();
  };
  while (true) {
    // The state at `iteration` is needed whole before the last iteration and a checkpoint.
    if (!pipelined_ || iteration >= stop.max_iterations || from.checkpoint_due(iteration))
      read_pending();
    if (!pending && (error <= stop.tolerance || iteration >= stop.max_iterations)) break;
    if (iteration % interrupt_check_every == 0 && interrupt_agreed(comm_)) {
      read_pending();
      result.interrupted = error > stop.tolerance;  // else it converged just before the signal
      break;
    }
    if (from.checkpoint_due(iteration)) {
      result.iterations = iteration;
      result.error = error;
      from.checkpoint(result);
    }
    std::optional<Launched> next = launch(iteration, iteration % std::max(stop.norm_every, 1) == 0);
    ++iteration;
    if (pending) {
      read_pending();
      if (error <= stop.tolerance) {  // `next` went past the stop: it wrote the other iterate
        std::swap(old_, new_);
        --iteration;
        break;
      }
    }
    pending = std::move(next);
  }
  result.iterations = iteration;
  result.error = error;
  // The seed's test, kept for line-by-line comparison: converged before the last iteration.
  result.converged = error <= stop.tolerance && iteration < stop.max_iterations;
  return result;
}

template <class T, class KokkosLayout>
std::vector<T> JacobiSolver<T, KokkosLayout>::solution_host() const {
  return to_host_x_fastest(old_, grid_, grid_.owned);
}

template <class T, class KokkosLayout>
void JacobiSolver<T, KokkosLayout>::restore(const std::vector<T>& owned) {
  // The ghost layers are the next iteration's exchange's to fill; the boundary values, which no
  // iteration writes, go into both iterates.
  from_host_x_fastest(old_, grid_, grid_.owned, owned);
  Kokkos::deep_copy(new_, old_);
}

template <class T>
double jacobi_reference_iteration(const Grid& grid, const Box& values, const Box& update,
                                  const Box& sum_box, const std::vector<T>& old_values,
                                  const std::vector<T>& rhs, std::vector<T>& new_values) {
  const Index3 n = values.extents();
  const auto at = [&](Index i, Index j, Index k) {
    return static_cast<std::size_t>((i - values.lo[0]) +
                                    n[0] * ((j - values.lo[1]) + n[1] * (k - values.lo[2])));
  };
  const PoissonCoefficients coefficients = poisson_coefficients(grid);
  const T c[3] = {static_cast<T>(coefficients.c[0]), static_cast<T>(coefficients.c[1]),
                  static_cast<T>(coefficients.c[2])};
  const T inverse_diagonal = static_cast<T>(1 / coefficients.diagonal);
  new_values = old_values;
  double sum = 0;
  const Box box = update.intersect(interior_box(grid));
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
        if (sum_box.contains({i, j, k})) sum += change * change;
      }
  return sum;
}

template <class T>
double jacobi_reference_iteration(const Grid& grid, const std::vector<T>& old_values,
                                  const std::vector<T>& rhs, std::vector<T>& new_values) {
  const Box all = grid.global();
  return jacobi_reference_iteration(grid, all, all, all, old_values, rhs, new_values);
}

#define KSTENCIL_INSTANTIATE_JACOBI(T, L) template class JacobiSolver<T, L>;
#define KSTENCIL_INSTANTIATE_JACOBI_REFERENCE(T)                                                 \
  template double jacobi_reference_iteration<T>(const Grid&, const std::vector<T>&,              \
                                                const std::vector<T>&, std::vector<T>&);         \
  template double jacobi_reference_iteration<T>(const Grid&, const Box&, const Box&, const Box&, \
                                                const std::vector<T>&, const std::vector<T>&,    \
                                                std::vector<T>&);

}  // namespace kstencil
