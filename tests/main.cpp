// Catch2 main that owns MPI and Kokkos for the whole test run (both initialise once per process).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <catch2/catch_session.hpp>
#include <cstdlib>

int main(int argc, char* argv[]) {
  // Kokkos' OpenMP back end prints a thread-binding advice on stdout when this is unset, which
  // CTest's test discovery would read as test names. Unit tests want no binding anyway.
  setenv("OMP_PROC_BIND", "false", 0);
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    result = Catch::Session().run(argc, argv);
  }
  MPI_Finalize();
  return result;
}
