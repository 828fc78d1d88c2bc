// The FDTD problem description: geometry of the staggered lattices, time step, cavity modes,
// sources.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "fdtd/fdtd.hpp"

namespace kstencil {

FdtdVariant parse_fdtd_variant(const std::string& word) {
  if (word == "cell") return FdtdVariant::cell;
  if (word == "column") return FdtdVariant::column;
  if (word == "line") return FdtdVariant::line;
  if (word == "pairs") return FdtdVariant::pairs;
  if (word == "fused") return FdtdVariant::fused;
  throw std::invalid_argument("unknown FDTD variant " + word);
}

std::string to_string(FdtdVariant variant) {
  switch (variant) {
    case FdtdVariant::cell:
      return "cell";
    case FdtdVariant::column:
      return "column";
    case FdtdVariant::line:
      return "line";
    case FdtdVariant::pairs:
      return "pairs";
    case FdtdVariant::fused:
      return "fused";
  }
  return "?";
}

MediaMode parse_media_mode(const std::string& word) {
  if (word == "uniform") return MediaMode::uniform;
  if (word == "arrays") return MediaMode::arrays;
  throw std::invalid_argument("unknown media mode " + word);
}

std::string to_string(MediaMode mode) {
  return mode == MediaMode::uniform ? "uniform" : "arrays";
}

Waveform parse_waveform(const std::string& word) {
  if (word == "gaussian-sine") return Waveform::gaussian_sine;
  if (word == "ricker") return Waveform::ricker;
  throw std::invalid_argument("unknown waveform " + word);
}

double PointSource::value(double t) const {
  constexpr double pi = 3.14159265358979323846;
  const double s = t - delay;
  if (waveform == Waveform::ricker) {
    const double a = pi * frequency * s;
    return amplitude * (1 - 2 * a * a) * std::exp(-a * a);
  }
  return amplitude * std::exp(-(s / width) * (s / width)) * std::sin(2 * pi * frequency * s);
}

Grid FdtdProblem::nodes() const {
  return Grid::whole({cells[0] + 1, cells[1] + 1, cells[2] + 1}, origin, spacing);
}

double FdtdProblem::max_wave_speed() const {
  double min_eps_mu = media.background.eps * media.background.mu;
  if (media.mode == MediaMode::arrays && media.has_block)
    min_eps_mu = std::min(min_eps_mu, media.block.eps * media.block.mu);
  return 1 / std::sqrt(min_eps_mu);
}

double FdtdProblem::dt() const {
  double sum = 0;
  for (int d = 0; d < 3; ++d) sum += 1 / (spacing[d] * spacing[d]);
  return courant / (max_wave_speed() * std::sqrt(sum));
}

namespace {

// Whether component c (0-2 E, 3-5 H) sits half a cell off the nodes along axis d.
bool staggered(int c, int d) {
  return c < 3 ? c == d : c - 3 != d;
}

}  // namespace

Real3 component_position(const FdtdProblem& problem, int c, const Index3& index) {
  Real3 p;
  for (int d = 0; d < 3; ++d)
    p[d] = problem.origin[d] +
           (static_cast<double>(index[d]) + (staggered(c, d) ? 0.5 : 0.0)) * problem.spacing[d];
  return p;
}

Index3 component_dims(const FdtdProblem& problem, int c) {
  Index3 dims;
  for (int d = 0; d < 3; ++d) dims[d] = problem.cells[d] + (staggered(c, d) ? 0 : 1);
  return dims;
}

std::array<Index3, 6> probe_indices(const FdtdProblem& problem, const Real3& position) {
  std::array<Index3, 6> out;
  for (int c = 0; c < 6; ++c) {
    const Index3 dims = component_dims(problem, c);
    for (int d = 0; d < 3; ++d) {
      const double x =
          (position[d] - problem.origin[d]) / problem.spacing[d] - (staggered(c, d) ? 0.5 : 0.0);
      out[c][d] = std::clamp<Index>(static_cast<Index>(std::llround(x)), 0, dims[d] - 1);
    }
  }
  return out;
}

std::optional<Index3> source_index(const FdtdProblem& problem, int component,
                                   const Real3& position) {
  for (int d = 0; d < 3; ++d) {
    const double lo = problem.origin[d];
    const double hi = lo + static_cast<double>(problem.cells[d]) * problem.spacing[d];
    if (!(position[d] >= lo && position[d] <= hi)) return std::nullopt;
  }
  Index3 index = probe_indices(problem, position)[component];
  // Tangential E on the walls is held at zero: move the source to the nearest updated value.
  for (int d = 0; d < 3; ++d)
    if (!staggered(component, d)) index[d] = std::clamp<Index>(index[d], 1, problem.cells[d] - 1);
  return index;
}

CavityModeShape cavity_mode_shape(const FdtdProblem& problem, const CavityMode& mode) {
  constexpr double pi = 3.14159265358979323846;
  CavityModeShape s;
  s.mode = mode.mode;
  const Material& m = problem.media.background;
  double kappa2 = 0, k2 = 0;
  for (int d = 0; d < 3; ++d) {
    const double h = problem.spacing[d];
    s.k[d] = mode.mode[d] * pi / (static_cast<double>(problem.cells[d]) * h);
    s.kappa[d] = 2 / h * std::sin(s.k[d] * h / 2);
    kappa2 += s.kappa[d] * s.kappa[d];
    k2 += s.k[d] * s.k[d];
  }
  // E amplitude orthogonal to kappa with the mode's non-zero components.
  const auto& n = mode.mode;
  if (n[2] == 0)
    s.amplitude = {0, 0, 1};
  else if (n[1] == 0)
    s.amplitude = {0, 1, 0};
  else if (n[0] == 0)
    s.amplitude = {1, 0, 0};
  else if (mode.polarization) {
    const Real3& q = *mode.polarization;
    const double along = (q[0] * s.kappa[0] + q[1] * s.kappa[1] + q[2] * s.kappa[2]) / kappa2;
    double norm2 = 0;
    for (int d = 0; d < 3; ++d) {
      s.amplitude[d] = q[d] - along * s.kappa[d];
      norm2 += s.amplitude[d] * s.amplitude[d];
    }
    if (!(norm2 > 0)) throw std::invalid_argument("cavity mode: polarization parallel to kappa");
    for (int d = 0; d < 3; ++d) s.amplitude[d] /= std::sqrt(norm2);
  } else
    s.amplitude = {s.kappa[1] / std::sqrt(s.kappa[0] * s.kappa[0] + s.kappa[1] * s.kappa[1]),
                   -s.kappa[0] / std::sqrt(s.kappa[0] * s.kappa[0] + s.kappa[1] * s.kappa[1]), 0};
  const double speed = 1 / std::sqrt(m.eps * m.mu);
  const double dt = problem.dt();
  s.omega_discrete = 2 / dt * std::asin(dt * speed * std::sqrt(kappa2) / 2);
  s.omega_continuous = speed * std::sqrt(k2);
  return s;
}

CavityMode cavity_check_mode(const FdtdProblem& problem) {
  CavityMode best;  // (1,1,0)
  if (std::any_of(problem.cells.begin(), problem.cells.end(), [](Index n) { return n < 2; }))
    return best;
  // A quarter of the cells per half wave (k h = pi/4 on each axis: the mode turns by about 0.7
  // radians a step at Courant 0.9, so that a missed update shows at once on any grid), the mode
  // number prime to the cells so that sin(k x) is zero at the walls only.
  std::array<int, 3> numbers;
  for (int d = 0; d < 3; ++d) {
    Index m = std::max<Index>(1, problem.cells[d] / 4);
    while (m > 1 && std::gcd(m, problem.cells[d]) != 1) --m;
    numbers[d] = static_cast<int>(m);
  }
  // Of these, the direction whose smallest E component is largest (each is orthogonal to kappa on
  // a cube, where the (kappa_y, -kappa_x, 0) default leaves Ez zero).
  double largest = -1;
  for (const Real3& q : {Real3{1, -2, 1}, Real3{1, 1, -2}, Real3{-2, 1, 1}}) {
    const CavityMode m{numbers, q};
    const Real3 a = cavity_mode_shape(problem, m).amplitude;
    const double smallest = std::min({std::abs(a[0]), std::abs(a[1]), std::abs(a[2])});
    if (smallest > largest) {
      largest = smallest;
      best = m;
    }
  }
  return best;
}

namespace {

// The factor of axis d at index i of component c's mode shape; 0 off the lattice or on a wall.
double cavity_mode_factor(const FdtdProblem& problem, const CavityModeShape& shape, int c, int d,
                          Index i) {
  const Index last = problem.cells[d] - (staggered(c, d) ? 1 : 0);
  if (i > last) return 0;
  if (!staggered(c, d) && (i == 0 || i == problem.cells[d])) return 0;
  // k x = m pi (2 i + s) / (2 n), s = 1 on a staggered axis: the angle reduced in integers first,
  // so that its rounding stays that of one value below 2 pi whatever the mode number.
  constexpr double pi = 3.14159265358979323846;
  const Index n = problem.cells[d];
  const Index turns = shape.mode[d] * (2 * i + (staggered(c, d) ? 1 : 0)) % (4 * n);
  const double angle = pi * static_cast<double>(turns) / static_cast<double>(2 * n);
  return staggered(c, d) ? std::cos(angle) : std::sin(angle);
}

}  // namespace

double cavity_mode_e(const FdtdProblem& problem, const CavityModeShape& shape, int c,
                     const Index3& index, bool continuous_amplitude) {
  double factor[3];
  for (int d = 0; d < 3; ++d) {
    factor[d] = cavity_mode_factor(problem, shape, c, d, index[d]);
    if (factor[d] == 0) return 0;
  }
  Real3 amplitude = shape.amplitude;
  if (continuous_amplitude && shape.amplitude[2] == 0 && shape.amplitude[0] != 0 &&
      shape.amplitude[1] != 0) {
    const double norm = std::sqrt(shape.k[0] * shape.k[0] + shape.k[1] * shape.k[1]);
    amplitude = {shape.k[1] / norm, -shape.k[0] / norm, 0};
  }
  double value = amplitude[c];
  for (int d = 0; d < 3; ++d) value *= factor[d];
  return value;
}

CavityModeFactors cavity_mode_factors(const FdtdProblem& problem, const CavityModeShape& shape,
                                      int c) {
  CavityModeFactors f;
  f.amplitude = shape.amplitude[c];
  for (int d = 0; d < 3; ++d)
    for (Index i = 0; i <= problem.cells[d]; ++i)
      f.factor[d].push_back(cavity_mode_factor(problem, shape, c, d, i));
  return f;
}

int fdtd_arrays(MediaMode mode) {
  return mode == MediaMode::arrays ? 9 : 6;
}

int fdtd_values_per_cell(MediaMode mode) {
  return mode == MediaMode::uniform ? 18 : 21;
}

}  // namespace kstencil
