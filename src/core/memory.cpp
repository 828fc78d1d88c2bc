#include "core/memory.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/run_common.hpp"

namespace kstencil {
namespace {

int ranks_on_this_node = 1;  // count_ranks_on_node()

std::string gib(double bytes) {
  return bytes >= 1 << 30 ? fmt("%.1f GiB", bytes / (1 << 30)) : fmt("%.0f MiB", bytes / (1 << 20));
}

}  // namespace

void count_ranks_on_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &ranks_on_this_node);
  MPI_Comm_free(&node);
}

double host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      double kib = -1;
      fields >> kib;
      return kib < 0 ? -1 : kib * 1024;
    }
  return -1;
}

void check_memory(const Deck& deck, const MemoryNeed& need, const Index3& points,
                  const ExecLimits& limits) {
  const int node_ranks = ranks_on_this_node;
  struct Budget {
    const char* where;
    double need, available;
  };
  std::vector<Budget> budgets;
  const double host = host_available_bytes();
  if (limits.gpu) {
    const double device = static_cast<double>(device_free_bytes());
    const int gpus = std::max(1, visible_gpu_count());
    const int sharing = (node_ranks + gpus - 1) / gpus;
    if (device > 0) budgets.push_back({"on the GPU", need.device, device / sharing});
    if (host > 0) budgets.push_back({"in host memory", need.host, host / node_ranks});
  } else if (host > 0) {
    budgets.push_back({"in host memory", need.host_backend, host / node_ranks});
  }
  for (const Budget& b : budgets) {
    if (b.need <= b.available) continue;
    // The need grows with the points: scale the axes with more than one point alike.
    int axes = 0;
    for (const auto n : points) axes += n > 1;
    const double scale = std::pow(b.available / b.need, 1.0 / std::max(axes, 1));
    Index3 fits = points;
    for (auto& n : fits)
      if (n > 1) n = std::max<Index>(2, static_cast<Index>(std::floor(n * scale)));
    const std::string share =
        node_ranks > 1
            ? " (this rank's share: " + std::to_string(node_ranks) + " ranks on the node)"
            : "";
    throw deck.error(
        "grid", "nx",
        "grid " + format_triple(points) + " needs about " + gib(b.need) + " " + b.where +
            " per rank (" + need.what + "), but " + gib(b.available) + " are available" + share,
        "a grid that fits, e.g. " + format_triple(fits) + " (the same shape), or more ranks");
  }
}

}  // namespace kstencil
