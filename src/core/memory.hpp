#pragma once
// What a run will allocate, checked against what the machine has before anything is allocated:
// a grid too large is a deck error with both numbers and the largest grid that fits, not a crash.
#include <mpi.h>

#include <string>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/grid.hpp"

namespace kstencil {

// A rank's peak allocation, in bytes: on the device (the host itself on host backends) and in host
// memory besides (verification references, output copies).
struct MemoryNeed {
  double device = 0;        // GPU backends: the peak on the GPU
  double host = 0;          // GPU backends: the peak in host memory besides
  double host_backend = 0;  // host backends, where both are one memory: the peak of the phases
  std::string what;         // what makes it up, for the message: "4 fields of 8 bytes"
};

// Counts the ranks on this node (a collective over MPI_COMM_WORLD), for check_memory's shares; 1
// until called. The driver calls it once after MPI_Init: check_memory runs inside solver set-ups,
// which may fail on some ranks only (a plan depends on the rank's box) and then must reach no
// collective before agreed_setup's.
void count_ranks_on_node();

// The host's MemAvailable (/proc/meminfo), in bytes; -1 when unknown.
double host_available_bytes();

// Throws the deck's DeckError on [grid] nx when `need` does not fit this rank's share of the
// host's available memory (shared by the ranks on this node) or of its GPU's free memory (shared
// by the ranks on that GPU). `points` is the whole grid: the message offers the largest grid of
// its shape that fits (need assumed proportional to the points).
void check_memory(const Deck& deck, const MemoryNeed& need, const Index3& points,
                  const ExecLimits& limits);

}  // namespace kstencil
