#include "core/halo.hpp"

#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support, where it has it

#include <algorithm>

#include "core/exec_space.hpp"
#include "core/run_common.hpp"

namespace kstencil {

std::vector<HaloFace> halo_faces(const Grid& grid, const Decomposition& d, const HaloSides sides) {
  std::vector<HaloFace> faces;
  const Box owned = grid.to_local(grid.owned);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (!d.has_neighbour(axis, side)) continue;
      // Filling the lower ghosts means receiving from the lower neighbour and sending to the upper.
      const bool receive = sides != (side == 0 ? HaloSides::upper : HaloSides::lower);
      const bool send = sides != (side == 0 ? HaloSides::lower : HaloSides::upper);
      HaloFace face;
      face.axis = axis;
      face.side = side;
      face.neighbour = d.neighbour[axis][side];
      face.send = owned;
      face.receive = owned;
      if (side == 0) {
        face.send.hi[axis] = owned.lo[axis] + 1;
        face.receive.lo[axis] = owned.lo[axis] - 1;
        face.receive.hi[axis] = owned.lo[axis];
      } else {
        face.send.lo[axis] = owned.hi[axis] - 1;
        face.receive.lo[axis] = owned.hi[axis];
        face.receive.hi[axis] = owned.hi[axis] + 1;
      }
      if (!send) face.send = Box{};
      if (!receive) face.receive = Box{};
      faces.push_back(face);
    }
  return faces;
}

OverlapSplit split_for_overlap(const Box& update, const Grid& grid) {
  const Box owned = grid.to_local(grid.owned);
  const Box allocated = grid.to_local(grid.allocated);
  OverlapSplit split;
  Box& in = split.interior;
  in = update;
  for (int axis = 0; axis < 3; ++axis) {
    if (allocated.lo[axis] < owned.lo[axis] && update.lo[axis] <= owned.lo[axis]) in.lo[axis] += 1;
    if (allocated.hi[axis] > owned.hi[axis] && update.hi[axis] >= owned.hi[axis]) in.hi[axis] -= 1;
    in.lo[axis] = std::min(in.lo[axis], update.hi[axis]);
    in.hi[axis] = std::max(in.hi[axis], in.lo[axis]);
  }
  if (update.empty()) return split;
  // Peel the shell axis by axis: slabs along x span everything, along y what x left, then z.
  Box rest = update;
  for (int axis = 0; axis < 3; ++axis) {
    Box lower = rest, upper = rest;
    lower.hi[axis] = in.lo[axis];
    upper.lo[axis] = in.hi[axis];
    if (!lower.empty()) split.shell.push_back(lower);
    if (!upper.empty()) split.shell.push_back(upper);
    rest.lo[axis] = in.lo[axis];
    rest.hi[axis] = in.hi[axis];
  }
  return split;
}

void describe_halo(RunReport& report, const HaloReport& h) {
  const double steps = static_cast<double>(std::max<std::int64_t>(h.times.steps, 1));
  const double pack = global_max(h.times.pack, h.d.comm) / steps;
  const double exchange = global_max(h.times.exchange, h.d.comm) / steps;
  const double unpack = global_max(h.times.unpack, h.d.comm) / steps;
  const double interior = global_max(h.times.interior, h.d.comm) / steps;
  const double update = global_max(h.times.update, h.d.comm) / steps;
  const double halo = pack + exchange + unpack;
  const double step = halo + interior + update;
  const double share = step > 0 ? halo / step : 0;
  const Index3 dims{h.d.dims[0], h.d.dims[1], h.d.dims[2]};
  // Which GPU each rank ran on (-1: a host), in rank order.
  std::vector<int> devices(static_cast<std::size_t>(h.d.ranks));
  const int device = default_exec_limits().device_id;
  MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, h.d.comm);
  report.fact("mpi", {{"ranks", h.d.ranks},
                      {"devices", devices},
                      {"dims", dims},
                      {"overlap", h.overlap && h.d.ranks > 1},
                      {"halo_path", h.path},
                      {"pack_s", pack},
                      {"exchange_s", exchange},
                      {"unpack_s", unpack},
                      {"interior_s", interior},
                      {"update_s", update},
                      {"halo_share", share}});
  if (h.d.ranks == 1) return;
  const auto ms = [](double s) { return fmt("%.3g", s * 1e3); };
  std::string gpus;
  for (const int id : devices) gpus += (gpus.empty() ? "" : " ") + std::to_string(id);
  report.line("mpi", std::to_string(h.d.ranks) + " ranks as " + format_triple(dims) + ", overlap " +
                         (h.overlap ? "on" : "off") + ", halo " + h.path +
                         (device >= 0 ? ", GPU of each rank " + gpus : std::string()));
  report.line("halo", "per step (slowest rank, ms): pack " + ms(pack) + ", exchange " +
                          ms(exchange) + ", unpack " + ms(unpack) +
                          (h.overlap ? ", interior " + ms(interior) + ", shell " : ", update ") +
                          ms(update) + "; halo " + fmt("%.0f", 100 * share) + "% of the step");
}

bool mpi_is_gpu_aware() {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace kstencil
