#include "poisson/poisson_deck.hpp"

#include <limits>

#include "core/deck_keys.hpp"

namespace kstencil {

namespace {

constexpr const char* kLinearRange =
    "the problem is linear (scale the results instead); larger values overflow the iterates and "
    "the error's squares, and float's sooner: a run whose error is no number fails verification";

// A value the problem scales with, bounded so that float iterates and squares stay numbers.
Key linear_value(const std::string& section, const std::string& key, const std::string& help) {
  return Key(section, key, KeyType::real, "0.0", help).min(-1e15).max(1e15).because(kLinearRange);
}

Schema poisson_schema(const std::string& solver) {
  using T = KeyType;
  return join_keys({
      run_keys(solver),
      {Key("run", "repeats", T::integer, "20",
           "Jacobi: timed rounds after the solve, each 16 iterations with the norm (as the solve "
           "runs them; 1 on hosts), as many without and as many same-run copies")
           .min(1)
           .max(100000)},
      {Key("grid", "nx", T::integer, "4194304", "points along x, boundary included").min(3),
       Key("grid", "ny", T::integer, "1",
           "points along y, boundary included; 1 = no y axis (1D grid), else at least 3")
           .min(1),
       Key("grid", "nz", T::integer, "1",
           "points along z, boundary included; 1 = no z axis, else at least 3 (and ny > 1); "
           "nx * ny * nz at most 2^48")
           .min(1)
           .deck_check([](const Deck& deck) { check_grid_points(deck, 0); })},
      spacing_keys(),
      {Key("kernel", "variant", T::string, R"("auto")",
           "Jacobi's update: auto = the backend's default tile and launch bounds (ignores tile, "
           "launch_bounds); mdrange = the deck's. CG runs Kokkos Kernels' kernels and reads only "
           "the layout")
           .choices({"auto", "mdrange"})},
      kernel_trait_keys(),
      {blocks_per_item_key("Jacobi with jacobi.norm = \"blocked\" and kernel.variant = "
                           "\"mdrange\" (auto also takes the default tile and launch bounds)")},
      {Key("jacobi", "tolerance", T::real, "1e-4",
           "stop when the error sqrt(sum (u_new - u_old)^2 / N) is at most this")
           .min_exclusive(0),
       Key("jacobi", "max_iterations", T::integer, "1000", "stop after this many iterations")
           .min(1),
       Key("jacobi", "norm_every", T::integer, "1", "compute the error every k iterations").min(1),
       Key("jacobi", "print_every", T::integer, "10",
           "print \"Iteration = n error = e\" when n is a multiple of this (and the error was "
           "computed); 0 = never")
           .min(0),
       Key("jacobi", "norm", T::string, R"("auto")",
           "how the error is summed: auto = the backend's fastest (3D grids: blocked on GPUs, "
           "line on hosts; 1D and 2D: team on GPUs, reduce on hosts; docs/PERFORMANCE.md); "
           "reduce = Kokkos' hierarchical reduction in the update kernel (MDRange parallel_reduce: "
           "tile and launch bounds apply); reduce-range = the "
           "same through a flat RangePolicy; atomic = one atomic add per point into one global "
           "value (the seed's naive baseline); kokkos-kernels = the update kernel, then "
           "KokkosBlas::update and KokkosBlas::nrm2 on the difference (sums in the field's "
           "type); team = each team of a TeamPolicy updates a piece of a row and writes its sum, "
           "the last team to finish adds them (seed 004's hierarchical sum in one kernel; "
           "kernel.tile along the contiguous axis: threads per team; with 16-byte packets a "
           "thread sums its own squares in the field's type); blocked (3D grids) = the "
           "Laplacian's blocked kernel, each work item writes the sum over its register blocks "
           "(in the field's type), a second kernel adds them in double (kernel.tile and "
           "launch_bounds: 0 takes the Laplacian's blocked defaults); line (3D grids, hosts) = a "
           "work item updates a block of rows along the contiguous axis in 1 plane (4 together "
           "on hosts with AVX2 or AVX-512 and fewer than 8 threads), vectorised, and sums its "
           "changes (in the field's type) squared: with AVX2 or AVX-512 a vector's squares in "
           "the field's type, its planes summed in it, the rest in double; elsewhere squared "
           "and summed in double. Kokkos' reduction adds the work items (ignores kernel.tile "
           "and launch_bounds)")
           .choices({"auto", "reduce", "reduce-range", "atomic", "kokkos-kernels", "team",
                     "blocked", "line"})},
      {Key("cg", "tolerance", T::real, "1e-4",
           "stop when ||b - A u|| / (d sqrt(N)) is at most this: the change one more Jacobi "
           "iteration would make, in [jacobi] tolerance's measure, so equal tolerances compare")
           .min_exclusive(0),
       Key("cg", "max_iterations", T::integer, "1000", "stop after this many iterations").min(1),
       Key("cg", "print_every", T::integer, "10",
           "print \"Iteration = n error = e\" when n is a multiple of this; 0 = never")
           .min(0)},
      {linear_value("poisson", "rhs", "right-hand side f of lap u = f (0: Laplace)"),
       linear_value("poisson", "initial", "start value of the interior points")},
      {linear_value("boundary", "x_low", "Dirichlet value on the x = first face"),
       linear_value("boundary", "x_high", "on the x = last face"),
       linear_value("boundary", "y_low",
                    "on the y = first face (points on x faces keep the x value)"),
       linear_value("boundary", "y_high", "on the y = last face"),
       linear_value("boundary", "z_low",
                    "on the z = first face (points on x or y faces keep theirs)"),
       linear_value("boundary", "z_high", "on the z = last face")},
      mpi_keys(),
      output_keys(),
      checkpoint_keys("iterations"),
  });
}

}  // namespace

const Schema& jacobi_schema() {
  static const Schema schema = poisson_schema("jacobi");
  return schema;
}

const Schema& cg_schema() {
  static const Schema schema = poisson_schema("cg");
  return schema;
}

PoissonProblem poisson_problem_from_deck(const Deck& deck) {
  const Index3 n{deck.integer("grid", "nx"), deck.integer("grid", "ny"),
                 deck.integer("grid", "nz")};
  if (n[1] == 2)
    throw deck.error("grid", "ny", "a y axis needs interior points", "1 (no y axis) or at least 3");
  if (n[2] == 2)
    throw deck.error("grid", "nz", "a z axis needs interior points", "1 (no z axis) or at least 3");
  if (n[1] == 1 && n[2] > 1)
    throw deck.error("grid", "nz", "axes collapse from z: a grid with nz > 1 needs ny > 1",
                     "nz = 1 when ny = 1");
  for (int d = 0; d < 3; ++d)
    if (n[d] > std::numeric_limits<int>::max() / 2)
      throw deck.error("grid", std::string("n") + "xyz"[d], "too many points along one axis",
                       "at most " + std::to_string(std::numeric_limits<int>::max() / 2));
  PoissonProblem problem;
  problem.grid =
      Grid::whole(n, deck.real3("grid", "origin"),
                  {deck.real("grid", "hx"), deck.real("grid", "hy"), deck.real("grid", "hz")});
  const std::array<double, 6> faces = {
      deck.real("boundary", "x_low"), deck.real("boundary", "x_high"),
      deck.real("boundary", "y_low"), deck.real("boundary", "y_high"),
      deck.real("boundary", "z_low"), deck.real("boundary", "z_high")};
  const Grid grid = problem.grid;
  problem.boundary = [faces, grid](const Index3& p) {
    for (int d = 0; d < 3; ++d)
      if (!is_collapsed(grid, d)) {
        if (p[d] == 0) return faces[2 * d];
        if (p[d] == grid.points[d] - 1) return faces[2 * d + 1];
      }
    return 0.0;
  };
  const double rhs = deck.real("poisson", "rhs");
  if (rhs != 0) {
    problem.rhs = [rhs](const Index3&) { return rhs; };
    problem.uniform_rhs = rhs;
  }
  const double initial = deck.real("poisson", "initial");
  problem.initial = [initial](const Index3&) { return initial; };
  return problem;
}

}  // namespace kstencil
