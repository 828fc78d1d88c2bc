#pragma once
// Run folders and HDF5 + XDMF output.
//
// Every step is one HDF5 file written through parallel HDF5 (MPI-IO, collective hyperslab writes,
// also on one rank), to a temporary name and renamed when complete. An XDMF sidecar (temporal
// collection of 3DCoRectMesh grids, ORIGIN_DXDYDZ, z y x order) is rewritten atomically after each
// step so ParaView always sees a consistent series.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/grid.hpp"

namespace kstencil {

struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Removes the folders prepare_run_directory / prepare_output_folder made in this process (and the
// parents they made) when nothing but the run's deck.toml was written into them: a run that fails
// early leaves nothing.
void remove_empty_output_folders();

// Refuses (OutputError, agreed over comm) files of `bytes` in all that the free space of `dir`
// cannot hold; `what` names them ("the run's 11 step files"), `allowed` what would fit.
void require_free_space(const std::filesystem::path& dir, std::uintmax_t bytes,
                        const std::string& what, const std::string& allowed, MPI_Comm comm);

// Writes `content` to `path` through a temporary file in the same folder and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// Creates root/name for a run and writes `deck_toml` into it as deck.toml first, so that the
// folder of a run killed hard is still known as a run's. An existing non-empty folder is refused
// (OutputError naming it and the deck key output.overwrite) unless `overwrite`, in which case it
// must look like a kstencil run folder (holds deck.toml) and is emptied. Collective over `comm`;
// rank 0 touches the file system.
std::filesystem::path prepare_run_directory(const std::filesystem::path& root,
                                            const std::string& name, bool overwrite,
                                            const std::string& deck_toml, MPI_Comm comm);
// The same for a folder recognised by `marker` (a file it holds); with `resumed`, an existing
// folder holding the marker is kept as it is (not emptied) unless `overwrite`, and *resumed says
// which happened.
std::filesystem::path prepare_output_folder(const std::filesystem::path& root,
                                            const std::string& name, bool overwrite,
                                            const std::string& marker, bool* resumed,
                                            MPI_Comm comm);

using AttributeValue = std::variant<std::int64_t, double, std::string, std::array<std::int64_t, 3>,
                                    std::array<double, 3>>;
using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

// Where a field's values sit: its own point lattice (node-centred fields use the grid's points;
// staggered fields have other dims/origin). All arrays are given in x-fastest order.
struct FieldGeometry {
  Index3 dims{0, 0, 0};   // global number of values per axis (x, y, z)
  Real3 origin{0, 0, 0};  // position of value (0, 0, 0)
  Real3 spacing{1, 1, 1};
  Box owned;  // global index box this rank writes
};

// One field's values on this rank: owned.size() values, x fastest, then y, then z (host memory).
struct FieldData {
  std::string name;
  FieldGeometry geometry;
  const void* values = nullptr;
  bool is_float = false;  // float (4 bytes) or double (8 bytes)
};

// Writes `fields` (each a dataset of its global dims, this rank's owned box) and the root group's
// `attributes` to `path` in one HDF5 file, through a temporary name and a rename, after checking
// the file system's free space. Collective over comm.
void write_fields_file(const std::filesystem::path& path, const Attributes& attributes,
                       const std::vector<FieldData>& fields, MPI_Comm comm);

class OutputSeries {
 public:
  // `dir` from prepare_run_directory; files are `<basename>_<step:06d>.h5` and `<basename>.xdmf`.
  // `attributes` are written on every step file's root group (plus step and time).
  OutputSeries(std::filesystem::path dir, std::string basename, Attributes attributes,
               MPI_Comm comm);
  // Collective. Writes one step file with every field as dataset /<name> of shape (nz, ny, nx),
  // then rewrites the XDMF sidecar listing every step written so far.
  void write_step(std::int64_t step, double time, const std::vector<FieldData>& fields);
  // A run continued from a checkpoint: the XDMF also lists these steps (step, time) an earlier run
  // wrote into the folder, with the fields of the next write_step.
  void continue_after(std::vector<std::pair<std::int64_t, double>> steps);
  // Every step of the series so far (those of continue_after included), for a checkpoint.
  std::vector<std::pair<std::int64_t, double>> steps_written() const;
  const std::filesystem::path& xdmf_path() const { return xdmf_path_; }
  std::vector<std::filesystem::path> step_files() const;

 private:
  struct StepRecord {
    std::int64_t step;
    double time;
    std::string file;  // name relative to dir
    std::vector<std::pair<std::string, FieldGeometry>> fields;
    std::vector<bool> is_float;
  };
  std::filesystem::path dir_;
  std::string basename_;
  Attributes attributes_;
  MPI_Comm comm_;
  std::filesystem::path xdmf_path_;
  std::vector<StepRecord> steps_;
  std::vector<std::pair<std::int64_t, double>> earlier_;  // continue_after's, until the next step
  void write_xdmf() const;
};

}  // namespace kstencil
