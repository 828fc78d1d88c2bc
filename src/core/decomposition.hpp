#pragma once
// MPI domain decomposition shared by every solver: a Cartesian process grid over the global points,
// each rank's owned box (uneven splits allowed) grown by one ghost layer towards each neighbour,
// and the deterministic global sums the solvers' norms use (docs/ARCHITECTURE.md).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/mapping.hpp"

namespace kstencil {

using Dims3 = std::array<int, 3>;

// [lo, hi) of part `part` when n points are split into `parts`: the first n % parts parts get one
// point more.
std::array<Index, 2> split_range(Index n, int parts, int part);

// The process grid for `ranks` ranks over `points`: entries of `requested` > 0 are kept, 0 entries
// are chosen (axes with one point get 1). Chosen entries minimise the points exchanged per step
// (the total face area between ranks); ties split the slowest axis of `layout` most, whose faces
// are contiguous in memory. The error names what is wrong and what would be valid.
struct ProcessGridChoice {
  Dims3 dims{1, 1, 1};
  std::optional<std::string> problem;  // set when no valid process grid follows from `requested`
  std::string allowed;                 // what would be valid, for the deck error
};
ProcessGridChoice choose_process_grid(const Index3& points, const Dims3& requested, int ranks,
                                      Layout layout);

// The part of `whole` a rank at `coords` holds: its owned box and the allocated box grown by one
// ghost layer towards each neighbour.
Grid part_of(const Grid& whole, const Dims3& dims, const Dims3& coords);

// A rank's place in the process grid. Built collectively (MPI_Cart_create, no reordering, so a
// rank keeps its number in the Cartesian communicator).
// How faces travel between GPU ranks: peer = device-to-device copies into a neighbour's memory
// (CUDA IPC, between ranks of one node: core/peer_memory.hpp), mpi = MPI messages (device buffers
// where MPI is GPU-aware, else staged through host memory), automatic = peer wherever possible.
enum class HaloTransport { automatic, peer, mpi };

struct Decomposition {
  MPI_Comm comm = MPI_COMM_NULL;  // the Cartesian communicator (owned; see free())
  Dims3 dims{1, 1, 1};
  Dims3 coords{0, 0, 0};
  int rank = 0, ranks = 1;
  // Neighbour rank per axis and side (0 = lower, 1 = upper); MPI_PROC_NULL at the domain's walls.
  std::array<std::array<int, 2>, 3> neighbour{};
  // Whether that neighbour runs on this node (shares its memory, and so its GPUs).
  std::array<std::array<bool, 2>, 3> on_node{};
  HaloTransport transport = HaloTransport::automatic;

  bool has_neighbour(int axis, int side) const { return neighbour[axis][side] != MPI_PROC_NULL; }
  // One rank alone (MPI_COMM_SELF, no neighbours): what a solver without a decomposition uses.
  static Decomposition single() {
    Decomposition d;
    d.comm = MPI_COMM_SELF;
    for (auto& sides : d.neighbour) sides = {MPI_PROC_NULL, MPI_PROC_NULL};
    return d;
  }
  Grid local_grid(const Grid& whole) const { return part_of(whole, dims, coords); }
};

// Collective over `comm`: the Cartesian communicator for `dims` (product = ranks of comm).
Decomposition decompose(MPI_Comm comm, const Dims3& dims,
                        HaloTransport transport = HaloTransport::automatic);
void free_decomposition(Decomposition& d);

// Coordinates of `rank` in a dims-process grid, as MPI_Cart_create without reordering numbers
// them (the last axis fastest).
Dims3 coords_of(int rank, const Dims3& dims);

// Owned box of each rank of a dims-process grid over `points` (rank order of MPI_Cart_create:
// the last axis fastest), for checks and tests.
Box owned_box(const Index3& points, const Dims3& dims, const Dims3& coords);

template <class T>
MPI_Datatype mpi_type() {
  return sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
}

// Collective: on rank 0, every rank's values of its `box` (x fastest) placed into one x-fastest
// vector over `whole` (boxes must tile it); other ranks get an empty vector. For checks against
// one-domain references. One rank owning `whole` gets `local` back as it is (no copy); otherwise
// the planes are placed on the host's threads (a whole grid is gigabytes for a large run).
template <class T>
std::vector<T> gather_boxes(std::vector<T> local, const Box& box, const Box& whole, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (ranks == 1 && box == whole) return local;
  std::array<long long, 6> mine{box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2]};
  std::vector<long long> boxes(rank == 0 ? 6 * static_cast<std::size_t>(ranks) : 0);
  MPI_Gather(mine.data(), 6, MPI_LONG_LONG, boxes.data(), 6, MPI_LONG_LONG, 0, comm);
  std::vector<int> counts(ranks, 0), offsets(ranks, 0);
  std::vector<T> all;
  if (rank == 0) {
    long long total = 0;
    for (int r = 0; r < ranks; ++r) {
      long long n = 1;
      for (int d = 0; d < 3; ++d) n *= boxes[6 * r + 3 + d] - boxes[6 * r + d];
      counts[r] = static_cast<int>(n);
      offsets[r] = static_cast<int>(total);
      total += n;
      if (total > std::numeric_limits<int>::max())
        throw std::length_error("gather_boxes: more than 2^31 values for one rank");
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(local.data(), static_cast<int>(local.size()), mpi_type<T>(), all.data(),
              counts.data(), offsets.data(), mpi_type<T>(), 0, comm);
  if (rank != 0) return {};
  const Index3 n = whole.extents();
  std::vector<T> out(static_cast<std::size_t>(whole.size()));
  for (int r = 0; r < ranks; ++r) {
    const long long* b = &boxes[6 * static_cast<std::size_t>(r)];
    const Index rows = b[4] - b[1], row = b[3] - b[0];
    Kokkos::parallel_for(
        "kstencil::gather_boxes",
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(b[2],
                                                                                         b[5]),
        [&](const Index k) {
          std::size_t q = static_cast<std::size_t>(offsets[r] + (k - b[2]) * rows * row);
          for (Index j = b[1]; j < b[4]; ++j)
            for (Index i = b[0]; i < b[3]; ++i)
              out[static_cast<std::size_t>((i - whole.lo[0]) +
                                           n[0] * ((j - whole.lo[1]) + n[1] * (k - whole.lo[2])))] =
                  all[q++];
        });
  }
  return out;
}

// Sum over the ranks of comm of `local`, added in rank order on every rank: the same bits on every
// rank and in every run with the same partial sums (MPI_Allreduce may add in any order).
double global_sum(double local, MPI_Comm comm);
std::vector<double> global_sums(const std::vector<double>& local, MPI_Comm comm);
// Largest value of `local` over the ranks, and whether `local` holds on every rank.
double global_max(double local, MPI_Comm comm);
bool all_ranks(bool local, MPI_Comm comm);
// Collective: the message of the lowest rank whose `local` message is not empty ("" if none), so
// that every rank leaves a failed phase the same way.
std::string agreed_error(const std::string& local, MPI_Comm comm);

}  // namespace kstencil
