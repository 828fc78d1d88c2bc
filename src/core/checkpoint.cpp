// Checkpoint files: written through write_fields_file, read back with plain (serial) HDF5 on
// every rank.
#include "core/checkpoint.hpp"

#include <hdf5.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <type_traits>

#include "core/decomposition.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t format_version = 1;

std::string checkpoint_file_name(std::int64_t step) {
  char name[48];
  std::snprintf(name, sizeof name, "checkpoint_%09" PRId64 ".h5", step);
  return name;
}

// The step of a file named `<prefix><digits><suffix>`, or -1.
std::int64_t step_of(const std::string& file, const std::string& prefix,
                     const std::string& suffix) {
  if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const char* first = file.data() + prefix.size();
  const char* last = file.data() + file.size() - suffix.size();
  std::int64_t step = -1;
  const auto result = std::from_chars(first, last, step);
  return result.ec == std::errc() && result.ptr == last ? step : -1;
}

// Files of `dir` named `<prefix><step><suffix>`, by step.
std::vector<std::pair<std::int64_t, fs::path>> numbered_files(const fs::path& dir,
                                                              const std::string& prefix,
                                                              const std::string& suffix = ".h5") {
  std::vector<std::pair<std::int64_t, fs::path>> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::int64_t step = step_of(it->path().filename().string(), prefix, suffix);
    if (step >= 0) files.emplace_back(step, it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Owns an HDF5 identifier for reading; every failure is a DeckError naming the file.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw DeckError(path_ + ": not a kstencil checkpoint that can be read (" + what +
                    "); allowed: a checkpoint_<step>.h5 file a run wrote ([checkpoint] every, or "
                    "a run stopped by a signal)");
  }
  hid_t check(hid_t id, const std::string& what) const {
    if (id < 0) fail(what);
    return id;
  }

 private:
  std::string path_;
};

struct Closer {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Closer() {
    if (id >= 0) close(id);
  }
};

std::string read_string_attribute(const Reader& r, hid_t file, const char* name) {
  if (H5Aexists(file, name) <= 0) r.fail(std::string("no attribute ") + name);
  const Closer attribute{r.check(H5Aopen(file, name, H5P_DEFAULT), name), H5Aclose};
  const Closer type{r.check(H5Tcopy(H5T_C_S1), name), H5Tclose};
  H5Tset_size(type.id, H5T_VARIABLE);
  H5Tset_cset(type.id, H5T_CSET_UTF8);
  char* text = nullptr;
  r.check(H5Aread(attribute.id, type.id, &text), std::string("attribute ") + name);
  const std::string out = text ? text : "";
  H5free_memory(text);
  return out;
}

std::int64_t read_integer_attribute(const Reader& r, hid_t file, const char* name) {
  if (H5Aexists(file, name) <= 0) r.fail(std::string("no attribute ") + name);
  const Closer attribute{r.check(H5Aopen(file, name, H5P_DEFAULT), name), H5Aclose};
  std::int64_t value = 0;
  r.check(H5Aread(attribute.id, H5T_NATIVE_INT64, &value), std::string("attribute ") + name);
  return value;
}

}  // namespace

CheckpointConfig checkpoint_config_from_deck(const Deck& deck) {
  CheckpointConfig config{deck.integer("checkpoint", "every"), deck.integer("checkpoint", "keep")};
  if (config.every > 0 && !deck.boolean("output", "enabled"))
    throw deck.error("checkpoint", "every", "checkpoints are written into the run folder",
                     "0 (none) while output.enabled = false, or output.enabled = true");
  return config;
}

nlohmann::json exact_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;  // nlohmann writes the shortest text that reads back to the same double
}

double exact_double(const nlohmann::json& value) {
  if (value.is_string()) {
    const std::string word = value.get<std::string>();
    if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
    return word == "-inf" ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity();
  }
  return value.get<double>();
}

CheckpointWriter::CheckpointWriter(fs::path dir, CheckpointConfig config, std::string solver,
                                   std::string deck_toml, MPI_Comm comm)
    : dir_(std::move(dir)),
      config_(config),
      solver_(std::move(solver)),
      deck_toml_(std::move(deck_toml)),
      comm_(comm) {}

fs::path CheckpointWriter::write(std::int64_t step, const nlohmann::json& state,
                                 const std::vector<FieldData>& fields) {
  const fs::path path = dir_ / checkpoint_file_name(step);
  write_fields_file(path,
                    {{"kstencil_checkpoint", AttributeValue{format_version}},
                     {"solver", solver_},
                     {"step", AttributeValue{step}},
                     {"program_version", std::string(program_version)},
                     {"deck", deck_toml_},
                     {"state", state.dump()}},
                    fields, comm_);
  last_ = path;
  if (rank_of(comm_) == 0) {
    const auto files = numbered_files(dir_, "checkpoint_");
    const std::size_t keep = static_cast<std::size_t>(config_.keep);
    for (std::size_t n = 0; n + keep < files.size(); ++n) {
      std::error_code ignored;
      fs::remove(files[n].second, ignored);
    }
  }
  MPI_Barrier(comm_);
  return path;
}

Checkpoint Checkpoint::open(const std::string& path, const std::string& solver, MPI_Comm comm) {
  Checkpoint c;
  c.path_ = path;
  std::string error;
  try {
    const Reader r(path);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw DeckError(path +
                      (fs::is_directory(path, ec) ? ": a folder, not a checkpoint file"
                                                  : ": no such checkpoint file") +
                      " (--restart); allowed: a checkpoint_<step>.h5 file in a run folder");
    H5E_auto2_t func = nullptr;
    void* data = nullptr;
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    try {
      if (H5Fis_hdf5(path.c_str()) <= 0) r.fail("not an HDF5 file");
      const Closer file{r.check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen"),
                        H5Fclose};
      if (H5Aexists(file.id, "kstencil_checkpoint") <= 0) r.fail("no kstencil_checkpoint mark");
      const std::int64_t format = read_integer_attribute(r, file.id, "kstencil_checkpoint");
      if (format != format_version) r.fail("format " + std::to_string(format));
      const std::string written_by = read_string_attribute(r, file.id, "solver");
      if (written_by != solver)
        throw DeckError(path + ": a checkpoint of the " + written_by +
                        " solver, and the deck's [run] solver is \"" + solver +
                        "\"; allowed: a deck of the solver that wrote it");
      c.step_ = read_integer_attribute(r, file.id, "step");
      c.deck_ = read_string_attribute(r, file.id, "deck");
      c.state_ = nlohmann::json::parse(read_string_attribute(r, file.id, "state"));
    } catch (...) {
      H5Eset_auto2(H5E_DEFAULT, func, data);
      throw;
    }
    H5Eset_auto2(H5E_DEFAULT, func, data);
  } catch (const DeckError& e) {
    error = e.what();
  } catch (const nlohmann::json::exception& e) {
    error = path + ": not a kstencil checkpoint that can be read (its state: " + e.what() + ")";
  }
  const std::string agreed = agreed_error(error, comm);
  if (!agreed.empty()) throw DeckError(agreed);
  return c;
}

template <class T>
std::vector<T> Checkpoint::read(const std::string& name, const Index3& dims, const Box& box) const {
  const Reader r(path_);
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::vector<T> values(static_cast<std::size_t>(box.size()));
  try {
    const Closer file{r.check(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen"),
                      H5Fclose};
    if (H5Lexists(file.id, name.c_str(), H5P_DEFAULT) <= 0) r.fail("no dataset " + name);
    const Closer dataset{r.check(H5Dopen2(file.id, name.c_str(), H5P_DEFAULT), name), H5Dclose};
    const Closer space{r.check(H5Dget_space(dataset.id), name), H5Sclose};
    hsize_t file_dims[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(space.id) != 3 ||
        H5Sget_simple_extent_dims(space.id, file_dims, nullptr) != 3 ||
        file_dims[0] != static_cast<hsize_t>(dims[2]) ||
        file_dims[1] != static_cast<hsize_t>(dims[1]) ||
        file_dims[2] != static_cast<hsize_t>(dims[0]))
      r.fail("dataset " + name + " has other dimensions than the grid");
    const Closer type{r.check(H5Dget_type(dataset.id), name), H5Tclose};
    if (H5Tget_class(type.id) != H5T_FLOAT || H5Tget_size(type.id) != sizeof(T))
      r.fail("dataset " + name + " is not of the run's precision");
    if (!box.empty()) {
      const hsize_t start[3] = {static_cast<hsize_t>(box.lo[2]), static_cast<hsize_t>(box.lo[1]),
                                static_cast<hsize_t>(box.lo[0])};
      const hsize_t count[3] = {static_cast<hsize_t>(box.extent(2)),
                                static_cast<hsize_t>(box.extent(1)),
                                static_cast<hsize_t>(box.extent(0))};
      r.check(H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr), name);
      const Closer memory{r.check(H5Screate_simple(3, count, nullptr), name), H5Sclose};
      const hid_t native = std::is_same<T, float>::value ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
      r.check(H5Dread(dataset.id, native, memory.id, space.id, H5P_DEFAULT, values.data()),
              "reading " + name);
    }
  } catch (...) {
    H5Eset_auto2(H5E_DEFAULT, func, data);
    throw;
  }
  H5Eset_auto2(H5E_DEFAULT, func, data);
  return values;
}

template std::vector<float> Checkpoint::read<float>(const std::string&, const Index3&,
                                                    const Box&) const;
template std::vector<double> Checkpoint::read<double>(const std::string&, const Index3&,
                                                      const Box&) const;

void check_restart_deck(const Deck& deck, const Checkpoint& checkpoint, const Schema& schema) {
  // Keys a restart may change; every other key defines the problem.
  static const std::set<std::string> free = {
      "run.name",          "run.repeats",           "run.warmup",        "time.steps",
      "jacobi.tolerance",  "jacobi.max_iterations", "jacobi.norm_every", "jacobi.print_every",
      "jacobi.norm",       "cg.tolerance",          "cg.max_iterations", "cg.print_every",
      "diagnostics.every", "diagnostics.plot",      "output.every"};
  static const std::set<std::string> free_sections = {"kernel", "mpi", "output", "checkpoint"};
  const Deck before = Deck::parse(checkpoint.deck_toml(), checkpoint.path(), {}, schema);
  for (const KeySpec& spec : schema) {
    if (!spec.retired.empty() || free_sections.count(spec.section) ||
        free.count(spec.section + "." + spec.key))
      continue;
    const std::string was = before.value_literal(spec.section, spec.key);
    if (deck.value_literal(spec.section, spec.key) != was)
      throw deck.error(spec.section, spec.key,
                       "differs from the checkpoint " + checkpoint.path() +
                           ", whose problem a restart continues",
                       was +
                           " (the checkpoint's), or a run without --restart; a restart may "
                           "change time.steps, tolerances and max_iterations, the cadence of "
                           "output, diagnostics and checkpoints, [kernel], [mpi] and [output]");
  }
}

void forget_after(const fs::path& dir, const std::string& basename, std::int64_t step,
                  MPI_Comm comm) {
  if (rank_of(comm) == 0) {
    std::error_code ignored;
    for (const auto& [n, file] : numbered_files(dir, basename + "_"))
      if (n >= step) fs::remove(file, ignored);
    for (const auto& [n, file] : numbered_files(dir, "checkpoint_"))
      if (n > step) fs::remove(file, ignored);
    // Files a run killed hard was writing: never listed in the XDMF, never complete.
    for (const std::string& prefix : {basename + "_", std::string("checkpoint_")})
      for (const auto& [n, file] : numbered_files(dir, prefix, ".h5.tmp"))
        fs::remove(file, ignored);
  }
  MPI_Barrier(comm);
}

}  // namespace kstencil
