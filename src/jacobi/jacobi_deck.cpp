#include "jacobi/jacobi_deck.hpp"

#include "core/deck_keys.hpp"

namespace kstencil {

const Schema& jacobi_schema() {
  using T = KeyType;
  static const Schema schema = join_keys({
      run_keys("jacobi"),
      {Key("run", "repeats", T::integer, "20",
           "iterations timed on their own, with and without the norm, after the solve")
           .min(1)
           .max(100000)},
      {Key("grid", "nx", T::integer, "4194304", "points along x, boundary included").min(3),
       Key("grid", "ny", T::integer, "1",
           "points along y, boundary included; 1 = no y axis (1D grid)")
           .min(1),
       Key("grid", "nz", T::integer, "1",
           "points along z, boundary included; 1 = no z axis (needs ny > 1 for a 3D grid)")
           .min(1)},
      spacing_keys(),
      {Key("kernel", "variant", T::string, R"("auto")",
           "auto = the backend's default tile and launch bounds (ignores tile, launch_bounds); "
           "mdrange = the deck's")
           .choices({"auto", "mdrange"})},
      kernel_trait_keys(),
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
       Key("jacobi", "norm", T::string, R"("reduce")",
           "how the error is summed: reduce = Kokkos' hierarchical reduction in the update "
           "kernel (MDRange parallel_reduce: tile and launch bounds apply); reduce-range = the "
           "same through a flat RangePolicy; atomic = one atomic add per point into one global "
           "value (the seed's naive baseline)")
           .choices({"reduce", "reduce-range", "atomic"}),
       Key("jacobi", "rhs", T::real, "0.0", "right-hand side f of lap u = f (0: Laplace)"),
       Key("jacobi", "initial", T::real, "0.0", "start value of the interior points")},
      {Key("boundary", "x_low", T::real, "0.0", "Dirichlet value on the x = first face"),
       Key("boundary", "x_high", T::real, "0.0", "on the x = last face"),
       Key("boundary", "y_low", T::real, "0.0",
           "on the y = first face (points on x faces keep the x value)"),
       Key("boundary", "y_high", T::real, "0.0", "on the y = last face"),
       Key("boundary", "z_low", T::real, "0.0",
           "on the z = first face (points on x or y faces keep theirs)"),
       Key("boundary", "z_high", T::real, "0.0", "on the z = last face")},
      output_keys(),
  });
  return schema;
}

}  // namespace kstencil
