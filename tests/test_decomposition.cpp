// The decomposition's pure parts: splits, process grids, boxes, faces and the overlap split. The
// exchange itself runs under mpiexec in test_mpi.py.
#include <catch2/catch_test_macros.hpp>
#include <numeric>

#include "core/decomposition.hpp"
#include "core/halo.hpp"

using namespace kstencil;

TEST_CASE("decomposition: uneven splits cover the axis once, the first parts one point longer",
          "[mpi]") {
  for (Index n : {1, 2, 7, 10, 13, 64}) {
    for (int parts = 1; parts <= std::min<Index>(n, 8); ++parts) {
      Index next = 0;
      for (int p = 0; p < parts; ++p) {
        const auto r = split_range(n, parts, p);
        CHECK(r[0] == next);
        CHECK(r[1] - r[0] == n / parts + (p < n % parts ? 1 : 0));
        next = r[1];
      }
      CHECK(next == n);
    }
  }
}

TEST_CASE("decomposition: the chosen process grid exchanges the fewest points", "[mpi]") {
  // A cube: 2 ranks split the slowest axis (x in layout right, z in layout left).
  CHECK(choose_process_grid({64, 64, 64}, {0, 0, 0}, 2, Layout::right).dims == Dims3{2, 1, 1});
  CHECK(choose_process_grid({64, 64, 64}, {0, 0, 0}, 2, Layout::left).dims == Dims3{1, 1, 2});
  // 4 ranks: two cuts of 64^2 points beat three.
  CHECK(choose_process_grid({64, 64, 64}, {0, 0, 0}, 4, Layout::right).dims == Dims3{2, 2, 1});
  CHECK(choose_process_grid({64, 64, 64}, {0, 0, 0}, 8, Layout::right).dims == Dims3{2, 2, 2});
  // A flat grid is cut across its long axes only.
  CHECK(choose_process_grid({256, 256, 4}, {0, 0, 0}, 4, Layout::right).dims == Dims3{2, 2, 1});
  // 3 ranks of a long x axis: slabs across x.
  CHECK(choose_process_grid({300, 20, 20}, {0, 0, 0}, 3, Layout::left).dims == Dims3{3, 1, 1});
  // Collapsed axes (1D, 2D Poisson) are never split.
  CHECK(choose_process_grid({1000, 1, 1}, {0, 0, 0}, 4, Layout::right).dims == Dims3{4, 1, 1});
  CHECK(choose_process_grid({100, 100, 1}, {0, 0, 0}, 4, Layout::right).dims == Dims3{2, 2, 1});
  // Fixed entries are kept, the rest chosen.
  CHECK(choose_process_grid({64, 64, 64}, {1, 0, 0}, 4, Layout::right).dims == Dims3{1, 2, 2});
  CHECK(choose_process_grid({64, 64, 64}, {1, 4, 1}, 4, Layout::right).dims == Dims3{1, 4, 1});
  CHECK_FALSE(choose_process_grid({64, 64, 64}, {0, 0, 0}, 1, Layout::right).problem);
}

TEST_CASE("decomposition: impossible process grids are refused with what would be valid", "[mpi]") {
  const auto product = choose_process_grid({64, 64, 64}, {2, 2, 1}, 3, Layout::right);
  REQUIRE(product.problem);
  CHECK(*product.problem == "the fixed entries' product 4 does not divide 3 ranks");
  CHECK(product.allowed ==
        "3 integers px, py, pz with px*py*pz = 3 (the ranks), each at most the points along its "
        "axis [64, 64, 64]; 0 = chosen by kstencil");
  const auto full = choose_process_grid({64, 64, 64}, {1, 2, 1}, 4, Layout::right);
  REQUIRE(full.problem);
  CHECK(*full.problem == "the dims' product is 2, not the 4 ranks");
  const auto too_many = choose_process_grid({8, 1, 1}, {16, 0, 0}, 16, Layout::right);
  REQUIRE(too_many.problem);
  CHECK(*too_many.problem == "16 ranks along x leave a rank no point of the 8 along that axis");
  const auto no_room = choose_process_grid({5, 1, 1}, {0, 0, 0}, 6, Layout::right);
  REQUIRE(no_room.problem);
  CHECK(*no_room.problem ==
        "6 ranks cannot be arranged over the grid [5, 1, 1] with at least one point per rank "
        "along each axis");
}

TEST_CASE("decomposition: parts tile the grid, ghost layers only towards neighbours", "[mpi]") {
  const Grid whole = Grid::whole({10, 7, 5}, {0, 0, 0}, {1, 1, 1});
  const Dims3 dims{3, 2, 1};
  Index covered = 0;
  for (int rank = 0; rank < 6; ++rank) {
    const Dims3 c = coords_of(rank, dims);
    CHECK(c[2] == 0);
    CHECK(c[0] * 2 + c[1] == rank);  // MPI_Cart_create's order: the last axis fastest
    const Grid g = part_of(whole, dims, c);
    covered += g.owned.size();
    for (int axis = 0; axis < 3; ++axis) {
      CHECK(g.owned.lo[axis] - g.allocated.lo[axis] == (c[axis] > 0 ? 1 : 0));
      CHECK(g.allocated.hi[axis] - g.owned.hi[axis] == (c[axis] + 1 < dims[axis] ? 1 : 0));
    }
  }
  CHECK(covered == whole.global().size());
}

TEST_CASE("decomposition: faces send the owned layer and fill the ghost layer", "[mpi]") {
  const Grid whole = Grid::whole({10, 7, 5}, {0, 0, 0}, {1, 1, 1});
  // The middle rank along x of 3 x 1 x 1: neighbours below and above.
  const Grid g = part_of(whole, {3, 1, 1}, {1, 0, 0});
  REQUIRE(g.owned.lo[0] == 4);
  REQUIRE(g.owned.hi[0] == 7);
  Decomposition d = Decomposition::single();
  d.dims = {3, 1, 1};
  d.coords = {1, 0, 0};
  d.neighbour[0] = {0, 2};
  const auto both = halo_faces(g, d, HaloSides::both);
  REQUIRE(both.size() == 2);
  // Local indices: the ghost layer below is x = 0, the owned box x = 1 .. 3.
  CHECK(both[0].send == Box{{1, 0, 0}, {2, 7, 5}});
  CHECK(both[0].receive == Box{{0, 0, 0}, {1, 7, 5}});
  CHECK(both[1].send == Box{{3, 0, 0}, {4, 7, 5}});
  CHECK(both[1].receive == Box{{4, 0, 0}, {5, 7, 5}});
  // Filling only the lower ghosts: receive from below, send upwards.
  const auto lower = halo_faces(g, d, HaloSides::lower);
  REQUIRE(lower.size() == 2);
  CHECK(lower[0].send.empty());
  CHECK(lower[0].receive == both[0].receive);
  CHECK(lower[1].send == both[1].send);
  CHECK(lower[1].receive.empty());
}

TEST_CASE("decomposition: the overlap split covers the update box once", "[mpi]") {
  const Grid whole = Grid::whole({12, 9, 8}, {0, 0, 0}, {1, 1, 1});
  for (const Dims3& dims :
       {Dims3{2, 1, 1}, Dims3{2, 2, 1}, Dims3{2, 2, 2}, Dims3{1, 3, 1}, Dims3{12, 1, 1}}) {
    const int ranks = dims[0] * dims[1] * dims[2];
    for (int rank = 0; rank < ranks; ++rank) {
      const Grid g = part_of(whole, dims, coords_of(rank, dims));
      const Box update = g.to_local(g.owned.intersect(g.interior()));
      const OverlapSplit split = split_for_overlap(update, g);
      const Box owned = g.to_local(g.owned);
      const Box allocated = g.to_local(g.allocated);
      // Every update point in exactly one part; interior points read no ghost point.
      Index count = split.interior.size();
      for (const Box& b : split.shell) count += b.size();
      CHECK(count == update.size());
      for (Index k = split.interior.lo[2]; k < split.interior.hi[2]; ++k)
        for (Index j = split.interior.lo[1]; j < split.interior.hi[1]; ++j)
          for (Index i = split.interior.lo[0]; i < split.interior.hi[0]; ++i)
            for (int axis = 0; axis < 3; ++axis)
              for (int step : {-1, 1}) {
                Index3 p{i, j, k};
                p[axis] += step;
                CHECK((owned.contains(p) || !allocated.contains(p)));
              }
      for (std::size_t a = 0; a < split.shell.size(); ++a) {
        CHECK(split.shell[a].intersect(split.interior).empty());
        for (std::size_t b = a + 1; b < split.shell.size(); ++b)
          CHECK(split.shell[a].intersect(split.shell[b]).empty());
      }
    }
  }
}
