#include "core/decomposition.hpp"

#include <limits>
#include <numeric>
#include <stdexcept>

namespace kstencil {

std::array<Index, 2> split_range(const Index n, const int parts, const int part) {
  const Index base = n / parts, extra = n % parts;
  const Index lo = part * base + std::min<Index>(part, extra);
  return {lo, lo + base + (part < extra ? 1 : 0)};
}

namespace {

std::string triple(const Index3& v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         "]";
}

// Points on the faces between ranks, summed over the process grid.
double face_area(const Index3& points, const Dims3& dims) {
  double area = 0;
  for (int d = 0; d < 3; ++d)
    area += static_cast<double>(dims[d] - 1) * static_cast<double>(points[(d + 1) % 3]) *
            static_cast<double>(points[(d + 2) % 3]);
  return area;
}

}  // namespace

ProcessGridChoice choose_process_grid(const Index3& points, const Dims3& requested, const int ranks,
                                      const Layout layout) {
  ProcessGridChoice choice;
  choice.allowed = "3 integers px, py, pz with px*py*pz = " + std::to_string(ranks) +
                   " (the ranks), each at most the points along its axis " + triple(points) +
                   "; 0 = chosen by kstencil";
  Index fixed = 1;
  for (int d = 0; d < 3; ++d) {
    if (requested[d] > points[d]) {
      choice.problem = std::to_string(requested[d]) + " ranks along " + "xyz"[d] +
                       " leave a rank no point of the " + std::to_string(points[d]) +
                       " along that axis";
      return choice;
    }
    if (requested[d] > 0) fixed *= requested[d];
  }
  if (ranks % fixed != 0) {
    choice.problem = "the fixed entries' product " + std::to_string(fixed) + " does not divide " +
                     std::to_string(ranks) + " ranks";
    return choice;
  }
  // Free axes, slowest first: equal costs then split the slowest axis most.
  const std::array<int, 3> order =
      layout == Layout::right ? std::array<int, 3>{0, 1, 2} : std::array<int, 3>{2, 1, 0};
  std::vector<int> free_axes;
  for (int d : order)
    if (requested[d] == 0 && points[d] > 1) free_axes.push_back(d);
  if (free_axes.empty() && fixed != ranks) {
    choice.problem = "the dims' product is " + std::to_string(fixed) + ", not the " +
                     std::to_string(ranks) + " ranks";
    return choice;
  }
  Dims3 base{1, 1, 1};
  for (int d = 0; d < 3; ++d)
    if (requested[d] > 0) base[d] = requested[d];
  const int remaining = static_cast<int>(ranks / fixed);
  std::optional<Dims3> best;
  double best_area = std::numeric_limits<double>::max();
  // Every assignment of divisors of `remaining` to the free axes, in lexicographic order of the
  // slowest axis' count descending (the first of equal cost wins).
  std::vector<int> divisors;
  for (int q = remaining; q >= 1; --q)
    if (remaining % q == 0) divisors.push_back(q);
  const auto visit = [&](auto&& self, std::size_t axis, int left, Dims3 dims) -> void {
    if (axis == free_axes.size()) {
      if (left != 1) return;
      const double area = face_area(points, dims);
      if (area < best_area) best_area = area, best = dims;
      return;
    }
    const int d = free_axes[axis];
    for (int q : divisors) {
      if (left % q != 0 || q > points[d]) continue;
      dims[d] = q;
      self(self, axis + 1, left / q, dims);
    }
  };
  visit(visit, 0, remaining, base);
  if (!best) {
    choice.problem = std::to_string(ranks) + " ranks cannot be arranged over the grid " +
                     triple(points) + " with at least one point per rank along each axis" +
                     (fixed > 1 ? " and the fixed entries" : "");
    return choice;
  }
  choice.dims = *best;
  return choice;
}

Dims3 coords_of(const int rank, const Dims3& dims) {
  return {rank / (dims[1] * dims[2]), rank / dims[2] % dims[1], rank % dims[2]};
}

Box owned_box(const Index3& points, const Dims3& dims, const Dims3& coords) {
  Box box;
  for (int d = 0; d < 3; ++d) {
    const auto range = split_range(points[d], dims[d], coords[d]);
    box.lo[d] = range[0];
    box.hi[d] = range[1];
  }
  return box;
}

Decomposition decompose(MPI_Comm comm, const Dims3& dims, const HaloTransport transport) {
  Decomposition d;
  d.dims = dims;
  d.transport = transport;
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (dims[0] * dims[1] * dims[2] != size)
    throw std::logic_error("kstencil::decompose: process grid does not match the ranks");
  const int periods[3] = {0, 0, 0};
  MPI_Cart_create(comm, 3, dims.data(), periods, /*reorder=*/0, &d.comm);
  MPI_Comm_rank(d.comm, &d.rank);
  MPI_Comm_size(d.comm, &d.ranks);
  MPI_Cart_coords(d.comm, d.rank, 3, d.coords.data());
  if (d.coords != coords_of(d.rank, dims))
    throw std::logic_error("kstencil::decompose: MPI numbers the process grid differently");
  for (int axis = 0; axis < 3; ++axis)
    MPI_Cart_shift(d.comm, axis, 1, &d.neighbour[axis][0], &d.neighbour[axis][1]);
  // A neighbour is on this node when its rank is one of this node's shared-memory ranks.
  MPI_Comm node;
  MPI_Comm_split_type(d.comm, MPI_COMM_TYPE_SHARED, d.rank, MPI_INFO_NULL, &node);
  MPI_Group all, local;
  MPI_Comm_group(d.comm, &all);
  MPI_Comm_group(node, &local);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (!d.has_neighbour(axis, side)) continue;
      int in_node = MPI_UNDEFINED;
      MPI_Group_translate_ranks(all, 1, &d.neighbour[axis][side], local, &in_node);
      d.on_node[axis][side] = in_node != MPI_UNDEFINED;
    }
  MPI_Group_free(&local);
  MPI_Group_free(&all);
  MPI_Comm_free(&node);
  return d;
}

void free_decomposition(Decomposition& d) {
  if (d.comm != MPI_COMM_NULL && d.comm != MPI_COMM_SELF) MPI_Comm_free(&d.comm);
}

Grid part_of(const Grid& whole, const Dims3& dims, const Dims3& coords) {
  Grid g = whole;
  g.owned = owned_box(whole.points, dims, coords);
  g.allocated = g.owned;
  for (int axis = 0; axis < 3; ++axis) {
    if (coords[axis] > 0) g.allocated.lo[axis] -= 1;
    if (coords[axis] + 1 < dims[axis]) g.allocated.hi[axis] += 1;
  }
  return g;
}

double global_sum(const double local, MPI_Comm comm) {
  return global_sums({local}, comm).front();
}

std::vector<double> global_sums(const std::vector<double>& local, MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const int n = static_cast<int>(local.size());
  if (ranks == 1) return local;
  std::vector<double> all(static_cast<std::size_t>(n) * ranks);
  MPI_Allgather(local.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, comm);
  // From -0, the sum's identity (-0 + x is x for every x, +0 included; +0 + -0 is +0), so that
  // a sum of one rank's value and other ranks' -0 is that value to the sign of a zero.
  std::vector<double> sums(local.size(), -0.0);
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < n; ++i) sums[i] += all[static_cast<std::size_t>(r) * n + i];
  return sums;
}

double global_max(const double local, MPI_Comm comm) {
  double out = local;
  MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

bool all_ranks(const bool local, MPI_Comm comm) {
  int mine = local ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

std::string agreed_error(const std::string& local, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int mine = local.empty() ? std::numeric_limits<int>::max() : rank;
  int source = mine;
  MPI_Allreduce(&mine, &source, 1, MPI_INT, MPI_MIN, comm);
  if (source == std::numeric_limits<int>::max()) return "";
  std::string message = rank == source ? local : std::string();
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, source, comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, source, comm);
  return message;
}

}  // namespace kstencil
