#pragma once
// PNG plots of CSV columns through python3 + matplotlib (Debian's python3-matplotlib), for the
// run folders. A plot is an extra: when python3 or matplotlib is missing it is skipped with a
// reason, never an error.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kstencil {

struct PlotSpec {
  std::filesystem::path csv, png;
  std::string x_column;
  std::vector<std::string> y_columns;
  std::string title, x_label, y_label;
  bool log_y = false;
};

// Runs a Python script (python3 -c script args...) with the interpreter KSTENCIL_PYTHON names.
// Returns why it failed (naming `what` it was to plot), or nullopt.
std::optional<std::string> run_python(const std::string& script, std::vector<std::string> args,
                                      const std::string& what);

// Writes spec.png (atomically: a temporary name, then a rename). Returns why it could not, or
// nullopt on success.
std::optional<std::string> plot_csv(const PlotSpec& spec);

}  // namespace kstencil
