// Run folders, atomic files, parallel HDF5 step files and the XDMF sidecar.
#include "core/output.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <system_error>
#include <type_traits>

#include "core/deck.hpp"
#include "core/decomposition.hpp"

namespace kstencil {

namespace fs = std::filesystem;

namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Collective: if any rank reports an error (non-empty message), every rank throws the message of
// the lowest such rank, so all ranks leave a collective operation the same way.
void agree_on_error(const std::string& local_error, MPI_Comm comm) {
  const std::string message = agreed_error(local_error, comm);
  if (!message.empty()) throw OutputError(message);
}

// ---------------------------------------------------------------------------------------------
// HDF5 helpers: every call is checked; a failure throws OutputError naming the file, the call and
// the innermost entries of HDF5's error stack (automatic printing is switched off meanwhile).

class Hdf5ErrorPrintingOff {
 public:
  Hdf5ErrorPrintingOff() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5ErrorPrintingOff() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  Hdf5ErrorPrintingOff(const Hdf5ErrorPrintingOff&) = delete;
  Hdf5ErrorPrintingOff& operator=(const Hdf5ErrorPrintingOff&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

std::string hdf5_error_stack() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        auto& s = *static_cast<std::string*>(out);
        if (n >= 8) return 0;
        if (!s.empty()) s += "; ";
        std::string desc = e->desc ? e->desc : "?";
        for (char& c : desc)
          if (c == '\n') c = ' ';
        s += std::string(e->func_name ? e->func_name : "?") + ": " + desc;
        return 0;
      },
      &text);
  return text;
}

class H5Context {
 public:
  explicit H5Context(std::string file) : file_(std::move(file)) {}
  template <class T>
  T check(T result, const std::string& call) const {
    if (result < 0) fail(call);
    return result;
  }
  [[noreturn]] void fail(const std::string& call) const {
    const std::string detail = hdf5_error_stack();
    throw OutputError("HDF5 error writing " + file_ + ": " + call + " failed" +
                      (detail.empty() ? std::string() : " (" + detail + ")"));
  }

 private:
  std::string file_;
};

// Owns an HDF5 identifier; close() checks the result, the destructor closes quietly (error paths).
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~H5Handle() {
    if (id_ >= 0) closer_(id_);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  hid_t get() const { return id_; }
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  void close(const H5Context& h5, const std::string& call) {
    const hid_t id = id_;
    id_ = -1;
    h5.check(closer_(id), call);
  }

 private:
  hid_t id_;
  Closer closer_;
};

hid_t make_string_type(const H5Context& h5, const std::string& what) {
  H5Handle type(h5.check(H5Tcopy(H5T_C_S1), "H5Tcopy" + what), H5Tclose);
  h5.check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size" + what);
  h5.check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset" + what);
  return type.release();
}

// Collective in parallel HDF5: every rank calls it with identical arguments.
void write_attribute(const H5Context& h5, hid_t object, const std::string& name,
                     const AttributeValue& value) {
  const std::string what = " (attribute " + name + ")";
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        hid_t mem_type = -1;
        const void* data = nullptr;
        const char* c_string = nullptr;
        bool is_array = false;
        if constexpr (std::is_same_v<V, std::int64_t>) {
          mem_type = H5T_NATIVE_INT64;
          data = &v;
        } else if constexpr (std::is_same_v<V, double>) {
          mem_type = H5T_NATIVE_DOUBLE;
          data = &v;
        } else if constexpr (std::is_same_v<V, std::string>) {
          c_string = v.c_str();
          data = &c_string;
        } else if constexpr (std::is_same_v<V, std::array<std::int64_t, 3>>) {
          mem_type = H5T_NATIVE_INT64;
          data = v.data();
          is_array = true;
        } else {
          static_assert(std::is_same_v<V, std::array<double, 3>>);
          mem_type = H5T_NATIVE_DOUBLE;
          data = v.data();
          is_array = true;
        }
        // Strings: variable-length UTF-8 (no size limit from the object header; h5py reads str).
        H5Handle string_type(c_string ? make_string_type(h5, what) : -1, H5Tclose);
        if (c_string) mem_type = string_type.get();
        const hsize_t three = 3;
        H5Handle space(
            h5.check(is_array ? H5Screate_simple(1, &three, nullptr) : H5Screate(H5S_SCALAR),
                     "H5Screate" + what),
            H5Sclose);
        H5Handle attribute(h5.check(H5Acreate2(object, name.c_str(), mem_type, space.get(),
                                               H5P_DEFAULT, H5P_DEFAULT),
                                    "H5Acreate2" + what),
                           H5Aclose);
        h5.check(H5Awrite(attribute.get(), mem_type, data), "H5Awrite" + what);
        attribute.close(h5, "H5Aclose" + what);
        space.close(h5, "H5Sclose" + what);
        if (c_string) string_type.close(h5, "H5Tclose" + what);
      },
      value);
}

std::string format_box(const Box& b) {
  std::ostringstream s;
  s << "[" << b.lo[0] << ", " << b.lo[1] << ", " << b.lo[2] << "] .. [" << b.hi[0] << ", "
    << b.hi[1] << ", " << b.hi[2] << ")";
  return s.str();
}

// Local checks of write_step's arguments; the caller makes the outcome collective.
std::string validate_step(std::int64_t step, const std::vector<FieldData>& fields) {
  if (step < 0) return "step " + std::to_string(step) + " is negative";
  if (fields.empty()) return "no fields to write";
  std::set<std::string> names;
  for (const FieldData& f : fields) {
    const std::string field = "field '" + f.name + "': ";
    if (f.name.empty() || f.name == "." || f.name.find('/') != std::string::npos)
      return field + "invalid dataset name";
    if (!names.insert(f.name).second) return field + "given twice";
    const FieldGeometry& g = f.geometry;
    for (int d = 0; d < 3; ++d)
      if (g.dims[d] < 1)
        return field + "dims (" + std::to_string(g.dims[0]) + ", " + std::to_string(g.dims[1]) +
               ", " + std::to_string(g.dims[2]) + ") must be positive";
    if (!g.owned.empty()) {
      for (int d = 0; d < 3; ++d)
        if (g.owned.lo[d] < 0 || g.owned.hi[d] > g.dims[d])
          return field + "owned box " + format_box(g.owned) + " lies outside the dims";
      if (!f.values) return field + "no values for a non-empty owned box";
    }
  }
  return {};
}

void write_file_contents(const H5Context& h5, const H5Handle& file, MPI_Comm comm,
                         const Attributes& attributes, const std::vector<FieldData>& fields) {
  for (const auto& [name, value] : attributes) write_attribute(h5, file.get(), name, value);

  // Independent transfers: Open MPI 4.1's collective writes (fcoll vulcan) silently leave blocks
  // of zeros in files whose ranks write thin slabs (docs/ARCHITECTURE.md).
  H5Handle dxpl(h5.check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(dataset transfer)"), H5Pclose);
  h5.check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");

  // Values outside every rank's owned box would be undefined (MPI-IO may leave garbage in the
  // holes of a collective write): a dataset that the boxes do not cover is first filled with
  // zeros. When they cover it (the normal case) the fill, a second full write, is skipped.
  std::vector<long long> written(fields.size());
  for (std::size_t n = 0; n < fields.size(); ++n)
    written[n] = static_cast<long long>(fields[n].geometry.owned.size());
  MPI_Allreduce(MPI_IN_PLACE, written.data(), static_cast<int>(written.size()), MPI_LONG_LONG,
                MPI_SUM, comm);

  for (std::size_t n = 0; n < fields.size(); ++n) {
    const FieldData& f = fields[n];
    const std::string what = " (dataset " + f.name + ")";
    const FieldGeometry& g = f.geometry;
    const hid_t type = f.is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    // File and memory order (z, y, x): x is fastest, as in the values.
    const hsize_t dims[3] = {static_cast<hsize_t>(g.dims[2]), static_cast<hsize_t>(g.dims[1]),
                             static_cast<hsize_t>(g.dims[0])};
    H5Handle file_space(h5.check(H5Screate_simple(3, dims, nullptr), "H5Screate_simple" + what),
                        H5Sclose);
    H5Handle dcpl(h5.check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset creation)" + what),
                  H5Pclose);
    const bool covered = written[n] >= g.dims[0] * g.dims[1] * g.dims[2];
    if (!covered) {
      const double zero = 0;
      h5.check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_DOUBLE, &zero), "H5Pset_fill_value" + what);
    }
    h5.check(H5Pset_fill_time(dcpl.get(), covered ? H5D_FILL_TIME_NEVER : H5D_FILL_TIME_ALLOC),
             "H5Pset_fill_time" + what);
    H5Handle dataset(h5.check(H5Dcreate2(file.get(), f.name.c_str(), type, file_space.get(),
                                         H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                              "H5Dcreate2" + what),
                     H5Dclose);
    dcpl.close(h5, "H5Pclose(dataset creation)" + what);
    hid_t mem_space_id = -1;
    if (g.owned.empty()) {
      h5.check(H5Sselect_none(file_space.get()), "H5Sselect_none" + what);
      const hsize_t one = 1;
      mem_space_id = h5.check(H5Screate_simple(1, &one, nullptr), "H5Screate_simple" + what);
    } else {
      const hsize_t start[3] = {static_cast<hsize_t>(g.owned.lo[2]),
                                static_cast<hsize_t>(g.owned.lo[1]),
                                static_cast<hsize_t>(g.owned.lo[0])};
      const hsize_t count[3] = {static_cast<hsize_t>(g.owned.extent(2)),
                                static_cast<hsize_t>(g.owned.extent(1)),
                                static_cast<hsize_t>(g.owned.extent(0))};
      h5.check(
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
          "H5Sselect_hyperslab" + what);
      mem_space_id = h5.check(H5Screate_simple(3, count, nullptr), "H5Screate_simple" + what);
    }
    H5Handle mem_space(mem_space_id, H5Sclose);
    if (g.owned.empty()) h5.check(H5Sselect_none(mem_space.get()), "H5Sselect_none" + what);
    const double no_values = 0;  // a valid pointer for ranks that write nothing
    h5.check(H5Dwrite(dataset.get(), type, mem_space.get(), file_space.get(), dxpl.get(),
                      f.values ? f.values : &no_values),
             "H5Dwrite" + what);
    mem_space.close(h5, "H5Sclose" + what);
    file_space.close(h5, "H5Sclose" + what);

    write_attribute(h5, dataset.get(), "origin", AttributeValue{g.origin});
    write_attribute(h5, dataset.get(), "spacing", AttributeValue{g.spacing});
    write_attribute(h5, dataset.get(), "dims", AttributeValue{g.dims});
    dataset.close(h5, "H5Dclose" + what);
  }
  dxpl.close(h5, "H5Pclose(dataset transfer)");
}

// A full disk fails the close's metadata flush too, and HDF5 keeps a file it could not close (and
// crashes closing it again at MPI_Finalize): free the space the partial file holds, close it again.
void close_after_failure(const std::string& path, hid_t file, MPI_Comm comm) {
  if (H5Iis_valid(file) <= 0) return;
  MPI_Barrier(comm);
  if (rank_of(comm) == 0 && ::truncate(path.c_str(), 0) != 0) {
    // Nothing more to free: the second close fails as the first did.
  }
  MPI_Barrier(comm);
  H5Fclose(file);
}

void write_hdf5_file(const std::string& path, MPI_Comm comm, const Attributes& attributes,
                     const std::vector<FieldData>& fields) {
  const H5Context h5(path);
  H5Handle fapl(h5.check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(file access)"), H5Pclose);
  h5.check(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  h5.check(H5Pset_all_coll_metadata_ops(fapl.get(), true), "H5Pset_all_coll_metadata_ops");
  h5.check(H5Pset_coll_metadata_write(fapl.get(), true), "H5Pset_coll_metadata_write");
  H5Handle file(
      h5.check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "H5Fcreate"),
      H5Fclose);
  fapl.close(h5, "H5Pclose(file access)");
  const hid_t id = file.get();
  try {
    write_file_contents(h5, file, comm, attributes, fields);
    file.close(h5, "H5Fclose");
  } catch (const OutputError&) {
    file.release();
    close_after_failure(path, id, comm);
    throw;
  }
}

// ---------------------------------------------------------------------------------------------
// XDMF text.

// Shortest text that reads back as the same double (what %.17g guarantees, without its noise).
std::string number(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool same_lattice(const FieldGeometry& a, const FieldGeometry& b) {
  return a.dims == b.dims && a.origin == b.origin && a.spacing == b.spacing;
}

struct XdmfField {
  std::string name;
  bool is_float;
};

void write_uniform_grid(std::ostream& out, const std::string& indent, const std::string& name,
                        const std::string& time, const std::string& file, const FieldGeometry& g,
                        const std::vector<XdmfField>& fields) {
  const std::string dims =
      std::to_string(g.dims[2]) + " " + std::to_string(g.dims[1]) + " " + std::to_string(g.dims[0]);
  const std::string in = indent + "  ";
  const std::string item = "Format=\"XML\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\"";
  out << indent << "<Grid Name=\"" << xml_escape(name) << "\" GridType=\"Uniform\">\n"
      << in << "<Time Value=\"" << time << "\"/>\n"
      << in << "<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
      << in << "<Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << in << "  <DataItem Name=\"Origin\" " << item << ">" << number(g.origin[2]) << " "
      << number(g.origin[1]) << " " << number(g.origin[0]) << "</DataItem>\n"
      << in << "  <DataItem Name=\"Spacing\" " << item << ">" << number(g.spacing[2]) << " "
      << number(g.spacing[1]) << " " << number(g.spacing[0]) << "</DataItem>\n"
      << in << "</Geometry>\n";
  // ParaView's XDMF reader misreads a file name that starts with a multi-byte UTF-8 character
  // ("ü_000000.h5" opened as "ü//_000000.h5"); "./" before it reads right.
  const std::string reference =
      (!file.empty() && static_cast<unsigned char>(file[0]) >= 0x80 ? "./" : "") + file;
  for (const XdmfField& f : fields)
    out << in << "<Attribute Name=\"" << xml_escape(f.name)
        << "\" Center=\"Node\" AttributeType=\"Scalar\">\n"
        << in << "  <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\""
        << (f.is_float ? 4 : 8) << "\" Dimensions=\"" << dims << "\">" << xml_escape(reference)
        << ":/" << xml_escape(f.name) << "</DataItem>\n"
        << in << "</Attribute>\n";
  out << indent << "</Grid>\n";
}

std::string step_file_name(const std::string& basename, std::int64_t step) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, "_%06" PRId64 ".h5", step);
  return basename + suffix;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

static std::vector<fs::path>& created_folders() {
  static std::vector<fs::path> folders;
  return folders;
}

// The deck.toml files prepare_run_directory wrote in this process.
static std::vector<fs::path>& started_decks() {
  static std::vector<fs::path> decks;
  return decks;
}

void remove_empty_output_folders() {
  // A deck written first into a folder that holds nothing else (one that was made, or emptied
  // by --overwrite) goes too.
  for (const fs::path& deck : started_decks()) {
    std::error_code ec;
    std::size_t entries = 0;
    for (auto it = fs::directory_iterator(deck.parent_path(), ec);
         !ec && it != fs::directory_iterator(); it.increment(ec))
      ++entries;
    if (!ec && entries == 1) fs::remove(deck, ec);
  }
  for (const fs::path& top : created_folders()) {
    std::error_code ec;
    // Removed only when nothing but empty folders lies below it.
    std::vector<fs::path> below;
    for (auto it = fs::recursive_directory_iterator(top, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      below.push_back(it->path());
    bool empty = true;
    for (const fs::path& p : below) empty = empty && fs::is_directory(p, ec);
    if (!empty) continue;
    fs::remove_all(top, ec);
  }
  created_folders().clear();
  started_decks().clear();
}

// Free space under `dir` against what `what` needs ("it needs" / "they need"), said before the
// files are made.
static std::string free_space_problem(const fs::path& dir, const std::string& what,
                                      std::uintmax_t bytes, const char* needs = "it needs") {
  // Test-only: KSTENCIL_TEST_NO_SPACE_CHECK lets the write itself meet the full disk.
  if (std::getenv("KSTENCIL_TEST_NO_SPACE_CHECK")) return "";
  std::error_code ec;
  const fs::space_info space = fs::space(dir, ec);
  if (ec || space.available >= bytes) return "";
  const auto size = [](std::uintmax_t b) {
    return b >= (std::uintmax_t(10) << 20) ? std::to_string(b >> 20) + " MiB"
                                           : std::to_string((b + 1023) >> 10) + " KiB";
  };
  return "not enough free space for " + what + ": " + needs + " about " + size(bytes) + ", " +
         size(space.available) + " are free on the file system of " + dir.string();
}

void require_free_space(const fs::path& dir, const std::uintmax_t bytes, const std::string& what,
                        const std::string& allowed, MPI_Comm comm) {
  std::string problem =
      rank_of(comm) == 0 ? free_space_problem(dir, what, bytes, "they need") : std::string();
  if (!problem.empty()) problem += "; allowed: " + allowed;
  agree_on_error(problem, comm);
}

void write_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  const auto fail = [&](const std::string& reason) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw OutputError("cannot write " + path.string() + " (through " + tmp.string() +
                      "): " + reason);
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(std::strerror(errno));
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size()) {
    const int err = errno;
    std::fclose(f);
    fail(std::strerror(err));
  }
  if (std::fflush(f) != 0) {
    const int err = errno;
    std::fclose(f);
    fail(std::strerror(err));
  }
  if (std::fclose(f) != 0) fail(std::strerror(errno));
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail("rename failed: " + ec.message());
}

// The longest path of a file MPI-IO opens in a run folder, against Open MPI's limit: its ompio
// probes file locking on `<path>.locktest.<rank>` in a 256-byte buffer, and overflows it (an
// abort) for longer paths.
static std::string mpi_io_path_problem(const fs::path& dir, const std::string& name) {
#ifdef OPEN_MPI
  constexpr std::size_t max_bytes = 255 - std::char_traits<char>::length(".locktest.") - 7;
  // Step files <name>_<step>.h5.tmp and checkpoints checkpoint_<step>.h5.tmp: 10 digits hold
  // every step count a deck allows (2^31 - 1).
  const std::string step_file = name + "_2147483647.h5.tmp";
  const std::string checkpoint = "checkpoint_2147483647.h5.tmp";
  const std::string longest = step_file.size() > checkpoint.size() ? step_file : checkpoint;
  const std::size_t bytes = (dir / longest).string().size();
  if (bytes > max_bytes)
    return "output path " + dir.string() +
           " ([output] root / [run] name) is too long: its files' " + "paths (up to " +
           std::to_string(bytes) + " bytes) exceed the " + std::to_string(max_bytes) +
           " bytes Open MPI's MPI-IO takes for the HDF5 files; allowed: a shorter output.root or "
           "run.name";
#else
  (void)dir;
  (void)name;
#endif
  return "";
}

fs::path prepare_run_directory(const fs::path& root, const std::string& name, bool overwrite,
                               const std::string& deck_toml, MPI_Comm comm) {
  // A name that is no folder name is said as such by prepare_output_folder.
  const bool named = run_name_problem(name).empty();
  agree_on_error(rank_of(comm) == 0 && named ? mpi_io_path_problem(root / name, name) : "", comm);
  const fs::path dir = prepare_output_folder(root, name, overwrite, "deck.toml", nullptr, comm);
  std::string error;
  if (rank_of(comm) == 0) {
    try {
      write_file_atomically(dir / "deck.toml", deck_toml);
      started_decks().push_back(dir / "deck.toml");
    } catch (const OutputError& e) {
      error = e.what();
    }
  }
  agree_on_error(error, comm);
  return dir;
}

fs::path prepare_output_folder(const fs::path& root, const std::string& name, bool overwrite,
                               const std::string& marker, bool* resumed, MPI_Comm comm) {
  const fs::path dir = root / name;
  std::string error;
  int kept = 0;
  const std::string kind = resumed ? "sweep" : "run";
  if (rank_of(comm) == 0) {
    // The deck checks [run] name; a name from the deck file's stem is checked here, before any
    // folder is made.
    if (const std::string problem = run_name_problem(name); !problem.empty()) {
      std::string shown;
      for (const char c : name.substr(0, 80))
        shown += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
      error = "invalid run name '" + shown + (name.size() > 80 ? "...'" : "'") +
              " for an output folder: " + problem + "; allowed: " + run_name_allowed() +
              "; set [run] name";
    } else {
      try {
        const std::string shown = dir.string();
        if (fs::exists(dir) && !fs::is_directory(dir)) {
          error = "output path " + shown +
                  " ([output] root / [run] name) exists and is not a folder; allowed: a run "
                  "folder that does not exist yet, or an empty one";
        } else if (fs::exists(dir) && !fs::is_empty(dir)) {
          const bool marked = fs::is_regular_file(dir / marker);
          if (resumed && marked && !overwrite) {
            kept = 1;
          } else if (!overwrite) {
            error = "output folder " + shown +
                    " already exists and is not empty; set output.overwrite = true (kstencil "
                    "run --overwrite) to replace it, or choose another run.name";
          } else if (!marked) {
            error = "output folder " + shown + " is not empty and does not look like a kstencil " +
                    kind + " folder (no " + marker +
                    "); refusing to overwrite it: remove it yourself or choose another run.name";
          } else {
            std::vector<fs::path> entries;
            for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
            for (const fs::path& entry : entries) fs::remove_all(entry);
          }
        } else if (!fs::exists(dir)) {
          // The outermost folder this makes, removed again if the run ends with nothing in it.
          fs::path made = dir;
          while (!made.parent_path().empty() && made.parent_path() != made &&
                 !fs::exists(made.parent_path()))
            made = made.parent_path();
          fs::create_directories(dir);
          created_folders().push_back(made);
        }
      } catch (const fs::filesystem_error& e) {
        // The deck's keys that make the path, and what they must name.
        const bool elsewhere = !e.path1().empty() && e.path1() != dir;
        error = "cannot prepare output folder " + dir.string() +
                " ([output] root / [run] name): " + e.code().message() +
                (elsewhere ? " (" + e.path1().string() + ")" : "") +
                "; allowed: an [output] root that is a folder you can write to, or that can be "
                "made";
      }
    }
  }
  agree_on_error(error, comm);
  MPI_Bcast(&kept, 1, MPI_INT, 0, comm);
  if (resumed) *resumed = kept != 0;
  return dir;
}

OutputSeries::OutputSeries(fs::path dir, std::string basename, Attributes attributes, MPI_Comm comm)
    : dir_(std::move(dir)),
      basename_(std::move(basename)),
      attributes_(std::move(attributes)),
      comm_(comm) {
  if (basename_.empty() || basename_.find('/') != std::string::npos)
    throw OutputError("invalid output basename '" + basename_ + "'");
  std::set<std::string> names;
  for (const auto& [name, value] : attributes_) {
    if (name.empty()) throw OutputError("output attribute with an empty name");
    if (name == "step" || name == "time")
      throw OutputError("output attribute '" + name + "' is reserved (written for every step)");
    if (!names.insert(name).second)
      throw OutputError("output attribute '" + name + "' given twice");
  }
  xdmf_path_ = dir_ / (basename_ + ".xdmf");
}

void write_fields_file(const fs::path& final_path, const Attributes& attributes,
                       const std::vector<FieldData>& fields, MPI_Comm comm) {
  const int rank = rank_of(comm);
  const fs::path tmp_path = final_path.string() + ".tmp";
  std::uintmax_t bytes = 64 << 10;  // attributes and metadata
  for (const FieldData& f : fields)
    bytes +=
        static_cast<std::uintmax_t>(f.geometry.dims[0] * f.geometry.dims[1] * f.geometry.dims[2]) *
        (f.is_float ? 4 : 8);
  agree_on_error(
      rank == 0 ? free_space_problem(final_path.parent_path(), final_path.string(), bytes) : "",
      comm);
  {
    const Hdf5ErrorPrintingOff quiet;
    try {
      write_hdf5_file(tmp_path.string(), comm, attributes, fields);
    } catch (const OutputError&) {
      // HDF5 calls fail alike on every rank (collective, identical arguments).
      if (rank == 0) {
        std::error_code ignored;
        fs::remove(tmp_path, ignored);
      }
      throw;
    }
  }
  MPI_Barrier(comm);
  std::string error;
  if (rank == 0) {
    std::error_code ec;
    fs::rename(tmp_path, final_path, ec);
    if (ec)
      error =
          "cannot rename " + tmp_path.string() + " to " + final_path.string() + ": " + ec.message();
  }
  agree_on_error(error, comm);  // also the barrier after the rename
}

void OutputSeries::write_step(std::int64_t step, double time,
                              const std::vector<FieldData>& fields) {
  const int rank = rank_of(comm_);
  const std::string invalid = validate_step(step, fields);
  agree_on_error(invalid.empty() ? invalid
                                 : "cannot write step " + std::to_string(step) + " to " +
                                       dir_.string() + ": " + invalid,
                 comm_);

  Attributes attributes = attributes_;
  attributes.emplace_back("step", AttributeValue{step});
  attributes.emplace_back("time", AttributeValue{time});
  write_fields_file(dir_ / step_file_name(basename_, step), attributes, fields, comm_);
  const auto record_of = [&](std::int64_t n, double t) {
    StepRecord r{n, t, step_file_name(basename_, n), {}, {}};
    for (const FieldData& f : fields) {
      r.fields.emplace_back(f.name, f.geometry);
      r.is_float.push_back(f.is_float);
    }
    return r;
  };
  // Steps an earlier run wrote (continue_after): the same fields as this one.
  for (const auto& [earlier, earlier_time] : earlier_)
    if (earlier != step) steps_.push_back(record_of(earlier, earlier_time));
  earlier_.clear();
  StepRecord record = record_of(step, time);
  bool replaced = false;
  for (StepRecord& r : steps_)
    if (r.step == step) {
      r = record;
      replaced = true;
    }
  if (!replaced) steps_.push_back(std::move(record));

  std::string error;
  if (rank == 0) {
    try {
      write_xdmf();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree_on_error(error, comm_);
}

void OutputSeries::continue_after(std::vector<std::pair<std::int64_t, double>> steps) {
  earlier_ = std::move(steps);
}

std::vector<std::pair<std::int64_t, double>> OutputSeries::steps_written() const {
  std::vector<std::pair<std::int64_t, double>> out = earlier_;
  for (const StepRecord& r : steps_) out.emplace_back(r.step, r.time);
  return out;
}

std::vector<fs::path> OutputSeries::step_files() const {
  std::vector<fs::path> files;
  for (const StepRecord& r : steps_) files.push_back(dir_ / r.file);
  return files;
}

void OutputSeries::write_xdmf() const {
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
      << "<Xdmf Version=\"3.0\">\n"
      << "  <Domain>\n"
      << "    <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  // In time order (ParaView's reader reports the times in file order, unsorted).
  std::vector<const StepRecord*> ordered;
  for (const StepRecord& r : steps_) ordered.push_back(&r);
  std::stable_sort(ordered.begin(), ordered.end(), [](const StepRecord* a, const StepRecord* b) {
    return a->time < b->time || (a->time == b->time && a->step < b->step);
  });
  for (const StepRecord* record : ordered) {
    const StepRecord& r = *record;
    // Fields sharing a lattice share one uniform grid, in order of first appearance.
    std::vector<std::pair<FieldGeometry, std::vector<XdmfField>>> groups;
    for (std::size_t i = 0; i < r.fields.size(); ++i) {
      const auto& [name, geometry] = r.fields[i];
      auto group = groups.begin();
      while (group != groups.end() && !same_lattice(group->first, geometry)) ++group;
      if (group == groups.end()) {
        groups.push_back({geometry, {}});
        group = groups.end() - 1;
      }
      group->second.push_back({name, static_cast<bool>(r.is_float[i])});
    }
    char step_name[48];
    std::snprintf(step_name, sizeof step_name, "step_%06" PRId64, r.step);
    const std::string time = number(r.time);
    if (groups.size() == 1) {
      write_uniform_grid(out, "      ", step_name, time, r.file, groups[0].first, groups[0].second);
    } else {
      out << "      <Grid Name=\"" << step_name
          << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
          << "        <Time Value=\"" << time << "\"/>\n";
      for (const auto& [geometry, group_fields] : groups) {
        std::string name;
        for (const XdmfField& f : group_fields) name += (name.empty() ? "" : "_") + f.name;
        write_uniform_grid(out, "        ", name, time, r.file, geometry, group_fields);
      }
      out << "      </Grid>\n";
    }
  }
  out << "    </Grid>\n"
      << "  </Domain>\n"
      << "</Xdmf>\n";
  write_file_atomically(xdmf_path_, out.str());
}

}  // namespace kstencil
