#include "laplacian/laplacian_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "core/output.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"
#include "laplacian/kernels.hpp"

namespace kstencil {

namespace {
// Work items per resident thread the march variant's automatic slab count aims for.
constexpr int march_waves = 2;

// Hosts with at least this many hardware threads run the host default's line kernel in y blocks
// marched through planes (see default_laplacian_kernel and many_core_host_tile).
constexpr int y_blocks_min_host_threads = 8;

// The host default's tile on many-core hosts (x y z, in the line policy's units): planes along the
// slowest axis by work items of `rows_per_item` rows, 0 along the contiguous axis. Each thread
// marches a block of R rows through P planes and reads R + 2 rows of P + 2 planes to do so; the
// three planes' R + 2 rows it works on must stay in a quarter of the core's L2. Over the splits of
// the threads into a plane chunks by b row blocks (a x b = threads) this picks the tile whose
// busiest thread reads the fewest rows. Where no split fits (or the L2 is unknown) a tile is one
// work item by a thread's share of the planes, the smallest block.
std::array<std::int64_t, 3> many_core_host_tile(const Box& box, Layout layout, int threads,
                                                std::int64_t core_cache_bytes, int element_bytes,
                                                int rows_per_item) {
  const int slow = layout == Layout::right ? 0 : 2;
  const int contiguous = 2 - slow;
  const std::int64_t planes = std::max<std::int64_t>(box.extent(slow), 1);
  const std::int64_t rows = std::max<std::int64_t>(box.extent(1), 1);
  const std::int64_t items = (rows + rows_per_item - 1) / rows_per_item;
  const std::int64_t t = std::max(threads, 1);
  std::int64_t best_chunk = (planes + t - 1) / t, best_items = 1;
  std::int64_t best_rows_read = -1;
  for (std::int64_t a = 1; a <= t; ++a) {
    if (t % a != 0) continue;
    const std::int64_t b = t / a;
    const std::int64_t plane_chunk = (planes + a - 1) / a;
    const std::int64_t items_per_block = (items + b - 1) / b;
    const std::int64_t block_rows = std::min(items_per_block * rows_per_item, rows);
    const std::int64_t slab_bytes =
        3 * (block_rows + 2) * (box.extent(contiguous) + 2) * element_bytes;
    if (core_cache_bytes <= 0 || 4 * slab_bytes > core_cache_bytes) continue;
    const std::int64_t tiles = ((planes + plane_chunk - 1) / plane_chunk) *
                               ((items + items_per_block - 1) / items_per_block);
    const std::int64_t rows_read = (tiles + t - 1) / t * (block_rows + 2) * (plane_chunk + 2);
    if (best_rows_read < 0 || rows_read < best_rows_read) {
      best_rows_read = rows_read;
      best_chunk = plane_chunk;
      best_items = items_per_block;
    }
  }
  std::array<std::int64_t, 3> tile{0, best_items, 0};
  tile[slow] = best_chunk;
  return tile;
}

// The host default's tile where a work item updates several planes together and the threads are
// few (x y z, in the line policy's units): each thread a chunk of planes, swept in blocks of rows
// whose planes_per_item + 2 planes fit half a core's L2, so that the two planes beside a block of
// planes come from the L2 when the next block reads them again. Kokkos' tile where the L2 is
// unknown or not even one work item's rows fit.
std::array<std::int64_t, 3> few_core_host_tile(const Box& box, Layout layout, int threads,
                                               std::int64_t core_cache_bytes, int element_bytes,
                                               int rows_per_item, int planes_per_item) {
  const int slow = layout == Layout::right ? 0 : 2;
  const int contiguous = 2 - slow;
  const std::int64_t plane_row_bytes =
      (planes_per_item + 2) * (box.extent(contiguous) + 2) * element_bytes;
  const std::int64_t rows = core_cache_bytes / 2 / plane_row_bytes - 2;
  const std::int64_t items = std::min<std::int64_t>(
      rows / rows_per_item, (box.extent(1) + rows_per_item - 1) / rows_per_item);
  if (core_cache_bytes <= 0 || items < 1) return {0, 0, 0};
  std::array<std::int64_t, 3> tile{0, items, 0};
  const std::int64_t t = std::max(threads, 1);
  tile[slow] = (box.extent(slow) + t - 1) / t;
  return tile;
}

// The automatic part count of `config`'s variant: march slabs fill the device; the other variants'
// y parts keep the planes a work item reads (its extent along the slowest axis plus one either
// side) within the last-level cache.
int auto_parts(const LaplacianKernelConfig& config, const Grid& grid, const ExecLimits& limits) {
  if (config.variant == LaplacianVariant::march)
    return auto_march_parts(grid, config.layout, limits.resident_threads, march_waves, config.m);
  if (config.variant == LaplacianVariant::scratch) return 1;
  return auto_subdomain_parts(grid, config.layout, config.element_bytes, limits.llc_bytes, config.m,
                              config.m_slow + 2);
}
}  // namespace

LaplacianKernelConfig default_laplacian_kernel(const ExecLimits& limits, Layout layout,
                                               const Mapping& mapping, const Grid& grid,
                                               int element_bytes) {
  LaplacianKernelConfig config;
  config.mapping = mapping;
  config.layout = layout;
  config.element_bytes = element_bytes;
  // Host (2-core development machine, Kokkos 3.4, 256^3 double): MDRange reaches 0.31 of the
  // copy bandwidth whatever the tile, register blocking 0.09-0.14; lines along the contiguous axis
  // let the compiler vectorise (docs/PERFORMANCE.md). With AVX the lines' results go out through
  // non-temporal stores with a read-ahead of the plane above, fenced once per work item of 16 rows:
  // at 384^3 and 512^3 the stencil then moves 1.17 and 1.23 times the bytes per second it moves
  // with plain stores (medians of 6 alternating runs each); a fence per row cost 8%.
  config.variant = LaplacianVariant::line;
  config.m = 16;
  // With many cores the L3 no longer feeds every core the two planes a sweep reads again: on the
  // GPU machine's 16-core Xeon host (2 MiB L2 per core) y blocks of 16 rows marched through a
  // thread's share of the planes, which keep those planes' rows in the L2, moved 0.68-0.81 of the
  // same-run copy (median 0.78) against 0.60-0.72 (0.63) for Kokkos' default tile (384^3 and
  // 512^3, both layouts, 16 threads, 3 alternating runs each). Taller blocks through fewer plane
  // chunks (many_core_host_tile) read fewer rows twice: against those 16-row blocks, medians of 4
  // alternating runs per layout reached 0.81-0.83 against 0.78-0.79 at 384^3 and 512^3 and 0.82
  // against 0.73 with 8 threads at 384^3; at 256^3 they were level (docs/PERFORMANCE.md). On the
  // 2-core development machine (Zen 3) 16-row blocks moved 2-15% less than Kokkos' tile in 5
  // alternating runs, so smaller hosts keep Kokkos' default tile unless they run 4 planes per
  // work item (below).
  // With AVX-512 a work item updates 4 planes' rows together (stencil_lines_avx512): on the
  // 2-core Xeon development machine (2 threads, 3 alternating series, 384^3 and 512^3, both
  // layouts) 31.3-33.8 GB/s, 0.59-0.67 of the same-run copy, against 24.7-25.9 GB/s (0.47-0.51)
  // one plane at a time; on the GPU machine's Xeon host with 2 threads 0.54-0.67 against
  // 0.45-0.50 (4 pairs). With 16 threads there it was behind at 384^3 and ahead at 512^3 (2
  // series), so hosts with many threads keep one plane per work item (docs/PERFORMANCE.md).
  // With those 4 planes, blocks of 32-64 rows through a thread's share of the planes moved 2-5%
  // more than Kokkos' tile (16-row blocks were level); the rule (few_core_host_tile: 48 rows at
  // 384^3, 32 at 512^3) was ahead in all 8 pairs of 2 alternating series, both layouts, FOM
  // 1.02-1.05x (0.579-0.664 of the same-run copy against 0.575-0.634), float +4%, level at 256^3.
  // With each row written whole (zero_row_ends, on by default), the fields on huge pages and every
  // stream prefetched (stencil_lines_avx512) the same default reached 0.842-0.871 at 384^3 and
  // 512^3 in double and 0.900-0.922 in float at 384^3 (seventh session of 2026-11-24).
  if (!limits.gpu && host_avx512_lines_compiled() &&
      limits.host_hardware_threads < y_blocks_min_host_threads) {
    config.m_slow = 4;
    config.tile =
        few_core_host_tile(grid.to_local(laplacian_update_box(grid)), layout, limits.concurrency,
                           limits.core_cache_bytes, element_bytes, config.m, config.m_slow);
  }
  if (!limits.gpu && limits.host_hardware_threads >= y_blocks_min_host_threads) {
    config.tile =
        many_core_host_tile(grid.to_local(laplacian_update_box(grid)), layout, limits.concurrency,
                            limits.core_cache_bytes, element_bytes, config.m);
  }
  if (limits.gpu) {
    // H100, Kokkos 3.4, 512^3 double, FOM / memcpy (docs/PERFORMANCE.md, scripts/bench.py sets
    // blocking and shapes): a work item updates 4 points along y by 2 along the slowest axis
    // (0.91 layout right, 0.93 since its loads use stride offsets; 0.94 left) against 0.89 / 0.87
    // for 4 x 1 and 0.92 / 0.92 for 2 x 4, which falls to 0.80 at 1024^3; 4 x 4 and 8 x 4 lose
    // occupancy (0.85-0.90). Float: 4 x 2 gives 0.68 / 0.72, 4 x 1 0.61 / 0.58. 128 threads with
    // launch bounds 128 along the contiguous axis beat 256 by 2-3% in double and 4-6% in float;
    // blocks that also span y or the slowest axis are no faster, except where the contiguous axis
    // is short: 128 threads over 64 points left half of them idle (0.73 at 4096 x 2048 x 64 layout
    // right), so the block takes the rest along y. The y split into parts keeps the four planes a 4
    // x 2 block reads within a quarter of the L2, which removes seed 000's plane cliff: 3 parts at
    // 1024^3 gave 0.910 / 0.930 and 21 at 4096 x 2048 x 64 left 0.892, against 0.903 / 0.923 and
    // 0.870 with the counts for three planes (sixth run). Evict-first stores: no measurable effect.
    // Since the tenth run (2026-11-23, bench set blocks) a work item updates several blocks one
    // after another along the slowest axis, the rows consecutive blocks share read from the L1:
    // at 512^3 in double 8 x 1 with 3 blocks per item reached 0.964 / 0.961 (2845 / 2852 GB/s)
    // against 0.91-0.92 for one 4 x 2 block, 0.94-0.95 for 4 x 2 with 2 and 0.96 for 8 x 1 with
    // 4; in float 4 x 2 with 3 reached 0.82 in layout right and 8 x 1 with 4 0.81 in layout left
    // (0.77 / 0.68 with one block). Since the eleventh run the work items at each row's ends store
    // 0 there (zero_row_ends), so no sector is written partly and merged through a DRAM read: where
    // the contiguous axis has 64 points (64 x 2 threads) 8 x 1 with 3 went from 0.82 to 0.97 and
    // the blocks are those of full rows.
    config.variant = LaplacianVariant::subdomain;
    config.launch_bounds = 128;
    const int contiguous = layout == Layout::right ? 2 : 0;
    const Box box = grid.to_local(laplacian_update_box(grid));
    const auto range = laplacian_detail::column_contiguous_range(
        box.lo[contiguous], box.hi[contiguous], config.zero_row_ends);
    const Index lanes = range.upper - range.lower;
    std::int64_t along_contiguous = 32;
    while (along_contiguous < 128 && along_contiguous < lanes) along_contiguous *= 2;
    config.tile = to_axis_order(
        mapping, std::array<std::int64_t, 3>{along_contiguous, 128 / along_contiguous, 1});
    struct Blocks {
      int m, m_slow, per_item;
    };
    const Blocks blocks = element_bytes == 8        ? Blocks{8, 1, 3}
                          : layout == Layout::right ? Blocks{4, 2, 3}
                                                    : Blocks{8, 1, 4};
    config.m = blocks.m;
    config.m_slow = blocks.m_slow;
    config.blocks_per_item = blocks.per_item;
    config.parts = auto_parts(config, grid, limits);
  }
  return config;
}

LaplacianSetup laplacian_setup_from_deck(const Deck& deck, const ExecLimits& limits) {
  LaplacianSetup s;
  s.grid = Grid::whole(
      {deck.integer("grid", "nx"), deck.integer("grid", "ny"), deck.integer("grid", "nz")},
      deck.real3("grid", "origin"),
      {deck.real("grid", "hx"), deck.real("grid", "hy"), deck.real("grid", "hz")});
  for (int d = 0; d < 3; ++d)
    if (s.grid.points[d] > std::numeric_limits<int>::max() / 2)
      throw deck.error("grid", std::string("n") + "xyz"[d], "too many points along one axis",
                       "at most " + std::to_string(std::numeric_limits<int>::max() / 2));
  s.layout = parse_layout(deck.string("kernel", "layout"));
  s.single_precision = deck.string("run", "precision") == "float";
  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = deck.string("kernel", "iterate");
  s.field = parse_test_field(deck.string("laplacian", "field"));
  s.warmup = static_cast<int>(deck.integer("run", "warmup"));
  s.repeats = static_cast<int>(deck.integer("run", "repeats"));
  const Mapping mapping =
      resolve_mapping(s.layout, parse_iter_order(s.requested_iterate), limits.gpu);
  const int element_bytes = s.single_precision ? 4 : 8;
  if (s.requested_variant == "auto") {
    s.kernel = default_laplacian_kernel(limits, s.layout, mapping, s.grid, element_bytes);
    for (const char* key : {"tile", "launch_bounds", "m", "m_slow", "blocks_per_item", "parts",
                            "parts_in_one_launch", "streaming_stores", "zero_row_ends"})
      if (!deck.is_default("kernel", key))
        s.ignored_by_auto.push_back(std::string("kernel.") + key + " = " +
                                    deck.value_literal("kernel", key));
  } else {
    s.kernel.variant = parse_laplacian_variant(s.requested_variant);
    s.kernel.mapping = mapping;
    s.kernel.layout = s.layout;
    s.kernel.element_bytes = element_bytes;
    s.kernel.tile = deck.integer3("kernel", "tile");
    s.kernel.launch_bounds = static_cast<int>(deck.integer("kernel", "launch_bounds"));
    s.kernel.m = static_cast<int>(deck.integer("kernel", "m"));
    s.kernel.m_slow = static_cast<int>(deck.integer("kernel", "m_slow"));
    s.kernel.blocks_per_item = static_cast<int>(deck.integer("kernel", "blocks_per_item"));
    s.kernel.streaming_stores = deck.boolean("kernel", "streaming_stores");
    s.kernel.zero_row_ends = deck.boolean("kernel", "zero_row_ends");
    s.kernel.parts_in_one_launch = deck.boolean("kernel", "parts_in_one_launch");
    if (too_large_register_block(s.kernel))
      throw deck.error("kernel", "m_slow",
                       "with m = " + std::to_string(s.kernel.m) + " a block of " +
                           std::to_string(s.kernel.m * s.kernel.m_slow) + " points",
                       "m x m_slow at most " + std::to_string(max_block_points) +
                           " for register-blocked and subdomain (larger blocks spill)");
    s.kernel.parts = deck.is_auto("kernel", "parts")
                         ? auto_parts(s.kernel, s.grid, limits)
                         : static_cast<int>(deck.integer("kernel", "parts"));
  }
  if (auto problem = laplacian_config_problem(s.kernel, s.grid, limits)) {
    if (s.kernel.variant == LaplacianVariant::scratch)
      throw deck.error(
          "kernel", "tile", "not valid on " + limits.backend + ": " + *problem,
          "team tiles of 32, 64 or 128 points along the contiguous axis by 2, 4 or 8 along y, "
          "marching through slabs of at least 1 plane of the slowest axis (x y z order, 0 = "
          "default 64 x 4 x 64), within " +
              std::to_string(
                  Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>::scratch_size_max(0)) +
              " bytes of team scratch" +
              (limits.gpu ? " and " + std::to_string(limits.max_threads_per_block) + " threads"
                          : std::string()));
    throw tile_error(deck, limits, *problem, s.kernel.mapping.describe());
  }
  return s;
}

nlohmann::ordered_json to_json(const LaplacianVerification& v) {
  return {{"passed", v.passed},
          {"quadratic_max_error", v.quadratic_max_error},
          {"quadratic_tolerance", v.quadratic_tolerance},
          {"reference_max_diff", v.reference_max_diff},
          {"reference_tolerance", v.reference_tolerance},
          {"reference_bitwise", v.reference_mismatches == 0},
          {"reference_mismatches", v.reference_mismatches},
          {"untouched_violations", v.untouched_violations}};
}

namespace {

// Seed 000's figure of merit: the bytes a perfect cache would move (every point read once except
// the 8 corners and the 12 edges' interior points nobody reads, every interior point written).
double laplacian_bytes(const Index3& n, int element_bytes) {
  const double fetch = static_cast<double>(n[0]) * n[1] * n[2] - 8 - 4.0 * (n[0] - 2) -
                       4.0 * (n[1] - 2) - 4.0 * (n[2] - 2);
  const double write = static_cast<double>(n[0] - 2) * (n[1] - 2) * (n[2] - 2);
  return (fetch + write) * element_bytes;
}

template <class T, class KokkosLayout>
int run_typed(const LaplacianSetup& s, const Deck& deck, const std::string& deck_path,
              MPI_Comm comm) {
  const ExecLimits limits = default_exec_limits();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  const bool write_output = folder.enabled;
  const std::string& run_name = folder.name;
  const std::filesystem::path& dir = folder.dir;

  Kokkos::Profiling::pushRegion("kstencil::laplacian::verify");
  const LaplacianVerification verification =
      verify_laplacian<T, KokkosLayout>(s.kernel, s.grid, s.field);
  Kokkos::Profiling::popRegion();

  auto u = allocate_field<T, KokkosLayout>("u", s.grid);
  auto f = allocate_field<T, KokkosLayout>("lap_u", s.grid);
  fill_test_field(TestFieldSpec::of(s.field, s.grid), s.grid, u);
  const Field<const T, KokkosLayout> u_const = u;
  Kokkos::Profiling::pushRegion("kstencil::laplacian::timed");
  // Checked once by laplacian_setup_from_deck; the timed loop launches only.
  const SameRunTiming timed = time_with_copy_ceiling(
      s.grid.points[0] * s.grid.points[1] * s.grid.points[2], sizeof(T), s.warmup, s.repeats,
      {[&] { apply_laplacian_checked_before<T, KokkosLayout>(s.kernel, s.grid, u_const, f); }});
  Kokkos::Profiling::popRegion();
  const TimingStats& timing = timed.launches.front();
  const CopyBandwidth& copy = timed.copy;
  const double fom = laplacian_bytes(s.grid.points, sizeof(T)) / timing.median_s * 1e-9;

  const auto shapes = laplacian_launch_shapes(s.kernel, s.grid);
  const std::array<std::int64_t, 3> policy_tile =
      shapes.empty() ? std::array<std::int64_t, 3>{0, 0, 0} : shapes.front().tile;
  const bool line = s.kernel.variant == LaplacianVariant::line;
  const bool march = s.kernel.variant == LaplacianVariant::march;
  const bool z_lines = s.layout == Layout::right;
  // Per axis (x y z); a line work item covers m rows of whole lines along the contiguous axis, a
  // march work item a slab along the slowest axis.
  std::array<std::int64_t, 3> axis_tile = to_axis_order(s.kernel.mapping, policy_tile);
  if (line) {
    const Box box = laplacian_update_box(s.grid);
    const std::int64_t length = box.extent(z_lines ? 2 : 0);
    const std::int64_t rows = std::min<std::int64_t>(policy_tile[1] * s.kernel.m, box.extent(1));
    const std::int64_t planes =
        std::min<std::int64_t>(policy_tile[0] * s.kernel.m_slow, box.extent(z_lines ? 0 : 2));
    axis_tile = z_lines ? std::array<std::int64_t, 3>{planes, rows, length}
                        : std::array<std::int64_t, 3>{length, rows, planes};
  }
  if (march) {
    const std::int64_t slab = laplacian_detail::plan_march(s.kernel, s.grid).slab;
    axis_tile = z_lines ? std::array<std::int64_t, 3>{slab, policy_tile[1], policy_tile[0]}
                        : std::array<std::int64_t, 3>{policy_tile[0], policy_tile[1], slab};
  }
  const bool scratch = s.kernel.variant == LaplacianVariant::scratch;
  const ScratchTile team_tile = scratch_tile(s.kernel);
  if (scratch)
    axis_tile =
        z_lines ? std::array<std::int64_t, 3>{team_tile.slow, team_tile.y, team_tile.contiguous}
                : std::array<std::int64_t, 3>{team_tile.contiguous, team_tile.y, team_tile.slow};
  const std::size_t launches =
      scratch ? laplacian_detail::plan_scratch(s.kernel, s.grid).size() : shapes.size();
  const std::string variant = to_string(s.kernel.variant);
  const std::string precision = s.single_precision ? "float" : "double";
  std::string mapping = s.kernel.mapping.describe();
  if (line)
    mapping = z_lines ? "policy (i,j), lines along z, Iterate::Right"
                      : "policy (k,j), lines along x, Iterate::Right";
  if (march)
    mapping = z_lines ? "policy (k,j,slab), columns along x, Iterate::Left"
                      : "policy (i,j,slab), columns along z, Iterate::Left";
  if (scratch)
    mapping = "one team of " + std::to_string(limits.gpu ? team_tile.contiguous * team_tile.y : 1) +
              " threads per tile, tiles along the contiguous axis first";
  const std::string iterate = line || march || scratch
                                  ? s.requested_iterate + " (not used by " + variant + ")"
                                  : s.requested_iterate + " -> " + mapping;

  nlohmann::ordered_json summary = {{"kernel", "laplacian"},
                                    {"variant", variant},
                                    {"variant_requested", s.requested_variant},
                                    {"layout", to_string(s.layout)},
                                    {"iterate", s.requested_iterate},
                                    {"mapping", mapping},
                                    {"tile", axis_tile},
                                    {"policy_tile", policy_tile},
                                    {"launches", launches},
                                    {"launch_bounds", s.kernel.launch_bounds},
                                    {"m", s.kernel.m},
                                    {"m_slow", s.kernel.m_slow},
                                    {"blocks_per_item", s.kernel.blocks_per_item},
                                    {"parts", s.kernel.parts},
                                    {"parts_in_one_launch", s.kernel.parts_in_one_launch},
                                    {"streaming_stores", s.kernel.streaming_stores},
                                    {"zero_row_ends", zeroed_row_end_axis(s.kernel) >= 0},
                                    {"grid", s.grid.points},
                                    {"spacing", s.grid.spacing},
                                    {"precision", precision},
                                    {"field", s.field == TestField::sine ? "sine" : "quadratic"},
                                    {"backend", limits.backend},
                                    {"device", limits.device_name},
                                    {"concurrency", limits.concurrency},
                                    {"ranks", ranks},
                                    {"warmup", s.warmup},
                                    {"repeats", s.repeats},
                                    {"time_median_s", timing.median_s},
                                    {"time_min_s", timing.min_s},
                                    {"time_max_s", timing.max_s},
                                    {"bytes", laplacian_bytes(s.grid.points, sizeof(T))},
                                    {"fom_gbs", fom},
                                    {"copy_gbs", copy.gbs},
                                    {"copy_kernel_gbs", copy.kernel_gbs},
                                    {"copy_deep_copy_gbs", copy.deep_copy_gbs},
                                    {"fom_ratio", fom / copy.gbs},
                                    {"verified", verification.passed},
                                    {"verification", to_json(verification)},
                                    {"kokkos_version", kokkos_version_string()},
                                    {"program_version", program_version},
                                    {"deck", deck_path}};

  if (write_output) {
    const std::string resolved = deck.resolved_toml();
    Attributes attributes = {{"kernel", std::string("laplacian")},
                             {"variant", variant},
                             {"layout", to_string(s.layout)},
                             {"iterate", iterate},
                             {"tile", axis_tile},
                             {"precision", precision},
                             {"backend", limits.backend},
                             {"kokkos_version", kokkos_version_string()},
                             {"program_version", std::string(program_version)},
                             {"grid_dims", s.grid.points},
                             {"origin", s.grid.origin},
                             {"spacing", s.grid.spacing},
                             {"deck", resolved}};
    if (deck.boolean("output", "fields")) {
      OutputSeries series(dir, run_name, attributes, comm);
      const FieldGeometry geometry{s.grid.points, s.grid.origin, s.grid.spacing, s.grid.owned};
      const auto u_host = to_host_x_fastest(u, s.grid, s.grid.owned);
      const auto f_host = to_host_x_fastest(f, s.grid, s.grid.owned);
      const bool is_float = s.single_precision;
      series.write_step(0, 0.0,
                        {FieldData{"u", geometry, u_host.data(), is_float},
                         FieldData{"lap_u", geometry, f_host.data(), is_float}});
    }
    if (rank == 0) {
      write_file_atomically(dir / "deck.toml", resolved);
      write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
    }
  }

  if (rank == 0) {
    std::ostringstream out;
    const auto& v = verification;
    out << "kstencil " << program_version << " | laplacian | " << limits.backend << " on "
        << limits.device_name << " (Kokkos " << kokkos_version_string() << ", concurrency "
        << limits.concurrency << ", " << ranks << " rank" << (ranks > 1 ? "s" : "") << ")\n"
        << "  grid          " << s.grid.points[0] << " x " << s.grid.points[1] << " x "
        << s.grid.points[2] << ", h = (" << s.grid.spacing[0] << ", " << s.grid.spacing[1] << ", "
        << s.grid.spacing[2] << "), " << precision << "\n"
        << "  kernel        " << variant << (s.requested_variant == "auto" ? " (auto)" : "")
        << ", layout " << to_string(s.layout) << ", iterate " << iterate << "\n"
        << "  tile          " << format_triple(axis_tile);
    if (scratch)
      out << " (x y z; points per team)";
    else
      out << " (x y z; policy order " << format_triple(policy_tile) << "), launch bounds "
          << (s.kernel.launch_bounds ? std::to_string(s.kernel.launch_bounds) : "none");
    const bool blocked = s.kernel.variant != LaplacianVariant::mdrange && !line && !scratch;
    if (blocked) out << ", m " << s.kernel.m;
    if (line)
      out << ", " << s.kernel.m << (s.kernel.m == 1 ? " row" : " rows") << " of " << s.kernel.m_slow
          << (s.kernel.m_slow == 1 ? " plane" : " planes") << " per work item";
    if (blocked && !march && s.kernel.m_slow > 1) out << " x m_slow " << s.kernel.m_slow;
    if (blocked && !march && s.kernel.blocks_per_item > 1)
      out << ", " << s.kernel.blocks_per_item << " blocks per work item";
    if (scratch) out << ", team scratch " << scratch_bytes<T>(team_tile) << " bytes";
    if (s.kernel.variant == LaplacianVariant::subdomain || scratch)
      out << ", parts " << s.kernel.parts << " in " << launches << " launch"
          << (launches == 1 ? "" : "es");
    if (march) out << ", slabs " << s.kernel.parts;
    // Line kernels stream on GPUs (evict-first) and on AVX hosts (non-temporal, whole lines).
    const bool streams = limits.gpu || (line && host_streaming_stores_compiled());
    if (s.kernel.variant != LaplacianVariant::mdrange)
      out << (s.kernel.streaming_stores && streams ? ", streaming stores" : ", plain stores");
    if (zeroed_row_end_axis(s.kernel) >= 0) out << ", zero row ends";
    out << "\n";
    if (!s.ignored_by_auto.empty()) {
      out << "  not used      ";
      for (std::size_t i = 0; i < s.ignored_by_auto.size(); ++i)
        out << (i ? ", " : "") << s.ignored_by_auto[i];
      out << " (variant auto sets its own; name a variant, e.g. kernel.variant = \"line\", to "
             "use them)\n";
    }
    out << "  time          median " << fmt("%.4g", timing.median_s * 1e3) << " ms (min "
        << fmt("%.4g", timing.min_s * 1e3) << ", max " << fmt("%.4g", timing.max_s * 1e3)
        << ") over " << s.repeats << " rounds after " << s.warmup
        << " warm-up (each round: the kernel, then the two copies)\n"
        << "  FOM           " << fmt("%.1f", fom) << " GB/s; copy " << fmt("%.1f", copy.gbs)
        << " GB/s (same run: kernel " << fmt("%.1f", copy.kernel_gbs) << ", deep_copy "
        << fmt("%.1f", copy.deep_copy_gbs) << "); FOM/copy " << fmt("%.3f", fom / copy.gbs) << "\n"
        << "  verification  " << (v.passed ? "PASS" : "FAIL") << " (quadratic max error "
        << fmt("%.3g", v.quadratic_max_error) << " <= " << fmt("%.3g", v.quadratic_tolerance)
        << "; reference "
        << (v.reference_mismatches == 0 ? std::string("bitwise equal")
                                        : "max diff " + fmt("%.3g", v.reference_max_diff) +
                                              " <= " + fmt("%.3g", v.reference_tolerance))
        << "; untouched points " << (v.untouched_violations == 0 ? "ok" : "WRITTEN") << ")\n";
    if (write_output)
      out << "  output        " << dir.string() << "/"
          << (deck.boolean("output", "fields") ? " (" + run_name + ".xdmf)" : "") << "\n";
    std::fputs(out.str().c_str(), stdout);
    std::fflush(stdout);
  }
  return verification.passed ? 0 : 1;
}

}  // namespace

int run_laplacian_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "Laplacian");
  const LaplacianSetup setup = laplacian_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         comm);
  });
}

}  // namespace kstencil
