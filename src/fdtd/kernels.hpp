#pragma once
// Yee update kernels (E and H), their loops (cell, column, line) and policies.
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "arch/streams.hpp"
#include "core/decomposition.hpp"
#include "core/pairs.hpp"
#include "core/policy.hpp"
#include "fdtd/fdtd.hpp"

namespace kstencil {
namespace fdtd_detail {

// Update coefficients of one material for time step dt (double on host and device alike, so
// that uniform and per-cell coefficients round identically).
struct Coefficients {
  double ca, cb, db;
};
KOKKOS_INLINE_FUNCTION Coefficients coefficients_of(double eps, double mu, double sigma,
                                                    double dt) {
  const double loss = sigma * dt / (2 * eps);
  return {(1 - loss) / (1 + loss), (dt / eps) / (1 + loss), dt / mu};
}

// Which material a cell has in arrays mode: the block's where its node (origin + index * h) lies
// in [block_lo, block_hi], else the background. The coefficient arrays are filled from it, and the
// energy reads eps and mu from it rather than from arrays of their own (two arrays fewer).
struct MediaLookup {
  bool has_block = false;
  Material background, block;
  // Kokkos::Array, not std::array: usable in device code.
  Kokkos::Array<double, 3> block_lo{}, block_hi{}, origin{}, spacing{};
  Kokkos::Array<Index, 3> offset{};  // global index of the local (0, 0, 0)

  static MediaLookup of(const FdtdProblem& p, const Index3& offset) {
    const Media& m = p.media;
    return {m.has_block,
            m.background,
            m.block,
            {m.block_lo[0], m.block_lo[1], m.block_lo[2]},
            {m.block_hi[0], m.block_hi[1], m.block_hi[2]},
            {p.origin[0], p.origin[1], p.origin[2]},
            {p.spacing[0], p.spacing[1], p.spacing[2]},
            {offset[0], offset[1], offset[2]}};
  }
  // The material of the cell at local (i, j, k).
  KOKKOS_INLINE_FUNCTION const Material& at(const int i, const int j, const int k) const {
    const Index index[3] = {i + offset[0], j + offset[1], k + offset[2]};
    bool inside = has_block;
    for (int d = 0; d < 3; ++d) {
      const double x = origin[d] + static_cast<double>(index[d]) * spacing[d];
      inside = inside && x >= block_lo[d] && x <= block_hi[d];
    }
    return inside ? block : background;
  }
};

template <class T, class KokkosLayout>
struct YeeViews {
  Field<T, KokkosLayout> ex, ey, ez, hx, hy, hz;
  Field<T, KokkosLayout> ca, cb, db;  // arrays mode
  MediaLookup media;                  // arrays mode, for the energy's eps and mu
  T ca0, cb0, db0, eps0, mu0;         // uniform mode
  T idx, idy, idz;                    // 1 / spacing
  int oi, oj, ok;  // global index of the local (0, 0, 0): the walls are at global 0
};

// The views and coefficients the updates read: the solver's fields, the background material's
// coefficients for time step dt, and the local grid's origin.
template <class T, class KokkosLayout>
YeeViews<T, KokkosLayout> views_of(const typename YeeSolver<T, KokkosLayout>::Fields& f,
                                   const FdtdProblem& problem, double dt, const Grid& nodes) {
  YeeViews<T, KokkosLayout> v;
  v.oi = static_cast<int>(nodes.allocated.lo[0]);
  v.oj = static_cast<int>(nodes.allocated.lo[1]);
  v.ok = static_cast<int>(nodes.allocated.lo[2]);
  v.ex = f.e[0];
  v.ey = f.e[1];
  v.ez = f.e[2];
  v.hx = f.h[0];
  v.hy = f.h[1];
  v.hz = f.h[2];
  v.ca = f.ca;
  v.cb = f.cb;
  v.db = f.db;
  v.media = MediaLookup::of(problem, nodes.allocated.lo);
  const Material& m = problem.media.background;
  const Coefficients c = coefficients_of(m.eps, m.mu, m.sigma, dt);
  v.ca0 = static_cast<T>(c.ca);
  v.cb0 = static_cast<T>(c.cb);
  v.db0 = static_cast<T>(c.db);
  v.eps0 = static_cast<T>(m.eps);
  v.mu0 = static_cast<T>(m.mu);
  v.idx = static_cast<T>(1 / problem.spacing[0]);
  v.idy = static_cast<T>(1 / problem.spacing[1]);
  v.idz = static_cast<T>(1 / problem.spacing[2]);
  return v;
}

// Row j of plane s (local indices along y and the slowest axis: x for LayoutRight, z for
// LayoutLeft) from `begin` along the contiguous axis: its offset into the fields, their strides
// per axis, and which of its cells an E component updates (tangential E on the walls stays 0).
template <class KokkosLayout>
struct LineFrame {
  static constexpr int contiguous = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value ? 2 : 0;
  static constexpr int slow = 2 - contiguous;
  std::ptrdiff_t stride[3], offset;
  int begin;
  int origin[3];  // global index of the local 0 per axis
  int index[3];   // local index per axis; the contiguous axis' is begin

  template <class View>
  KOKKOS_INLINE_FUNCTION LineFrame(const View& field, const int s, const int j, const int first,
                                   const int oi, const int oj, const int ok)
      : stride{static_cast<std::ptrdiff_t>(field.stride(0)),
               static_cast<std::ptrdiff_t>(field.stride(1)),
               static_cast<std::ptrdiff_t>(field.stride(2))},
        offset(0),
        begin(first),
        origin{oi, oj, ok},
        index{0, j, 0} {
    index[slow] = s;
    index[contiguous] = first;
    offset = index[0] * stride[0] + index[1] * stride[1] + index[2] * stride[2];
  }
  // Whether E component c updates cells of this row before `end`: then from begin + first, n of
  // them (a wall along the contiguous axis is its first cell).
  KOKKOS_INLINE_FUNCTION bool updates(const int c, const int end, int& first, int& n) const {
    if ((c != 1 && index[1] + origin[1] == 0) || (c != slow && index[slow] + origin[slow] == 0))
      return false;
    first = c != contiguous && begin + origin[contiguous] == 0 ? 1 : 0;
    n = end - begin - first;
    return n > 0;
  }
};

// e[q] = ca e[q] + cb ((a[q] - a[q - da]) ia - (b[q] - b[q - db]) ib) for q in [0, n), with ca and
// cb per point in arrays mode: UpdateE's expression, in its order (one component; rows on walls).
template <bool Arrays, class T>
KOKKOS_FORCEINLINE_FUNCTION void e_line(T* KOKKOS_RESTRICT e, const T* KOKKOS_RESTRICT a,
                                        const std::ptrdiff_t da, const T ia,
                                        const T* KOKKOS_RESTRICT b, const std::ptrdiff_t db,
                                        const T ib, const T* KOKKOS_RESTRICT ca_of,
                                        const T* KOKKOS_RESTRICT cb_of, const T ca0, const T cb0,
                                        const int n) {
  for (int q = 0; q < n; ++q) {
    const T ca = Arrays ? ca_of[q] : ca0;
    const T cb = Arrays ? cb_of[q] : cb0;
    e[q] = ca * e[q] + cb * ((a[q] - a[q - da]) * ia - (b[q] - b[q - db]) * ib);
  }
}

// The fields' strides per axis and 1 / spacing, as the rows below read them.
template <class T>
struct RowCurl {
  std::ptrdiff_t sx, sy, sz;
  T idx, idy, idz;
};
template <class T, class KokkosLayout>
KOKKOS_INLINE_FUNCTION RowCurl<T> row_curl(const YeeViews<T, KokkosLayout>& v,
                                           const LineFrame<KokkosLayout>& f) {
  return {f.stride[0], f.stride[1], f.stride[2], v.idx, v.idy, v.idz};
}

// UpdateE's three expressions at cells [begin, end) of a row (each pointer at the row's first
// cell); a function of its own so that the compiler sees restrict pointers and vectorises.
template <bool Arrays, class T>
KOKKOS_FORCEINLINE_FUNCTION void e_cells(T* KOKKOS_RESTRICT ex, T* KOKKOS_RESTRICT ey,
                                         T* KOKKOS_RESTRICT ez, const T* KOKKOS_RESTRICT hx,
                                         const T* KOKKOS_RESTRICT hy, const T* KOKKOS_RESTRICT hz,
                                         const T* KOKKOS_RESTRICT ca_of,
                                         const T* KOKKOS_RESTRICT cb_of, const RowCurl<T> k,
                                         const T ca0, const T cb0, const int begin, const int end) {
  for (int q = begin; q < end; ++q) {
    const T ca = Arrays ? ca_of[q] : ca0;
    const T cb = Arrays ? cb_of[q] : cb0;
    ex[q] = ca * ex[q] + cb * ((hz[q] - hz[q - k.sy]) * k.idy - (hy[q] - hy[q - k.sz]) * k.idz);
    ey[q] = ca * ey[q] + cb * ((hx[q] - hx[q - k.sz]) * k.idz - (hz[q] - hz[q - k.sx]) * k.idx);
    ez[q] = ca * ez[q] + cb * ((hy[q] - hy[q - k.sx]) * k.idx - (hx[q] - hx[q - k.sy]) * k.idy);
  }
}
// UpdateH's three expressions at cells [begin, end) of a row, as e_cells.
template <bool Arrays, class T>
KOKKOS_FORCEINLINE_FUNCTION void h_cells(T* KOKKOS_RESTRICT hx, T* KOKKOS_RESTRICT hy,
                                         T* KOKKOS_RESTRICT hz, const T* KOKKOS_RESTRICT ex,
                                         const T* KOKKOS_RESTRICT ey, const T* KOKKOS_RESTRICT ez,
                                         const T* KOKKOS_RESTRICT db_of, const RowCurl<T> k,
                                         const T db0, const int begin, const int end) {
  for (int q = begin; q < end; ++q) {
    const T d = Arrays ? db_of[q] : db0;
    hx[q] = hx[q] - d * ((ez[q + k.sy] - ez[q]) * k.idy - (ey[q + k.sz] - ey[q]) * k.idz);
    hy[q] = hy[q] - d * ((ex[q + k.sz] - ex[q]) * k.idz - (ez[q + k.sx] - ez[q]) * k.idx);
    hz[q] = hz[q] - d * ((ey[q + k.sx] - ey[q]) * k.idx - (ex[q + k.sy] - ex[q]) * k.idy);
  }
}

// cells(begin, end) over [0, n) in chunks of a cache line, each chunk first prefetching, as
// `prefetch` says, the first `Streams` of `streams` (those the row reads from memory), so that
// one core keeps enough lines in flight (docs/PERFORMANCE.md, FDTD on hosts); bytes 0:
// the whole row in one loop, the hardware prefetchers alone.
template <int Streams, class T, class Cells>
KOKKOS_FORCEINLINE_FUNCTION void in_prefetched_chunks(const T* const (&streams)[8], const int n,
                                                      const Prefetch prefetch, const Cells& cells) {
  constexpr int chunk = prefetch_stride_bytes / static_cast<int>(sizeof(T));
  int q0 = 0;
  if (Streams > 0 && prefetch.bytes > 0)
    q0 = with_prefetch_cache(prefetch.into, [&](const auto into) {
      int q = 0;
      for (; q + chunk <= n; q += chunk) {
        for (int s = 0; s < Streams; ++s)
          prefetch_stream<decltype(into)::value>(streams[s] + q, prefetch.bytes);
        cells(q, q + chunk);
      }
      return q;
    });
  cells(q0, n);
}

// The cells [0, n) of a row, the three components in one loop (e_cells' arguments, n for begin
// and end). Every stream of the row comes from memory, the neighbours behind it from the caches.
// AfterH (the fused sweep, H's row has just read E's and written H's): nothing prefetched with
// uniform media, every stream with per-cell media, as measured (docs/PERFORMANCE.md, FDTD on
// hosts).
template <bool Arrays, bool AfterH, class T>
KOKKOS_FORCEINLINE_FUNCTION void e_row(T* ex, T* ey, T* ez, const T* hx, const T* hy, const T* hz,
                                       const T* ca_of, const T* cb_of, const RowCurl<T> k,
                                       const T ca0, const T cb0, const int n,
                                       const Prefetch prefetch) {
  const T* const streams[8] = {ex, ey, ez, hx, hy, hz, ca_of, cb_of};
  constexpr int Streams = Arrays ? 8 : AfterH ? 0 : 6;
  in_prefetched_chunks<Streams>(streams, n, prefetch, [&](const int begin, const int end) {
    e_cells<Arrays>(ex, ey, ez, hx, hy, hz, ca_of, cb_of, k, ca0, cb0, begin, end);
  });
}
// As e_row; slow: the slowest axis. E component c is read along the axes other than c: from
// memory at the next plane, except the slowest axis' own component, which is read from memory in
// this one.
template <bool Arrays, class T>
KOKKOS_FORCEINLINE_FUNCTION void h_row(T* hx, T* hy, T* hz, const T* ex, const T* ey, const T* ez,
                                       const T* db_of, const RowCurl<T> k, const int slow,
                                       const T db0, const int n, const Prefetch prefetch) {
  const std::ptrdiff_t plane = slow == 0 ? k.sx : k.sz;
  const T* const streams[8] = {
      hx,    hy,     hz, ex + (slow == 0 ? 0 : plane), ey + plane, ez + (slow == 2 ? 0 : plane),
      db_of, nullptr};
  in_prefetched_chunks<Arrays ? 7 : 6>(streams, n, prefetch, [&](const int begin, const int end) {
    h_cells<Arrays>(hx, hy, hz, ex, ey, ez, db_of, k, db0, begin, end);
  });
}

// Cells (i, j, k) and the next along the contiguous axis, whose values in every field are one
// aligned pair (pairs variant; `i`, `j`, `k` local, the contiguous index even): the offset of the
// first, the fields' strides, and which of the two lie in the update's range [begin, end) along the
// contiguous axis.
template <class KokkosLayout>
struct PairFrame {
  static constexpr int contiguous = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value ? 2 : 0;
  std::ptrdiff_t stride[3], offset;
  int index[3];
  bool in[2];

  template <class View>
  KOKKOS_INLINE_FUNCTION PairFrame(const View& field, const int i, const int j, const int k,
                                   const int begin, const int end)
      : stride{static_cast<std::ptrdiff_t>(field.stride(0)),
               static_cast<std::ptrdiff_t>(field.stride(1)),
               static_cast<std::ptrdiff_t>(field.stride(2))},
        offset(i * stride[0] + j * stride[1] + k * stride[2]),
        index{i, j, k},
        in{index[contiguous] >= begin, index[contiguous] + 1 < end} {}
  // The pair of `field` at the cells, or at their neighbours `step` (-1 or +1) along `axis`: along
  // the contiguous axis the value beside the pair completes it (read only where `needed`).
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION Pair<T> at(const T* const field, const int axis, const int step,
                                         const bool needed) const {
    const T* const q = field + offset;
    if (axis != contiguous) return load_pair(q + step * stride[axis]);
    const Pair<T> here = load_pair(q);
    if (step < 0) return {needed ? q[-1] : T(0), here.first};
    return {here.second, needed ? q[2] : T(0)};
  }
  // Stores the pair, or the one value of it in the range: a value of a neighbouring range may be
  // another part's to write, at the same time.
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION void store(T* const field, const Pair<T> value) const {
    T* const q = field + offset;
    if (in[0] && in[1])
      store_pair<false>(q, value.first, value.second);
    else if (in[0])
      q[0] = value.first;
    else
      q[1] = value.second;
  }
};

// E^n -> E^(n+1) at cell (i, j, k) (local indices); tangential E on the walls (global j or k = 0
// for Ex, ...) is not updated and stays zero (PEC). Cells are [0, nx) x [0, ny) x [0, nz).
template <class T, class KokkosLayout, bool Arrays>
struct UpdateE {
  YeeViews<T, KokkosLayout> v;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const T ca = Arrays ? v.ca(i, j, k) : v.ca0;
    const T cb = Arrays ? v.cb(i, j, k) : v.cb0;
    if (j + v.oj > 0 && k + v.ok > 0)
      v.ex(i, j, k) = ca * v.ex(i, j, k) + cb * ((v.hz(i, j, k) - v.hz(i, j - 1, k)) * v.idy -
                                                 (v.hy(i, j, k) - v.hy(i, j, k - 1)) * v.idz);
    if (i + v.oi > 0 && k + v.ok > 0)
      v.ey(i, j, k) = ca * v.ey(i, j, k) + cb * ((v.hx(i, j, k) - v.hx(i, j, k - 1)) * v.idz -
                                                 (v.hz(i, j, k) - v.hz(i - 1, j, k)) * v.idx);
    if (i + v.oi > 0 && j + v.oj > 0)
      v.ez(i, j, k) = ca * v.ez(i, j, k) + cb * ((v.hy(i, j, k) - v.hy(i - 1, j, k)) * v.idx -
                                                 (v.hx(i, j, k) - v.hx(i, j - 1, k)) * v.idy);
  }
  // The cells [begin, end) along the contiguous axis of row j in plane s (the slowest axis), the
  // three components in one loop host compilers vectorise (e_row): the same values as operator()
  // at each cell. AfterH: the fused sweep's row (e_row).
  template <bool AfterH = false>
  KOKKOS_INLINE_FUNCTION void line(const int s, const int j, const int begin, const int end,
                                   const Prefetch prefetch) const {
    const LineFrame<KokkosLayout> f{v.ex, s, j, begin, v.oi, v.oj, v.ok};
    const T ca = v.ca0, cb = v.cb0;
    int first[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    bool all = true;
    for (int c = 0; c < 3; ++c) all = f.updates(c, end, first[c], n[c]) && all;
    const auto update = [&](const int c, const Field<T, KokkosLayout>& e,
                            const Field<T, KokkosLayout>& a, const int da, const T ia,
                            const Field<T, KokkosLayout>& b, const int db, const T ib,
                            const int cells) {
      if (cells <= 0) return;
      const std::ptrdiff_t at = f.offset + first[c];
      e_line<Arrays>(e.data() + at, a.data() + at, f.stride[da], ia, b.data() + at, f.stride[db],
                     ib, Arrays ? v.ca.data() + at : nullptr, Arrays ? v.cb.data() + at : nullptr,
                     ca, cb, cells);
    };
    // One component at a time: rows on a wall, and a row's first cell on the wall across the
    // contiguous axis (only that axis' component updates it); the rest of the row in e_row.
    int fused_start = 0;
    for (int c = 0; c < 3; ++c) fused_start = first[c] > fused_start ? first[c] : fused_start;
    update(0, v.ex, v.hz, 1, v.idy, v.hy, 2, v.idz, all ? fused_start - first[0] : n[0]);
    update(1, v.ey, v.hx, 2, v.idz, v.hz, 0, v.idx, all ? fused_start - first[1] : n[1]);
    update(2, v.ez, v.hy, 0, v.idx, v.hx, 1, v.idy, all ? fused_start - first[2] : n[2]);
    if (!all) return;
    const std::ptrdiff_t at = f.offset + fused_start;
    e_row<Arrays, AfterH>(v.ex.data() + at, v.ey.data() + at, v.ez.data() + at, v.hx.data() + at,
                          v.hy.data() + at, v.hz.data() + at, Arrays ? v.ca.data() + at : nullptr,
                          Arrays ? v.cb.data() + at : nullptr, row_curl(v, f), ca, cb,
                          end - begin - fused_start, prefetch);
  }
  // Cells (i, j, k) and the next along the contiguous axis, those of them in [begin, end) along it
  // (pairs variant): operator()'s values, from pairs of values.
  KOKKOS_FORCEINLINE_FUNCTION void pair(const int i, const int j, const int k, const int begin,
                                        const int end) const {
    const PairFrame<KokkosLayout> f{v.ex, i, j, k, begin, end};
    constexpr int C = PairFrame<KokkosLayout>::contiguous;
    const int global[3] = {i + v.oi, j + v.oj, k + v.ok};
    const Pair<T> ca = Arrays ? load_pair(v.ca.data() + f.offset) : Pair<T>{v.ca0, v.ca0};
    const Pair<T> cb = Arrays ? load_pair(v.cb.data() + f.offset) : Pair<T>{v.cb0, v.cb0};
    // Component c (normal to the walls it is zero on: the two other axes): e = ca e + cb ((a -
    // a[-da]) ia - (b - b[-db]) ib).
    const auto update = [&](const int c, const Field<T, KokkosLayout>& e,
                            const Field<T, KokkosLayout>& a, const int da, const T ia,
                            const Field<T, KokkosLayout>& b, const int db, const T ib) {
      bool updates[2] = {true, true};
      for (int axis = 0; axis < 3; ++axis) {
        if (axis == c) continue;
        updates[0] = updates[0] && global[axis] > 0;
        updates[1] = updates[1] && global[axis] + (axis == C ? 1 : 0) > 0;
      }
      if (!updates[0] && !updates[1]) return;
      const Pair<T> old = load_pair(e.data() + f.offset);
      const Pair<T> a0 = load_pair(a.data() + f.offset), b0 = load_pair(b.data() + f.offset);
      const Pair<T> a1 = f.at(a.data(), da, -1, updates[0] && f.in[0]);
      const Pair<T> b1 = f.at(b.data(), db, -1, updates[0] && f.in[0]);
      const T first = ca.first * old.first +
                      cb.first * ((a0.first - a1.first) * ia - (b0.first - b1.first) * ib);
      const T second = ca.second * old.second +
                       cb.second * ((a0.second - a1.second) * ia - (b0.second - b1.second) * ib);
      f.store(e.data(), Pair<T>{updates[0] ? first : old.first, updates[1] ? second : old.second});
    };
    update(0, v.ex, v.hz, 1, v.idy, v.hy, 2, v.idz);
    update(1, v.ey, v.hx, 2, v.idz, v.hz, 0, v.idx);
    update(2, v.ez, v.hy, 0, v.idx, v.hx, 1, v.idy);
  }
};

// H^(n-1/2) -> H^(n+1/2) at cell (i, j, k). Hx on the x walls (i = nx) is never touched: its curl
// involves only wall-tangential E, which is zero, so it stays zero.
template <class T, class KokkosLayout, bool Arrays>
struct UpdateH {
  YeeViews<T, KokkosLayout> v;
  KOKKOS_FORCEINLINE_FUNCTION void next(const int i, const int j, const int k, T& nx, T& ny,
                                        T& nz) const {
    const T db = Arrays ? v.db(i, j, k) : v.db0;
    nx = v.hx(i, j, k) - db * ((v.ez(i, j + 1, k) - v.ez(i, j, k)) * v.idy -
                               (v.ey(i, j, k + 1) - v.ey(i, j, k)) * v.idz);
    ny = v.hy(i, j, k) - db * ((v.ex(i, j, k + 1) - v.ex(i, j, k)) * v.idz -
                               (v.ez(i + 1, j, k) - v.ez(i, j, k)) * v.idx);
    nz = v.hz(i, j, k) - db * ((v.ey(i + 1, j, k) - v.ey(i, j, k)) * v.idx -
                               (v.ex(i, j + 1, k) - v.ex(i, j, k)) * v.idy);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    T nx, ny, nz;
    next(i, j, k, nx, ny, nz);
    v.hx(i, j, k) = nx;
    v.hy(i, j, k) = ny;
    v.hz(i, j, k) = nz;
  }
  // As UpdateE::line; H has no walls.
  KOKKOS_INLINE_FUNCTION void line(const int s, const int j, const int begin, const int end,
                                   const Prefetch prefetch) const {
    const LineFrame<KokkosLayout> f{v.ex, s, j, begin, v.oi, v.oj, v.ok};
    const std::ptrdiff_t at = f.offset;
    h_row<Arrays>(v.hx.data() + at, v.hy.data() + at, v.hz.data() + at, v.ex.data() + at,
                  v.ey.data() + at, v.ez.data() + at, Arrays ? v.db.data() + at : nullptr,
                  row_curl(v, f), LineFrame<KokkosLayout>::slow, v.db0, end - begin, prefetch);
  }
  // As UpdateE::pair.
  KOKKOS_FORCEINLINE_FUNCTION void pair(const int i, const int j, const int k, const int begin,
                                        const int end) const {
    const PairFrame<KokkosLayout> f{v.ex, i, j, k, begin, end};
    const Pair<T> d = Arrays ? load_pair(v.db.data() + f.offset) : Pair<T>{v.db0, v.db0};
    const auto update = [&](const Field<T, KokkosLayout>& h, const Field<T, KokkosLayout>& a,
                            const int da, const T ia, const Field<T, KokkosLayout>& b, const int db,
                            const T ib) {
      const Pair<T> old = load_pair(h.data() + f.offset);
      const Pair<T> a0 = load_pair(a.data() + f.offset), b0 = load_pair(b.data() + f.offset);
      const Pair<T> a1 = f.at(a.data(), da, 1, f.in[1]);
      const Pair<T> b1 = f.at(b.data(), db, 1, f.in[1]);
      f.store(
          h.data(),
          Pair<T>{old.first - d.first * ((a1.first - a0.first) * ia - (b1.first - b0.first) * ib),
                  old.second -
                      d.second * ((a1.second - a0.second) * ia - (b1.second - b0.second) * ib)});
    };
    update(v.hx, v.ez, 1, v.idy, v.ey, 2, v.idz);
    update(v.hy, v.ex, 2, v.idz, v.ez, 0, v.idx);
    update(v.hz, v.ey, 0, v.idx, v.ex, 1, v.idy);
  }
  // mu H^(n-1/2) . H^(n+1/2) of the cell, before the update (which computes the same values).
  KOKKOS_FORCEINLINE_FUNCTION double energy(const int i, const int j, const int k) const {
    T nx, ny, nz;
    next(i, j, k, nx, ny, nz);
    const double mu = static_cast<double>(Arrays ? static_cast<T>(v.media.at(i, j, k).mu) : v.mu0);
    return mu * (static_cast<double>(v.hx(i, j, k)) * nx + static_cast<double>(v.hy(i, j, k)) * ny +
                 static_cast<double>(v.hz(i, j, k)) * nz);
  }
};

// eps |E|^2 at node (i, j, k).
template <class T, class KokkosLayout, bool Arrays>
struct ElectricEnergy {
  YeeViews<T, KokkosLayout> v;
  KOKKOS_FORCEINLINE_FUNCTION double energy(const int i, const int j, const int k) const {
    const double eps =
        static_cast<double>(Arrays ? static_cast<T>(v.media.at(i, j, k).eps) : v.eps0);
    const double x = v.ex(i, j, k), y = v.ey(i, j, k), z = v.ez(i, j, k);
    return eps * (x * x + y * y + z * z);
  }
};

// One cell per work item: policy dimensions (i, j, k), or (k, j, i) when reversed.
template <class Update, bool Reversed>
struct CellLoop {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    update(Reversed ? p2 : p0, j, Reversed ? p0 : p2);
  }
};
// One column along the slowest axis per work item: policy (contiguous index, j, 0); LayoutRight
// columns run along x, LayoutLeft columns along z.
template <class Update, bool XColumns>
struct ColumnLoop {
  Update update;
  int start, length;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, const int j, const int) const {
    for (int s = start; s < start + length; ++s) update(XColumns ? s : c, j, XColumns ? c : s);
  }
};
// One row along the contiguous axis per work item: policy (plane along the slowest axis, j, 0),
// Iterate::Right, so a thread sweeps its tile's rows plane by plane.
template <class Update>
struct LineLoop {
  Update update;
  int begin, end;
  Prefetch prefetch;
  KOKKOS_INLINE_FUNCTION void operator()(const int s, const int j, const int) const {
    update.line(s, j, begin, end, prefetch);
  }
};
// Two cells along the contiguous axis per work item: policy as CellLoop's, the contiguous axis'
// index counting pairs; the cells in [begin, end) along it are updated.
template <class Update, bool Reversed>
struct PairLoop {
  Update update;
  int begin, end;
  static constexpr bool right =
      std::is_same<typename decltype(std::declval<Update>().v.ex)::array_layout,
                   Kokkos::LayoutRight>::value;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    const int i = Reversed ? p2 : p0, k = Reversed ? p0 : p2;
    update.pair(right ? i : 2 * i, j, right ? 2 * k : k, begin, end);
  }
};
// Runs the update over the cells as `plan` says (variant, mapping, bounds, tile, launch bound).
template <class Update>
void launch_update(const char* label, const FdtdPlan& plan, const Update& update) {
  const FdtdLaunch& l = plan.launch;
  if (plan.config.variant == FdtdVariant::column) {
    // Columns along x for LayoutRight, along z for LayoutLeft: the contiguous axis is in the
    // policy.
    constexpr bool X =
        std::is_same<typename decltype(update.v.ex)::array_layout, Kokkos::LayoutRight>::value;
    dispatch_launch_bound(plan.config.launch_bounds, [&](auto bound) {
      const auto policy =
          planned_policy<Kokkos::Iterate::Left, decltype(bound)::value>(l.lower, l.upper, l.tile);
      Kokkos::parallel_for(label, policy,
                           ColumnLoop<Update, X>{update, l.loop_start, l.loop_length});
    });
    return;
  }
  if (fdtd_rows(plan.config.variant)) {
    const auto policy = planned_policy<Kokkos::Iterate::Right, 0>(l.lower, l.upper, l.tile);
    Kokkos::parallel_for(
        label, policy,
        LineLoop<Update>{update, l.loop_start, l.loop_start + l.loop_length, plan.config.prefetch});
    return;
  }
  dispatch_traits(
      plan.mapping, plan.config.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
        constexpr bool Reversed = decltype(reversed)::value;
        const auto policy = planned_policy<decltype(iterate)::value, decltype(bound)::value>(
            l.lower, l.upper, l.tile);
        if (plan.config.variant == FdtdVariant::pairs)
          Kokkos::parallel_for(
              label, policy,
              PairLoop<Update, Reversed>{update, l.loop_start, l.loop_start + l.loop_length});
        else
          Kokkos::parallel_for(label, policy, CellLoop<Update, Reversed>{update});
      });
}

// The sum over every rank's `box` (local indices) of term.energy(i, j, k), the same bits whatever
// the threads, tiles and ranks: K-fold binned summation (Demmel and Nguyen, as in ReproBLAS) with
// two bins fixed by the largest term and the number of terms. Each term is split into multiples
// of the bins' units, whose sums are exact in any order; the remainder left out is below
// terms^2 2^-100 of the largest term.
template <class KokkosLayout, class Term>
double reproducible_sum(const char* label, const Box& box, double terms, const Term& term,
                        MPI_Comm comm) {
  const FieldPolicy3<KokkosLayout> policy({int(box.lo[0]), int(box.lo[1]), int(box.lo[2])},
                                          {int(box.hi[0]), int(box.hi[1]), int(box.hi[2])});
  double largest = 0;
  Kokkos::parallel_reduce(
      label, policy,
      KOKKOS_LAMBDA(const int i, const int j, const int k, double& m) {
        const double t = term.energy(i, j, k);
        const double magnitude = t < 0 ? -t : t;
        if (magnitude > m) m = magnitude;
      },
      Kokkos::Max<double>(largest));
  largest = global_max(largest, comm);
  if (largest == 0) return 0;
  // Bin k: sigma_k = 1.5 2^e_k with terms * (largest part) <= 2^(e_k - 2), so every partial sum
  // of the parts is a multiple of ulp(sigma_k) below 2^e_k: exact.
  int count_bits = 0;
  while (std::ldexp(1.0, count_bits) < terms) ++count_bits;
  int e0 = 0;
  std::frexp(largest, &e0);  // largest < 2^e0
  e0 += count_bits + 2;
  const int e1 = e0 - 53 + count_bits + 2;
  const double s0 = 1.5 * std::ldexp(1.0, e0), s1 = 1.5 * std::ldexp(1.0, e1);
  double bins[2] = {0, 0};
  Kokkos::parallel_reduce(
      label, policy,
      KOKKOS_LAMBDA(const int i, const int j, const int k, double& sum) {
        const double t = term.energy(i, j, k);
        sum += (s0 + t) - s0;
      },
      bins[0]);
  Kokkos::parallel_reduce(
      label, policy,
      KOKKOS_LAMBDA(const int i, const int j, const int k, double& sum) {
        const double t = term.energy(i, j, k);
        const double r = t - ((s0 + t) - s0);
        sum += (s1 + r) - s1;
      },
      bins[1]);
  const std::vector<double> total = global_sums({bins[0], bins[1]}, comm);
  return total[0] + total[1];
}

}  // namespace fdtd_detail
}  // namespace kstencil
