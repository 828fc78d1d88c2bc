#pragma once
// SIGINT and SIGTERM: the first asks the run to stop where every rank agrees (solvers check
// between steps or iterations, then write what is due and close their files; exit status 4); a
// second ends the process at once.
#include <mpi.h>
#include <sys/types.h>

namespace kstencil {

// The exit status of a run stopped by a signal after writing its state and outputs.
constexpr int interrupted_status = 4;

void install_interrupt_handlers();

// A child process that a terminal's signals do not reach (its own process group): the second
// signal, which ends kstencil at once, ends it too. 0: none.
void end_with_interrupts(pid_t pid);

// Past the run's last collective: signals are ignored. mpiexec ends the ranks still exiting once
// one has exited non-zero, and "stopping at the next step" would be false there.
void ignore_interrupts();

// The first signal this process received (0: none).
int interrupt_signal();

// Collective over comm: whether a signal reached any rank (every rank gets the same answer).
bool interrupt_agreed(MPI_Comm comm);

}  // namespace kstencil
