#pragma once
// The 7-point Laplacian (seed 000, AMD lab notes kernels 5 and 7) as Kokkos MDRange kernels.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/exec_space.hpp"
#include "core/field.hpp"
#include "core/grid.hpp"
#include "core/mapping.hpp"

namespace kstencil {

enum class LaplacianVariant {
  mdrange,           // one point per work item
  register_blocked,  // m x m_slow points per work item (y, slowest axis), neighbours reused from
                     // registers
  subdomain,         // the y range split into parts run one after another
  line,              // a work item sweeps a whole line of the contiguous axis (vectorised on CPUs)
  march,             // a work item (m points along y) marches along the slowest axis
  scratch            // a thread team shares its tile and halo through team scratch memory
};

LaplacianVariant parse_laplacian_variant(const std::string& word);
std::string to_string(LaplacianVariant variant);

struct LaplacianKernelConfig {
  LaplacianVariant variant = LaplacianVariant::mdrange;
  Layout layout = Layout::right;  // of the fields (apply_laplacian sets it from its View type)
  int element_bytes = 8;          // of the field values (apply_laplacian sets it likewise)
  Mapping mapping;
  std::array<std::int64_t, 3> tile{0, 0, 0};  // per axis x, y, z; 0 = Kokkos' default entry
  int launch_bounds = 0;                      // 0 = none, else max threads per block
  int m = 1;       // points per work item along y (register_blocked, subdomain, march)
  int m_slow = 1;  // points per work item along the slowest axis (register_blocked, subdomain)
  // Register blocks a work item updates one after another along the slowest axis
  // (register_blocked, subdomain): the rows consecutive blocks share can come from the L1.
  int blocks_per_item = 1;
  int parts = 1;  // y parts (subdomain, scratch); slabs along the slowest axis (march)
  // Subdomain column kernels: all parts in one launch, the part index folded into the slowest
  // axis' policy dimension (the last the GPU schedules), instead of one launch per part.
  bool parts_in_one_launch = true;
  bool streaming_stores = true;  // column, march and scratch kernels: GPU stores marked evict-first
  // Column kernels also store 0 at the point before and after each updated row along the
  // contiguous axis, so that the row's first and last 32-byte sectors are written whole.
  bool zero_row_ends = true;
};

// Whether `config` launches the column (register-blocked) kernel.
bool is_column_kernel(const LaplacianKernelConfig& config);
// The axis along which `config` stores 0 at both ends of each updated row (the contiguous axis:
// 2 in layout right, 0 in layout left), -1 if it leaves every point outside the update box alone.
int zeroed_row_end_axis(const LaplacianKernelConfig& config);

// The scratch variant's team tile: points along the contiguous axis and y, and planes of the
// slowest axis a team marches through (its slab): config.tile (axis order x, y, z) with 0 entries
// taken from the default 64 x 4 x 64, within 2% of the best tile measured at 512^3 on H100 in
// either layout (docs/PERFORMANCE.md, eighth run).
struct ScratchTile {
  std::int64_t contiguous = 64, y = 4, slow = 64;
};
ScratchTile scratch_tile(const LaplacianKernelConfig& config);
// Team scratch of one tile: its points and the halo around them.
template <class T>
std::int64_t scratch_bytes(const ScratchTile& tile) {
  return 2 * (tile.y + 2) * (tile.contiguous + 2) * static_cast<std::int64_t>(sizeof(T));
}

// f = seed 000's 7-point formula, evaluated in one fixed order by every variant so that results
// agree bitwise: u*(-2)(1/hx^2+1/hy^2+1/hz^2) + (x neighbours)/hx^2 + (y ...)/hy^2 + (z ...)/hz^2.
template <class T>
struct StencilCoeffs {
  T center, x, y, z;
  static StencilCoeffs from_spacing(const Real3& h) {
    const T ix = static_cast<T>(1.0 / (h[0] * h[0]));
    const T iy = static_cast<T>(1.0 / (h[1] * h[1]));
    const T iz = static_cast<T>(1.0 / (h[2] * h[2]));
    return {static_cast<T>(-2) * (ix + iy + iz), ix, iy, iz};
  }
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7(const T c, const T xm, const T xp, const T ym, const T yp,
                                       const T zm, const T zp, const StencilCoeffs<T>& a) {
  return c * a.center + (xm + xp) * a.x + (ym + yp) * a.y + (zm + zp) * a.z;
}

// Kernels that walk the slowest axis, y and the contiguous axis (x, y, z in LayoutRight; z, y, x in
// LayoutLeft) index fields by those roles (kernels.hpp) and evaluate the stencil by them through
// stencil7_by_role.
template <class KokkosLayout>
KOKKOS_FORCEINLINE_FUNCTION constexpr bool x_is_slowest() {
  return std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
}

// stencil7 with the neighbours given by axis role, passed on in stencil7's x, y, z order.
template <class KokkosLayout, class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7_by_role(const T centre, const T s_minus, const T s_plus,
                                               const T y_minus, const T y_plus, const T c_minus,
                                               const T c_plus, const StencilCoeffs<T>& a) {
  return x_is_slowest<KokkosLayout>()
             ? stencil7(centre, s_minus, s_plus, y_minus, y_plus, c_minus, c_plus, a)
             : stencil7(centre, c_minus, c_plus, y_minus, y_plus, s_minus, s_plus, a);
}

// Points the Laplacian updates on this rank: interior of the domain within the owned box.
inline Box laplacian_update_box(const Grid& grid) {
  return grid.owned.intersect(grid.interior());
}

// One kernel launch as Kokkos will run it: tile and extents in policy-dimension order.
struct LaunchShape {
  std::array<std::int64_t, 3> tile{0, 0, 0};
  std::array<std::int64_t, 3> extents{0, 0, 0};
};

// The launches `config` makes on `grid`, with 0 tile entries replaced by Kokkos' default entries.
std::vector<LaunchShape> laplacian_launch_shapes(const LaplacianKernelConfig& config,
                                                 const Grid& grid);
// Why `config` cannot run on `limits`, or nullopt. Checks every launch's tile.
std::optional<std::string> laplacian_config_problem(const LaplacianKernelConfig& config,
                                                    const Grid& grid, const ExecLimits& limits);

// f = Laplacian(u) on laplacian_update_box(grid); other points of f are not touched.
// Throws std::invalid_argument if the configuration is not valid on the default execution space.
template <class T, class KokkosLayout>
void apply_laplacian(const LaplacianKernelConfig& config, const Grid& grid,
                     const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f);
// The same without the check, for timed loops: `config` must have passed
// laplacian_config_problem() with config.layout matching KokkosLayout.
template <class T, class KokkosLayout>
void apply_laplacian_checked_before(const LaplacianKernelConfig& config, const Grid& grid,
                                    const Field<const T, KokkosLayout>& u,
                                    const Field<T, KokkosLayout>& f);

// Number of y parts for the subdomain variant so that `planes` planes (cross-sections normal to the
// slowest axis) of one part fit in a quarter of the last-level cache; parts hold whole blocks of m
// points along y. A work item reads its block's extent along the slowest axis plus two planes,
// m_slow + 2.
int auto_subdomain_parts(const Grid& grid, Layout layout, int element_bytes, std::int64_t llc_bytes,
                         int m, int planes);

// Largest register block m x m_slow the register-blocked and subdomain variants compile: larger
// blocks need 254-255 registers or spill on sm_90 (docs/PERFORMANCE.md, "Registers and spills"),
// and leaving them out keeps the GPU builds' kernel count down.
inline constexpr int max_block_points = 16;
inline bool too_large_register_block(const LaplacianKernelConfig& config) {
  const bool blocked = config.variant == LaplacianVariant::register_blocked ||
                       config.variant == LaplacianVariant::subdomain;
  return blocked && config.m * config.m_slow > max_block_points;
}

// Number of slabs along the slowest axis for the march variant: enough work items (one per block
// of m points along y in a plane) for `waves` times the threads the device holds at once, at
// least march_min_slab planes per slab (each slab loads three planes before its first update).
inline constexpr int march_min_slab = 8;
int auto_march_parts(const Grid& grid, Layout layout, std::int64_t resident_threads, int waves,
                     int m);

// Test fields. quadratic: u = (x-xc)^2 + 2 (y-yc)^2 + 3 (z-zc)^2 with offsets taken in index space
// (exact for power-of-two spacings), whose Laplacian is exactly quadratic_laplacian everywhere.
// sine: u = sin(pi X) sin(pi Y) sin(pi Z), X = (x - x0)/Lx over the domain, Laplacian
// -pi^2 (1/Lx^2 + 1/Ly^2 + 1/Lz^2) u.
enum class TestField { quadratic, sine };
TestField parse_test_field(const std::string& word);
inline constexpr double quadratic_laplacian = 12.0;

struct TestFieldSpec {
  TestField kind;
  Kokkos::Array<Index, 3> points;  // Kokkos::Array: usable in device code
  Kokkos::Array<double, 3> spacing;
  static TestFieldSpec of(TestField kind, const Grid& grid) {
    return {kind,
            {grid.points[0], grid.points[1], grid.points[2]},
            {grid.spacing[0], grid.spacing[1], grid.spacing[2]}};
  }
};

// Value of the test field at global point (i, j, k), on host or device.
KOKKOS_INLINE_FUNCTION double test_field_value(const TestFieldSpec& s, Index i, Index j, Index k) {
#if KOKKOS_VERSION >= 30700
  using Kokkos::sin;
#else
  using Kokkos::Experimental::sin;
#endif
  const Index g[3] = {i, j, k};
  if (s.kind == TestField::quadratic) {
    double sum = 0;
    for (int d = 0; d < 3; ++d) {
      const double offset = static_cast<double>(g[d] - s.points[d] / 2) * s.spacing[d];
      sum += (d + 1) * offset * offset;
    }
    return sum;
  }
  constexpr double pi = 3.14159265358979323846;
  double product = 1;
  for (int d = 0; d < 3; ++d)
    product *= sin(pi * static_cast<double>(g[d]) / static_cast<double>(s.points[d] - 1));
  return product;
}

// Analytic Laplacian of the test field at global point (i, j, k).
double analytic_laplacian(const TestFieldSpec& spec, Index i, Index j, Index k);

// u = the test field over the grid's allocated box.
template <class T, class KokkosLayout>
void fill_test_field(const TestFieldSpec& spec, const Grid& grid, const Field<T, KokkosLayout>& u);

struct LaplacianVerification {
  double quadratic_max_error = 0, quadratic_tolerance = 0;
  double reference_max_diff = 0, reference_tolerance = 0;
  std::int64_t reference_mismatches = 0;  // points not bitwise equal to the reference
  std::int64_t untouched_violations = 0;  // points outside the update box that were written
  bool passed = false;
};

// Checks `config` on `grid`: exactness on the quadratic field and agreement with an independent
// host reference on `field`; every point outside the update box must stay untouched.
template <class T, class KokkosLayout>
LaplacianVerification verify_laplacian(const LaplacianKernelConfig& config, const Grid& grid,
                                       TestField field);

}  // namespace kstencil
