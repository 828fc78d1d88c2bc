#include "core/plot.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "core/interrupt.hpp"

extern char** environ;

namespace kstencil {
namespace {

// argv: csv png title x_label y_label log_y x_column y_columns...
constexpr const char* plot_script = R"(
import csv, os, sys
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib is not available")
path, png, title, xlabel, ylabel, log_y, xcol = sys.argv[1:8]
ycols = sys.argv[8:]
with open(path) as f:
    rows = list(csv.DictReader(f))
fig, ax = plt.subplots(figsize=(7, 4))
# A log axis shows no zeros (an error that reached 0): it plots the positive values, if any.
log = log_y == "1" and any(float(r[y]) > 0 for r in rows for y in ycols)
for y in ycols:
    points = [(float(r[xcol]), float(r[y])) for r in rows]
    if log:
        points = [p for p in points if p[1] > 0]
    ax.plot([p[0] for p in points], [p[1] for p in points], label=y)
if log:
    ax.set_yscale("log")
ax.set_xlabel(xlabel)
ax.set_ylabel(ylabel)
ax.set_title(title)
if len(ycols) > 1:
    ax.legend()
fig.tight_layout()
tmp = png + ".tmp.png"
fig.savefig(tmp, dpi=110)
os.replace(tmp, png)
)";

}  // namespace

std::optional<std::string> run_python(const std::string& script, std::vector<std::string> args,
                                      const std::string& what) {
  // KSTENCIL_PYTHON names another interpreter (one with matplotlib) than the first on PATH.
  const char* chosen = std::getenv("KSTENCIL_PYTHON");
  const std::string python = chosen && *chosen ? chosen : "python3";
  args.insert(args.begin(), {python, "-c", script});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // In a process group of its own: a terminal's Ctrl-C (or timeout's signal to the group) asks
  // kstencil to stop, which lets the plot finish, rather than killing python mid-plot.
  // SIGINT and SIGTERM blocked in it too: one sent to kstencil's group while python is still
  // being started there stays pending instead of killing it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &blocked);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, python.c_str(), nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) return "cannot start " + python + ": " + std::strerror(error);
  end_with_interrupts(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      end_with_interrupts(0);
      return std::string("waiting for python3: ") + std::strerror(errno);
    }
  end_with_interrupts(0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return python + " could not plot " + what +
           " (see its message above; KSTENCIL_PYTHON selects the interpreter)";
  return std::nullopt;
}

std::optional<std::string> plot_csv(const PlotSpec& spec) {
  std::vector<std::string> args = {spec.csv,     spec.png,     spec.title,
                                   spec.x_label, spec.y_label, spec.log_y ? "1" : "0",
                                   spec.x_column};
  args.insert(args.end(), spec.y_columns.begin(), spec.y_columns.end());
  return run_python(plot_script, args, spec.csv.filename().string());
}

}  // namespace kstencil
