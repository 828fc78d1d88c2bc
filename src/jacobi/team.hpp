#pragma once
// The team Jacobi update (jacobi.norm = "team", the GPU default on 1D and 2D grids): seed 004's
// hierarchical sum in one kernel. Each team of a TeamPolicy updates a piece of a row along the
// contiguous axis (its threads side by side) for `march` planes along the slowest axis (a plane's
// values serve the next one from the L1) and sums its squared changes with one team reduction; the
// last team to finish adds the teams' sums in a fixed order and writes the total straight to host
// memory, so an iteration is one launch, without a second kernel or a copy of the result.
// Where the plan allows (JacobiPlan::team_width), a thread moves 16 bytes of a row an access and
// sums its packets' squared changes in T (JacobiPlan::sum_points), the team in double.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/field.hpp"
#include "core/packets.hpp"
#include "jacobi/jacobi.hpp"
#include "jacobi/update.hpp"

namespace kstencil {
namespace jacobi_detail {

// Width: the points a thread reads and writes an access along the row (1, or packet_values<T>);
// Sums: with the norm; Rows (Width > 1): the rows beside a row that the update reads
// (JacobiPlan::team_rows), a kernel per grid dimension: packets of rows it does not read would
// hold registers (1D float with the sums: 64 against 44) and cost resident teams.
template <class T, class KokkosLayout, int Width, bool Sums, int Rows = 3>
struct TeamUpdate {
  using Member = Kokkos::TeamPolicy<>::member_type;
  Update<T, KokkosLayout> update;
  Kokkos::Array<int, 3> lo, extent, axes;  // the box (x y z) and the team's axes
  int chunk, chunks, march;
  // Width > 1: the row's allocated points (the packets cover them all from its aligned start; the
  // points outside the box keep their values), and the fields' strides per axis x y z in values.
  int row;
  Kokkos::Array<std::int64_t, 3> stride;
  // Sums: one per team; the teams of this launch finished so far (the last one resets it); the
  // launch's sum, written into host memory at `slot`.
  Kokkos::View<double*> team_sums;
  Kokkos::View<int*> finished;
  Kokkos::View<double*, StagingSpace> totals;
  int slot;

  // A team's piece: its first point along the row (Width 1: of the box), its row along axes[1],
  // its first plane along axes[2] and how many planes. Scalars, not arrays indexed by axis: those
  // would live in local memory.
  struct Piece {
    int along, row_at, slab_at, planes;
  };

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int league = team.league_rank();
    const int fast = axes[0], a = axes[1], b = axes[2];
    // Rows along axes[1] fastest, then the pieces of a row, then the slabs along axes[2].
    const int mid = league % extent[a];
    const int rest = league / extent[a];
    const int start = rest % chunks * chunk, first = rest / chunks * march;
    const Piece piece{(Width == 1 ? lo[fast] : 0) + start, lo[a] + mid, lo[b] + first,
                      extent[b] - first < march ? extent[b] - first : march};
    const int span = Width == 1 ? extent[fast] : row;
    const int count = (span - start < chunk ? span - start : chunk) / Width;
    const auto items = Kokkos::TeamThreadRange(team, count);
    if constexpr (Sums) {
      double sum = 0;
      Kokkos::parallel_reduce(
          items, [&](const int q, double& part) { part += planes_of(piece, q); }, sum);
      finish(team, sum);
    } else {
      Kokkos::parallel_for(items, [&](const int q) { planes_of(piece, q); });
    }
  }

  // Item q of the piece, for its planes.
  KOKKOS_FORCEINLINE_FUNCTION double planes_of(const Piece& piece, const int q) const {
    const int fast = axes[0], a = axes[1];
    double sum = 0;
    if constexpr (Width == 1) {
      const int along = piece.along + q;
      for (int n = 0; n < piece.planes; ++n) {
        const int slab = piece.slab_at + n;
        const auto at = [&](const int d) {
          return d == fast ? along : d == a ? piece.row_at : slab;
        };
        sum += update(at(0), at(1), at(2));
      }
    } else {
      const std::int64_t plane = stride[axes[2]];
      std::int64_t at = piece.along + std::int64_t(piece.row_at) * stride[a] +
                        std::int64_t(piece.slab_at) * plane + std::int64_t(q) * Width;
      T packets = 0;
      for (int n = 0; n < piece.planes; ++n, at += plane)
        packets += packet(at, piece.along + q * Width);
      sum = packets;
    }
    return sum;
  }

  // The Width points from offset `at` (its point along the row: x0).
  KOKKOS_FORCEINLINE_FUNCTION T packet(const std::int64_t at, const int x0) const {
    const T* const old_values = update.old_values.data();
    const JacobiFormula<T>& formula = update.formula;
    const int fast = axes[0], a = axes[1], b = axes[2];
    const Packet<T> own = load_packet(old_values + at);
    const T before = x0 > 0 ? old_values[at - 1] : T(0);
    const T after = x0 + Width < row ? old_values[at + Width] : T(0);
    // The neighbouring rows along the other two axes, where the formula uses them.
    Packet<T> a_minus{}, a_plus{}, b_minus{}, b_plus{};
    if constexpr (Rows & 1) {
      a_minus = load_packet(old_values + at - stride[a]);
      a_plus = load_packet(old_values + at + stride[a]);
    }
    if constexpr (Rows & 2) {
      b_minus = load_packet(old_values + at - stride[b]);
      b_plus = load_packet(old_values + at + stride[b]);
    }
    Packet<T> out;
    T sum = 0;
    // Ends: whether the packet may hold a row end, which keeps its value. In 1D the packets inside
    // the row skip the test per value (measured faster in 1D, slower in 2D float:
    // docs/PERFORMANCE.md).
    const auto points = [&](auto ends) {
      for (int q = 0; q < Width; ++q) {
        const int x = x0 + q;
        if (decltype(ends)::value && (x < lo[fast] || x >= lo[fast] + extent[fast])) {
          out.v[q] = own.v[q];
          continue;
        }
        const T f_minus = q == 0 ? before : own.v[q - 1];
        const T f_plus = q == Width - 1 ? after : own.v[q + 1];
        const T f = !formula.use_rhs     ? T(0)
                    : update.uniform_rhs ? update.rhs_value
                                         : update.rhs.data()[at + q];
        if constexpr (Rows == 0) {  // the row is along x and the formula reads no other axis
          out.v[q] = formula(f_minus, f_plus, T(0), T(0), T(0), T(0), f);
        } else {
          // Each axis x y z's neighbours: along the row, or from the rows beside it.
          const auto minus = [&](const int d) {
            return d == fast ? f_minus : d == a ? a_minus.v[q] : b_minus.v[q];
          };
          const auto plus = [&](const int d) {
            return d == fast ? f_plus : d == a ? a_plus.v[q] : b_plus.v[q];
          };
          out.v[q] = formula(minus(0), plus(0), minus(1), plus(1), minus(2), plus(2), f);
        }
        if constexpr (Sums) {
          const T change = out.v[q] - own.v[q];
          sum += change * change;
        }
      }
    };
    if (Rows == 0 && x0 >= lo[fast] && x0 + Width <= lo[fast] + extent[fast])
      points(std::false_type{});
    else
      points(std::true_type{});
    store_packet<true>(update.new_values.data() + at, out);
    return sum;
  }

  // The team's sum to its slot; the last team of the launch adds them all.
  KOKKOS_INLINE_FUNCTION void finish(const Member& team, const double sum) const {
    int last = 0;
    if (team.team_rank() == 0) {
      team_sums(team.league_rank()) = sum;
      Kokkos::memory_fence();  // the sum is visible before the count says so
      last = Kokkos::atomic_fetch_add(&finished(slot), 1) == team.league_size() - 1;
    }
    team.team_broadcast(last, 0);
    if (!last) return;
    Kokkos::memory_fence();
    const volatile double* const sums = team_sums.data();  // other teams' stores, not a cache's
    double total = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, team.league_size()),
        [&](const int t, double& part) { part += sums[t]; }, total);
    if (team.team_rank() == 0) {
      totals(slot) = total;
      finished(slot) = 0;
    }
  }
};

// f(std::integral_constant<int, plan.team_rows>).
template <class F>
auto with_team_rows(const JacobiPlan& plan, const F& f) {
  switch (plan.team_rows) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    default:
      return f(std::integral_constant<int, 3>{});
  }
}

// The most threads a team of the plan's kernels may have on this device (their registers and
// shared memory per block), with and without the sums.
template <class T, class KokkosLayout>
int team_size_most(const JacobiPlan& plan) {
  const auto most = [](auto width, auto rows) {
    constexpr int Width = decltype(width)::value, Rows = decltype(rows)::value;
    const Kokkos::TeamPolicy<> policy(1, Kokkos::AUTO);
    return std::min(policy.team_size_max(TeamUpdate<T, KokkosLayout, Width, true, Rows>{},
                                         Kokkos::ParallelForTag{}),
                    policy.team_size_max(TeamUpdate<T, KokkosLayout, Width, false, Rows>{},
                                         Kokkos::ParallelForTag{}));
  };
  return plan.team_width == 1
             ? most(std::integral_constant<int, 1>{}, std::integral_constant<int, 3>{})
             : with_team_rows(plan, [&](auto rows) {
                 return most(std::integral_constant<int, packet_values<T>>{}, rows);
               });
}

// old -> new over a team plan (plan.league teams); with `norm`, the sum of the squared changes into
// totals(slot) (host memory), `team_sums` (at least plan.league) and `finished(slot)` (0 before
// and after) on the way.
template <class T, class KokkosLayout>
void launch_team_update(const JacobiPlan& plan, const Update<T, KokkosLayout>& update,
                        const bool norm, const Kokkos::View<double*>& team_sums,
                        const Kokkos::View<int*>& finished,
                        const Kokkos::View<double*, StagingSpace>& totals, const int slot) {
  const auto& old_values = update.old_values;
  const Kokkos::Array<std::int64_t, 3> stride{static_cast<std::int64_t>(old_values.stride_0()),
                                              static_cast<std::int64_t>(old_values.stride_1()),
                                              static_cast<std::int64_t>(old_values.stride_2())};
  const auto launch = [&](auto width, auto sums, auto rows) {
    constexpr int Width = decltype(width)::value;
    constexpr bool Sums = decltype(sums)::value;
    const TeamUpdate<T, KokkosLayout, Width, Sums, decltype(rows)::value> kernel{
        update,
        {plan.box_lo[0], plan.box_lo[1], plan.box_lo[2]},
        {plan.box_extent[0], plan.box_extent[1], plan.box_extent[2]},
        {plan.team_axes[0], plan.team_axes[1], plan.team_axes[2]},
        plan.team_chunk,
        plan.team_chunks,
        plan.team_march,
        plan.team_row,
        stride,
        team_sums,
        finished,
        totals,
        slot};
    const int league = static_cast<int>(plan.league);
    const char* label =
        Sums ? "kstencil::jacobi::update_team_sums" : "kstencil::jacobi::update_team";
    if (plan.team_size > 0)
      Kokkos::parallel_for(label, Kokkos::TeamPolicy<>(league, plan.team_size), kernel);
    else
      Kokkos::parallel_for(label, Kokkos::TeamPolicy<>(league, Kokkos::AUTO), kernel);
  };
  const auto with_sums = [&](auto width, auto rows) {
    if (norm)
      launch(width, std::true_type{}, rows);
    else
      launch(width, std::false_type{}, rows);
  };
  if (plan.team_width == 1)
    with_sums(std::integral_constant<int, 1>{}, std::integral_constant<int, 3>{});
  else
    with_team_rows(
        plan, [&](auto rows) { with_sums(std::integral_constant<int, packet_values<T>>{}, rows); });
}

}  // namespace jacobi_detail
}  // namespace kstencil
