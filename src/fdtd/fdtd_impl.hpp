#pragma once
// YeeSolver and verify_fdtd definitions; included by one file per precision.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "fdtd/fused.hpp"
#include "fdtd/kernels.hpp"
#include "fdtd/reference.hpp"

namespace kstencil {
namespace fdtd_detail {

template <class T, class KokkosLayout>
struct FillMaterials {
  Field<T, KokkosLayout> ca, cb, db;
  MediaLookup media;
  double dt;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const Material& m = media.at(i, j, k);
    const Coefficients c = coefficients_of(m.eps, m.mu, m.sigma, dt);
    ca(i, j, k) = static_cast<T>(c.ca);
    cb(i, j, k) = static_cast<T>(c.cb);
    db(i, j, k) = static_cast<T>(c.db);
  }
};

// E^0 of a cavity mode at a local point: the product of the tabulated per-axis factors, in the
// order of CavityModeFactors::at (so the same bits on every backend).
struct ModeShape {
  Kokkos::Array<Kokkos::View<const double*>, 3> factor;  // over global indices
  double amplitude;
  Kokkos::Array<int, 3> offset;  // global index of the local (0, 0, 0)

  // The factors copied to the device once.
  static ModeShape of(const CavityModeFactors& factors, const Index3& offset) {
    ModeShape shape{{}, factors.amplitude, {int(offset[0]), int(offset[1]), int(offset[2])}};
    for (int d = 0; d < 3; ++d) {
      Kokkos::View<double*> axis("cavity_mode_factor", factors.factor[d].size());
      Kokkos::deep_copy(axis, Kokkos::View<const double*, Kokkos::HostSpace>(
                                  factors.factor[d].data(), factors.factor[d].size()));
      shape.factor[d] = axis;
    }
    return shape;
  }

  KOKKOS_INLINE_FUNCTION double operator()(const int i, const int j, const int k) const {
    const double f[3] = {factor[0](i + offset[0]), factor[1](j + offset[1]),
                         factor[2](k + offset[2])};
    double value = amplitude;
    value *= f[0];
    value *= f[1];
    value *= f[2];
    return f[0] == 0 || f[1] == 0 || f[2] == 0 ? 0.0 : value;
  }
};

template <class T, class KokkosLayout>
struct FillMode {
  Field<T, KokkosLayout> e;
  ModeShape shape;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    e(i, j, k) = static_cast<T>(shape(i, j, k));
  }
};

// The largest |E - phase E^0| over a box: the cavity check where the field is, so that no copy of
// the grid leaves the device.
template <class T, class KokkosLayout>
struct ModeError {
  Field<T, KokkosLayout> e;
  ModeShape shape;
  double phase;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k,
                                         double& worst) const {
    const double diff = static_cast<double>(e(i, j, k)) - phase * shape(i, j, k);
    const double error = diff == diff ? (diff < 0 ? -diff : diff) : DBL_MAX;  // NaN fails
    worst = error > worst ? error : worst;
  }
};

template <class T, class KokkosLayout, bool Arrays>
struct AddSource {
  YeeViews<T, KokkosLayout> v;
  Field<T, KokkosLayout> e;
  int i, j, k;
  T current;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const T cb = Arrays ? v.cb(i, j, k) : v.cb0;
    e(i, j, k) = e(i, j, k) - cb * current;
  }
};

template <class T, class KokkosLayout>
struct GatherProbes {
  Kokkos::View<double* [6]> out;
  Kokkos::View<const int* [6][3]> where;
  Field<T, KokkosLayout> f0, f1, f2, f3, f4, f5;
  // A point another rank owns has index -1: -0 here, its value there. x + (-0) is x for every x,
  // +0 included, so the sum over the ranks is the owner's value to the sign of a zero.
  KOKKOS_INLINE_FUNCTION double at(const Field<T, KokkosLayout>& f, int p, int c) const {
    if (where(p, c, 0) < 0) return -0.0;
    return f(where(p, c, 0), where(p, c, 1), where(p, c, 2));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const {
    out(p, 0) = at(f0, p, 0);
    out(p, 1) = at(f1, p, 1);
    out(p, 2) = at(f2, p, 2);
    out(p, 3) = at(f3, p, 3);
    out(p, 4) = at(f4, p, 4);
    out(p, 5) = at(f5, p, 5);
  }
};

}  // namespace fdtd_detail

template <class T, class KokkosLayout>
YeeSolver<T, KokkosLayout>::YeeSolver(const FdtdProblem& problem, const FdtdPlan& plan,
                                      const Decomposition& d, std::vector<FdtdPlan> overlap_plans,
                                      Fields storage, const FdtdStart start)
    : problem_(problem),
      plan_(plan),
      overlap_plans_(std::move(overlap_plans)),
      grid_(d.local_grid(problem.nodes())),
      comm_(d.comm),
      halo_e_(grid_, d, HaloSides::upper, 3),
      halo_h_(grid_, d, HaloSides::lower, 3),
      dt_(problem.dt()) {
  if (plan_.problem) throw std::invalid_argument("FDTD plan not valid: " + *plan_.problem);
  if (plan_.config.layout != layout_of<KokkosLayout>() || plan_.cells != problem_.cells)
    throw std::invalid_argument("FDTD plan made for other fields");
  if (plan_.config.variant == FdtdVariant::fused)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side)
        if (d.has_neighbour(axis, side))
          throw std::invalid_argument(
              "FDTD fused variant beside another rank: its updates exchange no ghost layers");
  const Index3 extents = grid_.local_extents();
  const Index3 allocated = plan_.allocated_extents(extents);
  const auto fits = [&](const Field<T, KokkosLayout>& spare) {
    return spare.data() != nullptr && Index(spare.extent(0)) == allocated[0] &&
           Index(spare.extent(1)) == allocated[1] && Index(spare.extent(2)) == allocated[2];
  };
  const bool keep_state = start == FdtdStart::storage_state;
  if (keep_state)
    for (int c = 0; c < 3; ++c)
      if (!fits(storage.e[c]) || !fits(storage.h[c]))
        throw std::invalid_argument("FDTD: a state to start from of other extents");
  // A spare field of these extents, zeroed (or as it is, for E and H of a state kept), or else a
  // new one.
  const auto field = [&](Field<T, KokkosLayout>& spare, const char* label, const bool state) {
    if (!fits(spare)) return allocate_field<T, KokkosLayout>(label, allocated);
    if (!(state && keep_state)) Kokkos::deep_copy(spare, T(0));
    return std::move(spare);
  };
  const char* e_names[3] = {"ex", "ey", "ez"};
  const char* h_names[3] = {"hx", "hy", "hz"};
  for (int c = 0; c < 3; ++c) {
    fields_.e[c] = field(storage.e[c], e_names[c], true);
    fields_.h[c] = field(storage.h[c], h_names[c], true);
  }
  if (problem_.media.mode == MediaMode::arrays) {
    fields_.ca = field(storage.ca, "ca", false);
    fields_.cb = field(storage.cb, "cb", false);
    fields_.db = field(storage.db, "db", false);
    Kokkos::parallel_for(
        "kstencil::fdtd::materials",
        FieldPolicy3<KokkosLayout>({0, 0, 0}, {int(extents[0]), int(extents[1]), int(extents[2])}),
        fdtd_detail::FillMaterials<T, KokkosLayout>{
            fields_.ca, fields_.cb, fields_.db,
            fdtd_detail::MediaLookup::of(problem_, grid_.allocated.lo), dt_});
  }
  if (plan_.config.variant == FdtdVariant::pairs)
    for (const auto* f : {&fields_.e[0], &fields_.e[1], &fields_.e[2], &fields_.h[0], &fields_.h[1],
                          &fields_.h[2], &fields_.ca, &fields_.cb, &fields_.db})
      if (reinterpret_cast<std::uintptr_t>(f->data()) % (2 * sizeof(T)) != 0)
        throw std::logic_error("FDTD pairs: a field not aligned to a pair of values");
  if (!keep_state) initialize();
}

template <class T, class KokkosLayout>
void YeeSolver<T, KokkosLayout>::reset() {
  for (int c = 0; c < 3; ++c) {
    Kokkos::deep_copy(fields_.e[c], T(0));
    Kokkos::deep_copy(fields_.h[c], T(0));
  }
  initialize();
  step_ = 0;
  reset_halo_times();
}

template <class T, class KokkosLayout>
void YeeSolver<T, KokkosLayout>::initialize() {
  if (!problem_.cavity) return;
  // E^0 = the mode's shape: its per-axis factors computed on the host (one definition for every
  // backend), their products on the device. Ghost layers included: the H update below reads E
  // from the rank above.
  const auto shape = cavity_mode_shape(problem_, *problem_.cavity);
  const Box& b = grid_.allocated;
  const Index3 n = grid_.local_extents();
  for (int c = 0; c < 3; ++c) {
    const fdtd_detail::FillMode<T, KokkosLayout> fill{
        fields_.e[c], fdtd_detail::ModeShape::of(cavity_mode_factors(problem_, shape, c), b.lo)};
    Kokkos::parallel_for("kstencil::fdtd::cavity_mode",
                         FieldPolicy3<KokkosLayout>({0, 0, 0}, {int(n[0]), int(n[1]), int(n[2])}),
                         fill);
  }
  // H^(-1/2) = (dt/2) curl E^0 / mu: the H update backwards by half a step from H = 0, with the
  // background material (the mode is an eigenmode of a uniform cavity).
  auto v = fdtd_detail::views_of<T, KokkosLayout>(fields_, problem_, dt_, grid_);
  v.db0 = static_cast<T>(-dt_ / (2 * problem_.media.background.mu));
  fdtd_detail::launch_update("kstencil::fdtd::init_h", plan_,
                             fdtd_detail::UpdateH<T, KokkosLayout, false>{v});
}

template <class T, class KokkosLayout>
std::optional<EnergyRecord> YeeSolver<T, KokkosLayout>::step(bool energy) {
  using namespace fdtd_detail;
  const auto v = views_of<T, KokkosLayout>(fields_, problem_, dt_, grid_);
  // Calls run(std::true_type) for per-cell coefficient arrays, run(std::false_type) for uniform.
  const auto by_media = [&](auto&& run) {
    if (problem_.media.mode == MediaMode::arrays)
      run(std::true_type{});
    else
      run(std::false_type{});
  };
  const int parts = static_cast<int>(overlap_plans_.size());
  const auto plan_of = [&](int part) -> const FdtdPlan& {
    return part < 0 ? plan_ : overlap_plans_[part];
  };
  std::optional<EnergyRecord> record;
  if (energy) {
    // Before the H update, with E's upper ghosts in place (the H term reads them); the sums are
    // reproducible: the same bits on any number of ranks and threads.
    halo_e_.exchange({fields_.e[0], fields_.e[1], fields_.e[2]});
    const Box nodes = grid_.to_local(grid_.owned);
    const Box cells = owned_cells(problem_, grid_);
    const Index3 n = problem_.cells;
    const double node_count = double(n[0] + 1) * double(n[1] + 1) * double(n[2] + 1);
    const double cell_count = double(n[0]) * double(n[1]) * double(n[2]);
    const char* label = "kstencil::fdtd::energy";
    double electric = 0, magnetic = 0;
    by_media([&](auto media) {
      constexpr bool Arrays = decltype(media)::value;
      electric = reproducible_sum<KokkosLayout>(label, nodes, node_count,
                                                ElectricEnergy<T, KokkosLayout, Arrays>{v}, comm_);
      magnetic = reproducible_sum<KokkosLayout>(label, cells, cell_count,
                                                UpdateH<T, KokkosLayout, Arrays>{v}, comm_);
    });
    const double half_volume = 0.5 * problem_.cell_volume();
    record = EnergyRecord{step_, time(), half_volume * electric, half_volume * magnetic};
  }
  if (plan_.config.variant == FdtdVariant::fused) {
    // One rank (the setup's check): no ghost layers to exchange between the updates.
    by_media([&](auto media) {
      constexpr bool Arrays = decltype(media)::value;
      launch_fused_step(plan_, UpdateH<T, KokkosLayout, Arrays>{v},
                        UpdateE<T, KokkosLayout, Arrays>{v});
    });
  } else {
    halo_e_.step({fields_.e[0], fields_.e[1], fields_.e[2]}, parts, [&](int part) {
      by_media([&](auto media) {
        launch_update("kstencil::fdtd::update_h", plan_of(part),
                      UpdateH<T, KokkosLayout, decltype(media)::value>{v});
      });
    });
    halo_h_.step({fields_.h[0], fields_.h[1], fields_.h[2]}, parts, [&](int part) {
      by_media([&](auto media) {
        launch_update("kstencil::fdtd::update_e", plan_of(part),
                      UpdateE<T, KokkosLayout, decltype(media)::value>{v});
      });
    });
  }
  if (problem_.source && grid_.owned.contains(problem_.source->index)) {
    const PointSource& s = *problem_.source;
    // J at (n + 1/2) dt drives E^n -> E^(n+1).
    const T current = static_cast<T>(s.value((static_cast<double>(step_) + 0.5) * dt_));
    const auto& e = fields_.e[s.component];
    const Index3 at = grid_.to_local(Box{s.index, s.index}).lo;
    const int i = int(at[0]), j = int(at[1]), k = int(at[2]);
    by_media([&](auto media) {
      Kokkos::parallel_for(
          "kstencil::fdtd::source", Kokkos::RangePolicy<>(0, 1),
          AddSource<T, KokkosLayout, decltype(media)::value>{v, e, i, j, k, current});
    });
  }
  ++step_;
  return record;
}

template <class T, class KokkosLayout>
void YeeSolver<T, KokkosLayout>::restore(std::int64_t step,
                                         const std::vector<std::vector<T>>& components) {
  // The ghost layers are each half-step's exchange's to fill.
  for (int c = 0; c < 6; ++c)
    from_host_x_fastest(c < 3 ? fields_.e[c] : fields_.h[c - 3], grid_, component_box(c),
                        components[static_cast<std::size_t>(c)]);
  step_ = step;
}

template <class T, class KokkosLayout>
HaloTimes YeeSolver<T, KokkosLayout>::halo_times() const {
  HaloTimes t = halo_e_.times;
  const HaloTimes& h = halo_h_.times;
  t.pack += h.pack;
  t.exchange += h.exchange;
  t.unpack += h.unpack;
  t.interior += h.interior;
  t.update += h.update;
  return t;  // steps: one per step (each half-step counts its own)
}

template <class T, class KokkosLayout>
void YeeSolver<T, KokkosLayout>::reset_halo_times() {
  halo_e_.times = HaloTimes{};
  halo_h_.times = HaloTimes{};
}

template <class T, class KokkosLayout>
ProbeRecord YeeSolver<T, KokkosLayout>::probe(
    const std::vector<std::array<Index3, 6>>& indices) const {
  ProbeRecord record{step_, time(), {}};
  if (indices.empty()) return record;
  const int count = static_cast<int>(indices.size());
  Kokkos::View<int* [6][3]> where("probe_indices", count);
  auto where_host = Kokkos::create_mirror_view(where);
  for (int p = 0; p < count; ++p)
    for (int c = 0; c < 6; ++c)
      for (int d = 0; d < 3; ++d)
        where_host(p, c, d) = grid_.owned.contains(indices[p][c])
                                  ? static_cast<int>(indices[p][c][d] - grid_.allocated.lo[d])
                                  : -1;
  Kokkos::deep_copy(where, where_host);
  Kokkos::View<double* [6]> values("probe_values", count);
  Kokkos::parallel_for("kstencil::fdtd::probes", Kokkos::RangePolicy<>(0, count),
                       fdtd_detail::GatherProbes<T, KokkosLayout>{
                           values, where, fields_.e[0], fields_.e[1], fields_.e[2], fields_.h[0],
                           fields_.h[1], fields_.h[2]});
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  std::vector<double> here(6 * static_cast<std::size_t>(count));
  for (int p = 0; p < count; ++p)
    for (int c = 0; c < 6; ++c) here[6 * p + c] = host(p, c);
  const std::vector<double> all = global_sums(here, comm_);  // one owner per point: exact
  record.values.resize(count);
  for (int p = 0; p < count; ++p)
    for (int c = 0; c < 6; ++c) record.values[p][c] = all[6 * p + c];
  return record;
}

template <class T, class KokkosLayout>
Box YeeSolver<T, KokkosLayout>::component_box(int c) const {
  return grid_.owned.intersect(Box{{0, 0, 0}, component_dims(problem_, c)});
}

template <class T, class KokkosLayout>
std::vector<T> YeeSolver<T, KokkosLayout>::component_host(int c) const {
  const Field<T, KokkosLayout>& f = c < 3 ? fields_.e[c] : fields_.h[c - 3];
  return to_host_x_fastest(f, grid_, component_box(c));
}

template <class T, class KokkosLayout>
FdtdVerification verify_fdtd(const FdtdProblem& problem, const FdtdPlan& plan,
                             const Decomposition& d, const std::vector<FdtdPlan>& overlap_plans,
                             std::optional<YeeSolver<T, KokkosLayout>>* solver) {
  FdtdVerification v;
  const double eps = std::numeric_limits<T>::epsilon();
  // (1) A discrete cavity mode: an exact eigenvector of the update, so after N steps E is the
  // initial shape times cos(omega N dt) up to rounding. Each step rounds every value a few times;
  // the error grows at most linearly: tolerance 20 (N + 1) eps (|E| <= 1). A mode of about a
  // quarter of the cells per axis with E along a direction that leaves no component zero, so that
  // every component's update over the whole grid shows in E at once (cavity_check_mode); in the
  // run's media mode, whose arrays then hold the background everywhere.
  FdtdProblem mode = problem;
  mode.media = Media{};
  mode.media.mode = problem.media.mode;
  mode.media.background = problem.media.background;
  mode.media.background.sigma = 0;
  mode.source.reset();
  mode.cavity = cavity_check_mode(problem);
  // The mode turns by about 0.7 radians a step: a dropped update is off by about 0.2 after one;
  // a wrong coefficient's error grows as N, as the tolerance does. 3 steps: both parities.
  v.mode_steps = 3;
  YeeSolver<T, KokkosLayout> cavity(mode, plan, d, overlap_plans);  // the same cells and plans
  // (2) The run's own problem against the host reference over boxes at the grid's and the ranks'
  // corners, edges and faces, its middle and its source: only those cross to rank 0's host. Both
  // go on from the cavity mode's state (non-zero everywhere, so every box sees the run's media at
  // work): where the run's update is the cavity check's (no block, no loss, no source: the
  // benchmarks' problems) during the cavity check's own steps, else for steps of their own on the
  // run's problem.
  v.reference_steps = v.mode_steps;
  const bool same_update = !problem.media.has_block && problem.media.background.sigma == 0 &&
                           !problem.source && mode.dt() == problem.dt();
  const auto boxes = fdtd_reference::checked_boxes(problem, d.dims, v.reference_steps);
  std::vector<fdtd_reference::HostYee<T>> hosts;
  double mismatches = 0;
  const auto compare = [&](const YeeSolver<T, KokkosLayout>& device) {
    for (std::size_t n = 0; n < boxes.size(); ++n) {
      hosts[n].run(v.reference_steps);
      for (int c = 0; c < 6; ++c) {
        const auto& fields = device.fields();
        const Box box = boxes[n].box.intersect(Box{{0, 0, 0}, component_dims(problem, c)});
        const auto got = fdtd_reference::gather_box(c < 3 ? fields.e[c] : fields.h[c - 3],
                                                    device.nodes(), box, d.comm);
        if (d.rank != 0) continue;
        const auto comparison = hosts[n].compare(c, box, got);
        v.reference_max_diff = std::max(v.reference_max_diff, comparison.max_diff);
        mismatches += static_cast<double>(comparison.mismatches);
        v.reference_values += box.size();
      }
    }
  };
  if (same_update)
    for (const auto& b : boxes) hosts.emplace_back(cavity, b.region);
  cavity.run(v.mode_steps);
  const auto shape = cavity_mode_shape(mode, *mode.cavity);
  const double phase = std::cos(shape.omega_discrete * v.mode_steps * mode.dt());
  for (int c = 0; c < 3; ++c) {
    const Box b = cavity.nodes().to_local(cavity.component_box(c));
    if (b.empty()) continue;
    double worst = 0;
    Kokkos::parallel_reduce("kstencil::fdtd::mode_error",
                            FieldPolicy3<KokkosLayout>({int(b.lo[0]), int(b.lo[1]), int(b.lo[2])},
                                                       {int(b.hi[0]), int(b.hi[1]), int(b.hi[2])}),
                            fdtd_detail::ModeError<T, KokkosLayout>{
                                cavity.fields().e[c],
                                fdtd_detail::ModeShape::of(cavity_mode_factors(mode, shape, c),
                                                           cavity.nodes().allocated.lo),
                                phase},
                            Kokkos::Max<double>(worst));
    v.mode_max_error = std::max(v.mode_max_error, worst);
  }
  v.mode_max_error = global_max(v.mode_max_error, d.comm);
  v.mode_tolerance = 20.0 * (v.mode_steps + 1) * eps;
  if (same_update) {
    compare(cavity);
    if (solver) solver->emplace(problem, plan, d, overlap_plans, cavity.release());
  } else {
    std::optional<YeeSolver<T, KokkosLayout>> own;
    std::optional<YeeSolver<T, KokkosLayout>>& run = solver ? *solver : own;
    run.emplace(problem, plan, d, overlap_plans, cavity.release(), FdtdStart::storage_state);
    for (const auto& b : boxes) hosts.emplace_back(*run, b.region);
    run->run(v.reference_steps);
    compare(*run);
    if (solver) run->reset();
  }
  v.reference_mismatches = static_cast<std::int64_t>(global_sum(mismatches, d.comm));
  v.reference_max_diff = global_max(v.reference_max_diff, d.comm);
  v.reference_values =
      static_cast<std::int64_t>(global_sum(static_cast<double>(v.reference_values), d.comm));
  v.passed = v.mode_max_error <= v.mode_tolerance && v.reference_mismatches == 0;
  return v;
}

#define KSTENCIL_INSTANTIATE_FDTD(T, L)                                                           \
  template class YeeSolver<T, L>;                                                                 \
  template FdtdVerification verify_fdtd<T, L>(const FdtdProblem&, const FdtdPlan&,                \
                                              const Decomposition&, const std::vector<FdtdPlan>&, \
                                              std::optional<YeeSolver<T, L>>*);

}  // namespace kstencil
