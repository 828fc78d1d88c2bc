#include "core/interrupt.hpp"

#include <unistd.h>

#include <csignal>

namespace kstencil {
namespace {

volatile std::sig_atomic_t received = 0;
volatile std::sig_atomic_t child = 0;  // a helper process in a group of its own, or 0

extern "C" void on_signal(int signal) {
  if (received != 0) {  // the second: at once, and the helper with it
    if (child > 0) kill(static_cast<pid_t>(child), SIGKILL);
    _exit(128 + signal);
  }
  received = signal;
  constexpr char note[] =
      "kstencil: stopping at the next step (state and outputs written, exit 4); signal again to "
      "end at once\n";
  [[maybe_unused]] const auto ignored = write(STDERR_FILENO, note, sizeof note - 1);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void end_with_interrupts(const pid_t pid) {
  child = static_cast<std::sig_atomic_t>(pid);
}

void ignore_interrupts() {
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
}

int interrupt_signal() {
  return received;
}

bool interrupt_agreed(MPI_Comm comm) {
  int mine = received != 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

}  // namespace kstencil
