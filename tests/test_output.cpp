// Output module: atomic files, run folders, parallel HDF5 step files read back through the HDF5 C
// API, and the XDMF sidecar. Every test is collective over MPI_COMM_WORLD (any number of ranks).
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/field.hpp"
#include "core/output.hpp"

using namespace kstencil;
namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A fresh folder under /tmp shared by all ranks (rank 0 creates it), removed at the end. With
// KSTENCIL_KEEP_TEST_OUTPUT=<folder> set, rank 0 first copies it to <folder>/<label>.
class TempDir {
 public:
  explicit TempDir(std::string label) : label_(std::move(label)) {
    std::string path;
    if (world_rank() == 0) {
      char pattern[] = "/tmp/kstencil_test_output_XXXXXX";
      if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
      path = pattern;
    }
    int length = static_cast<int>(path.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(length));
    MPI_Bcast(path.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::error_code ec;
      if (const char* keep = std::getenv("KSTENCIL_KEEP_TEST_OUTPUT")) {
        const fs::path target = fs::path(keep) / label_;
        fs::remove_all(target, ec);
        fs::create_directories(target, ec);
        fs::copy(path_, target, fs::copy_options::recursive, ec);
      }
      fs::remove_all(path_, ec);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  std::string label_;
  fs::path path_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> folder_entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OutputError& e) {
    return e.what();
  }
  return "(no OutputError thrown)";
}

// This rank's slab of `global` split along z over the ranks (some may be empty).
Box z_slab(const Box& global, int rank, int ranks) {
  Box b = global;
  const Index nz = global.extent(2);
  b.lo[2] = global.lo[2] + nz * rank / ranks;
  b.hi[2] = global.lo[2] + nz * (rank + 1) / ranks;
  return b;
}

// Values on box b, x fastest, from f(i, j, k) in global indices.
template <class T, class F>
std::vector<T> values_on(const Box& b, F f) {
  std::vector<T> v;
  for (Index k = b.lo[2]; k < b.hi[2]; ++k)
    for (Index j = b.lo[1]; j < b.hi[1]; ++j)
      for (Index i = b.lo[0]; i < b.hi[0]; ++i) v.push_back(static_cast<T>(f(i, j, k)));
  return v;
}

double u_value(Index i, Index j, Index k, std::int64_t step) {
  return std::sin(0.3 * static_cast<double>(i + 7 * j + 31 * k)) * 1e3 / 7 +
         static_cast<double>(step);
}

float v_value(Index i, Index j, Index k, std::int64_t step) {
  return static_cast<float>(i + 10 * j + 100 * k) * 0.1f + static_cast<float>(step) / 3.0f;
}

// ---------------------------------------------------------------------------------------------
// HDF5 read-back (serial, read-only).

struct H5Id {
  hid_t id;
  herr_t (*close)(hid_t);
  ~H5Id() {
    if (id >= 0) close(id);
  }
};

struct DatasetInfo {
  std::vector<hsize_t> dims;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;
};

DatasetInfo dataset_info(hid_t file, const std::string& name) {
  H5Id dset{H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose};
  REQUIRE(dset.id >= 0);
  H5Id space{H5Dget_space(dset.id), H5Sclose};
  H5Id type{H5Dget_type(dset.id), H5Tclose};
  DatasetInfo info;
  const int rank = H5Sget_simple_extent_ndims(space.id);
  REQUIRE(rank >= 0);
  info.dims.resize(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.id, info.dims.data(), nullptr);
  info.type_class = H5Tget_class(type.id);
  info.type_size = H5Tget_size(type.id);
  return info;
}

template <class T>
std::vector<T> read_dataset(hid_t file, const std::string& name, hid_t mem_type,
                            std::size_t count) {
  H5Id dset{H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose};
  REQUIRE(dset.id >= 0);
  std::vector<T> values(count);
  REQUIRE(H5Dread(dset.id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  return values;
}

// Reads a scalar (n = 1) or 1D (n values) numeric attribute, checking its shape.
template <class T>
std::vector<T> read_numeric_attribute(hid_t object, const std::string& name, hid_t mem_type,
                                      std::size_t n) {
  INFO("attribute " << name);
  H5Id attr{H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose};
  REQUIRE(attr.id >= 0);
  H5Id space{H5Aget_space(attr.id), H5Sclose};
  if (n == 1) {
    CHECK(H5Sget_simple_extent_type(space.id) == H5S_SCALAR);
  } else {
    REQUIRE(H5Sget_simple_extent_ndims(space.id) == 1);
    hsize_t dim = 0;
    H5Sget_simple_extent_dims(space.id, &dim, nullptr);
    REQUIRE(dim == n);
  }
  H5Id type{H5Aget_type(attr.id), H5Tclose};
  CHECK(H5Tget_class(type.id) == H5Tget_class(mem_type));
  CHECK(H5Tget_size(type.id) == sizeof(T));
  std::vector<T> values(n);
  REQUIRE(H5Aread(attr.id, mem_type, values.data()) >= 0);
  return values;
}

std::int64_t int_attribute(hid_t object, const std::string& name) {
  return read_numeric_attribute<std::int64_t>(object, name, H5T_NATIVE_INT64, 1)[0];
}
double double_attribute(hid_t object, const std::string& name) {
  return read_numeric_attribute<double>(object, name, H5T_NATIVE_DOUBLE, 1)[0];
}
template <class T>
std::array<T, 3> array_attribute(hid_t object, const std::string& name) {
  const hid_t mem_type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  const auto v = read_numeric_attribute<T>(object, name, mem_type, 3);
  return {v[0], v[1], v[2]};
}

// Fixed- or variable-length string attribute.
std::string string_attribute(hid_t object, const std::string& name) {
  INFO("attribute " << name);
  H5Id attr{H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose};
  REQUIRE(attr.id >= 0);
  H5Id type{H5Aget_type(attr.id), H5Tclose};
  REQUIRE(H5Tget_class(type.id) == H5T_STRING);
  H5Id space{H5Aget_space(attr.id), H5Sclose};
  CHECK(H5Sget_simple_extent_type(space.id) == H5S_SCALAR);
  if (H5Tis_variable_str(type.id) > 0) {
    char* text = nullptr;
    REQUIRE(H5Aread(attr.id, type.id, &text) >= 0);
    REQUIRE(text != nullptr);
    std::string s(text);
    H5free_memory(text);
    return s;
  }
  std::string s(H5Tget_size(type.id), '\0');
  REQUIRE(H5Aread(attr.id, type.id, s.data()) >= 0);
  return s.substr(0, s.find('\0'));
}

struct H5File {
  hid_t id;
  explicit H5File(const fs::path& path) : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {
    REQUIRE(id >= 0);
  }
  ~H5File() { H5Fclose(id); }
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;
};

// ---------------------------------------------------------------------------------------------
// A tiny XML reader (elements, attributes, text; no DTD), enough to check the XDMF structure.

struct XmlNode {
  std::string tag;
  std::map<std::string, std::string> attributes;
  std::string text;
  std::vector<XmlNode> children;

  std::vector<const XmlNode*> all(const std::string& t) const {
    std::vector<const XmlNode*> found;
    for (const XmlNode& c : children)
      if (c.tag == t) found.push_back(&c);
    return found;
  }
  const XmlNode& one(const std::string& t) const {
    const auto found = all(t);
    if (found.size() != 1)
      throw std::runtime_error("<" + tag + "> has " + std::to_string(found.size()) + " <" + t +
                               ">");
    return *found[0];
  }
  std::string attr(const std::string& name) const {
    const auto it = attributes.find(name);
    if (it == attributes.end()) throw std::runtime_error("<" + tag + "> lacks " + name);
    return it->second;
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}
  XmlNode document() {
    skip_prolog();
    XmlNode root = element();
    skip_space();
    if (p_ != s_.size()) fail("text after the root element");
    return root;
  }

 private:
  std::string s_;
  std::size_t p_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("malformed XML at offset " + std::to_string(p_) + ": " + what);
  }
  void skip_space() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  void skip_prolog() {
    for (;;) {
      skip_space();
      if (s_.compare(p_, 2, "<?") == 0 || s_.compare(p_, 2, "<!") == 0) {
        const auto end = s_.find('>', p_);
        if (end == std::string::npos) fail("unterminated declaration");
        p_ = end + 1;
      } else {
        return;
      }
    }
  }
  void expect(char c) {
    if (p_ >= s_.size() || s_[p_] != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  std::string name() {
    const std::size_t start = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' ||
                              s_[p_] == ':' || s_[p_] == '-' || s_[p_] == '.'))
      ++p_;
    if (p_ == start) fail("expected a name");
    return s_.substr(start, p_ - start);
  }
  static std::string unescape(const std::string& t) {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] != '&') {
        out += t[i];
        continue;
      }
      const auto end = t.find(';', i);
      const std::string entity = t.substr(i + 1, end - i - 1);
      const std::map<std::string, char> known = {
          {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      if (end == std::string::npos || !known.count(entity))
        throw std::runtime_error("unknown XML entity in " + t);
      out += known.at(entity);
      i = end;
    }
    return out;
  }
  XmlNode element() {
    XmlNode node;
    expect('<');
    node.tag = name();
    for (;;) {
      skip_space();
      if (p_ >= s_.size()) fail("unterminated tag");
      if (s_[p_] == '/') {
        ++p_;
        expect('>');
        return node;
      }
      if (s_[p_] == '>') {
        ++p_;
        break;
      }
      const std::string key = name();
      skip_space();
      expect('=');
      skip_space();
      expect('"');
      const auto end = s_.find('"', p_);
      if (end == std::string::npos) fail("unterminated attribute value");
      if (!node.attributes.emplace(key, unescape(s_.substr(p_, end - p_))).second)
        fail("attribute " + key + " given twice");
      p_ = end + 1;
    }
    for (;;) {
      if (p_ >= s_.size()) fail("<" + node.tag + "> is not closed");
      if (s_.compare(p_, 2, "</") == 0) {
        p_ += 2;
        if (name() != node.tag) fail("mismatched end tag for <" + node.tag + ">");
        skip_space();
        expect('>');
        return node;
      }
      if (s_[p_] == '<') {
        node.children.push_back(element());
      } else {
        const auto end = s_.find('<', p_);
        if (end == std::string::npos) fail("text runs to the end");
        node.text += unescape(s_.substr(p_, end - p_));
        p_ = end;
      }
    }
  }
};

std::vector<double> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> v;
  double x;
  while (in >> x) v.push_back(x);
  return v;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Checks one Uniform grid of the XDMF against a geometry and its fields (name, precision).
void check_uniform_grid(const XmlNode& grid, double time, const std::string& file,
                        const FieldGeometry& g,
                        const std::vector<std::pair<std::string, int>>& fields) {
  CHECK(grid.tag == "Grid");
  CHECK(grid.attr("GridType") == "Uniform");
  CHECK(std::stod(grid.one("Time").attr("Value")) == time);
  const std::string dims =
      std::to_string(g.dims[2]) + " " + std::to_string(g.dims[1]) + " " + std::to_string(g.dims[0]);
  const XmlNode& topology = grid.one("Topology");
  CHECK(topology.attr("TopologyType") == "3DCoRectMesh");
  CHECK(topology.attr("Dimensions") == dims);
  const XmlNode& geometry = grid.one("Geometry");
  CHECK(geometry.attr("GeometryType") == "ORIGIN_DXDYDZ");
  const auto items = geometry.all("DataItem");
  REQUIRE(items.size() == 2);
  for (const XmlNode* item : items) {
    CHECK(item->attr("Format") == "XML");
    CHECK(item->attr("Dimensions") == "3");
    CHECK(item->attr("NumberType") == "Float");
    CHECK(item->attr("Precision") == "8");
  }
  CHECK(numbers(items[0]->text) == std::vector<double>{g.origin[2], g.origin[1], g.origin[0]});
  CHECK(numbers(items[1]->text) == std::vector<double>{g.spacing[2], g.spacing[1], g.spacing[0]});
  const auto attributes = grid.all("Attribute");
  REQUIRE(attributes.size() == fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const XmlNode& a = *attributes[i];
    CHECK(a.attr("Name") == fields[i].first);
    CHECK(a.attr("Center") == "Node");
    CHECK(a.attr("AttributeType") == "Scalar");
    const XmlNode& item = a.one("DataItem");
    CHECK(item.attr("Format") == "HDF");
    CHECK(item.attr("NumberType") == "Float");
    CHECK(item.attr("Precision") == std::to_string(fields[i].second));
    CHECK(item.attr("Dimensions") == dims);
    CHECK(trim(item.text) == file + ":/" + fields[i].first);
  }
}

XmlNode read_xdmf(const fs::path& path) {
  XmlNode root = XmlReader(read_text(path)).document();
  REQUIRE(root.tag == "Xdmf");
  CHECK(root.attr("Version") == "3.0");
  return root;
}

const XmlNode& temporal_collection(const XmlNode& root) {
  const XmlNode& series = root.one("Domain").one("Grid");
  CHECK(series.attr("GridType") == "Collection");
  CHECK(series.attr("CollectionType") == "Temporal");
  return series;
}

// The common test setting: a non-cubic grid split along z over the ranks.
FieldGeometry small_geometry() {
  FieldGeometry g;
  g.dims = {5, 4, 3};
  g.origin = {0.5, -1.25, 0.1};
  g.spacing = {0.1, 0.2, 1.0 / 3.0};
  g.owned = z_slab(Box{{0, 0, 0}, g.dims}, world_rank(), world_size());
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("write_file_atomically replaces the file and leaves no temporary", "[output]") {
  TempDir tmp("atomic");
  const fs::path file = tmp.path() / ("rank" + std::to_string(world_rank()) + ".txt");
  write_file_atomically(file, "first\n");
  CHECK(read_text(file) == "first\n");
  write_file_atomically(file, std::string("second\0binary", 13));
  CHECK(read_text(file) == std::string("second\0binary", 13));
  write_file_atomically(file, "");
  CHECK(read_text(file).empty());
  MPI_Barrier(MPI_COMM_WORLD);
  // Only the ranks' final files remain.
  CHECK(folder_entries(tmp.path()).size() == static_cast<std::size_t>(world_size()));
}

TEST_CASE("write_file_atomically names the path and the reason when it cannot write", "[output]") {
  TempDir tmp("atomic_error");
  const fs::path file = tmp.path() / "missing" / "out.txt";
  const std::string message = error_of([&] { write_file_atomically(file, "x"); });
  CHECK_THAT(message, ContainsSubstring(file.string()));
  CHECK_THAT(message, ContainsSubstring(std::strerror(ENOENT)));
  CHECK(folder_entries(tmp.path()).empty());
}

TEST_CASE("prepare_run_directory creates the run folder and missing parents", "[output]") {
  TempDir tmp("prepare_create");
  const fs::path root = tmp.path() / "outputs" / "nested";
  const fs::path dir = prepare_run_directory(root, "run1", false, "[run]\n", MPI_COMM_WORLD);
  CHECK(dir == root / "run1");
  // The deck first: a run killed hard leaves a folder --overwrite knows as a run's.
  CHECK(folder_entries(dir) == std::vector<std::string>{"deck.toml"});
  CHECK(read_text(dir / "deck.toml") == "[run]\n");
  // An existing empty folder is fine without overwrite.
  if (world_rank() == 0) fs::create_directories(tmp.path() / "found");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(prepare_run_directory(tmp.path(), "found", false, "[x]\n", MPI_COMM_WORLD) ==
        tmp.path() / "found");
  // A run that fails before writing more leaves nothing behind: the folders it made go, deck
  // included; the folder it found stays, empty again.
  if (world_rank() == 0) {
    remove_empty_output_folders();
    CHECK(!fs::exists(tmp.path() / "outputs"));
    CHECK(fs::is_directory(tmp.path() / "found"));
    CHECK(fs::is_empty(tmp.path() / "found"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("prepare_run_directory refuses a non-empty folder without overwrite", "[output]") {
  TempDir tmp("prepare_refuse");
  const fs::path dir = tmp.path() / "x";
  if (world_rank() == 0) {
    fs::create_directories(dir);
    write_text(dir / "deck.toml", "[run]\n");
    write_text(dir / "x_000000.h5", "data");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string message =
      error_of([&] { prepare_run_directory(tmp.path(), "x", false, "", MPI_COMM_WORLD); });
  CHECK_THAT(message, ContainsSubstring("output folder " + dir.string() +
                                        " already exists and is not empty"));
  CHECK_THAT(message, ContainsSubstring("output.overwrite = true"));
  CHECK_THAT(message, ContainsSubstring("run.name"));
  CHECK(folder_entries(dir) == std::vector<std::string>{"deck.toml", "x_000000.h5"});
}

TEST_CASE("prepare_run_directory overwrites only a folder holding deck.toml", "[output]") {
  TempDir tmp("prepare_overwrite");
  const fs::path run = tmp.path() / "run";
  const fs::path other = tmp.path() / "other";
  if (world_rank() == 0) {
    fs::create_directories(run / "sub");
    write_text(run / "deck.toml", "[run]\n");
    write_text(run / "run_000000.h5", "data");
    write_text(run / "sub" / "file", "data");
    fs::create_directories(other);
    write_text(other / "precious.txt", "keep me");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(prepare_run_directory(tmp.path(), "run", true, "[new]\n", MPI_COMM_WORLD) == run);
  CHECK(folder_entries(run) == std::vector<std::string>{"deck.toml"});
  CHECK(read_text(run / "deck.toml") == "[new]\n");

  const std::string message =
      error_of([&] { prepare_run_directory(tmp.path(), "other", true, "", MPI_COMM_WORLD); });
  CHECK_THAT(message, ContainsSubstring(other.string()));
  CHECK_THAT(message, ContainsSubstring("does not look like a kstencil run folder"));
  CHECK(read_text(other / "precious.txt") == "keep me");

  // A name that would reach outside the root is refused.
  CHECK_THAT(
      error_of([&] { prepare_run_directory(tmp.path() / "run", "..", true, "", MPI_COMM_WORLD); }),
      ContainsSubstring("invalid run name"));
  CHECK(read_text(other / "precious.txt") == "keep me");
}

TEST_CASE("OutputSeries writes two steps whose datasets and attributes read back exactly",
          "[output]") {
  TempDir tmp("series");
  const FieldGeometry g = small_geometry();
  const std::string long_text(100000, 'd');  // larger than a compact attribute (64 KiB)
  const Attributes attributes = {{"kernel", std::string("laplacian")},
                                 {"empty", std::string()},
                                 {"deck", long_text},
                                 {"ranks", std::int64_t{-42}},
                                 {"ratio", 0.1 + 0.2},
                                 {"tile", std::array<std::int64_t, 3>{8, 4, 2}},
                                 {"spacing", g.spacing}};
  OutputSeries series(tmp.path(), "small", attributes, MPI_COMM_WORLD);
  CHECK(series.xdmf_path() == tmp.path() / "small.xdmf");
  const std::vector<std::pair<std::int64_t, double>> steps = {{0, 0.0}, {10, 0.30000000000000004}};
  for (const auto& [step, time] : steps) {
    const std::int64_t s = step;
    const auto u =
        values_on<double>(g.owned, [&](Index i, Index j, Index k) { return u_value(i, j, k, s); });
    const auto v =
        values_on<float>(g.owned, [&](Index i, Index j, Index k) { return v_value(i, j, k, s); });
    series.write_step(step, time,
                      {FieldData{"u", g, u.data(), false}, FieldData{"v", g, v.data(), true}});
  }
  CHECK(series.step_files() ==
        std::vector<fs::path>{tmp.path() / "small_000000.h5", tmp.path() / "small_000010.h5"});
  CHECK(folder_entries(tmp.path()) ==
        std::vector<std::string>{"small.xdmf", "small_000000.h5", "small_000010.h5"});

  const Box global{{0, 0, 0}, g.dims};
  for (const auto& [step, time] : steps) {
    const std::int64_t s = step;
    INFO("step " << step);
    H5File file(series.step_files()[step == 0 ? 0 : 1]);
    for (const char* name : {"u", "v"}) {
      INFO("dataset " << name);
      const DatasetInfo info = dataset_info(file.id, name);
      CHECK(info.dims == std::vector<hsize_t>{3, 4, 5});
      CHECK(info.type_class == H5T_FLOAT);
      CHECK(info.type_size == (name[0] == 'u' ? 8u : 4u));
      H5Id dset{H5Dopen2(file.id, name, H5P_DEFAULT), H5Dclose};
      CHECK(array_attribute<double>(dset.id, "origin") == g.origin);
      CHECK(array_attribute<double>(dset.id, "spacing") == g.spacing);
      CHECK(array_attribute<std::int64_t>(dset.id, "dims") == g.dims);
    }
    const auto u_want =
        values_on<double>(global, [&](Index i, Index j, Index k) { return u_value(i, j, k, s); });
    const auto v_want =
        values_on<float>(global, [&](Index i, Index j, Index k) { return v_value(i, j, k, s); });
    const auto u = read_dataset<double>(file.id, "u", H5T_NATIVE_DOUBLE, u_want.size());
    const auto v = read_dataset<float>(file.id, "v", H5T_NATIVE_FLOAT, v_want.size());
    CHECK(std::memcmp(u.data(), u_want.data(), u.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(v.data(), v_want.data(), v.size() * sizeof(float)) == 0);

    CHECK(string_attribute(file.id, "kernel") == "laplacian");
    CHECK(string_attribute(file.id, "empty").empty());
    CHECK(string_attribute(file.id, "deck") == long_text);
    CHECK(int_attribute(file.id, "ranks") == -42);
    const double ratio = double_attribute(file.id, "ratio");
    CHECK(std::memcmp(&ratio, &std::get<double>(attributes[4].second), sizeof ratio) == 0);
    CHECK(array_attribute<std::int64_t>(file.id, "tile") == std::array<std::int64_t, 3>{8, 4, 2});
    CHECK(array_attribute<double>(file.id, "spacing") == g.spacing);
    CHECK(int_attribute(file.id, "step") == step);
    CHECK(double_attribute(file.id, "time") == time);
    CHECK(H5Aexists(file.id, "nothing") == 0);
  }
}

TEST_CASE("OutputSeries writes only the owned hyperslab of a partial box", "[output]") {
  TempDir tmp("hyperslab");
  FieldGeometry g = small_geometry();
  const Box part{{1, 1, 0}, {4, 3, 2}};
  g.owned = z_slab(part, world_rank(), world_size());
  const auto u =
      values_on<double>(g.owned, [](Index i, Index j, Index k) { return u_value(i, j, k, 0); });
  OutputSeries series(tmp.path(), "part", {}, MPI_COMM_WORLD);
  series.write_step(3, 1.5, {FieldData{"u", g, u.data(), false}});

  H5File file(tmp.path() / "part_000003.h5");
  CHECK(dataset_info(file.id, "u").dims == std::vector<hsize_t>{3, 4, 5});
  const auto all = read_dataset<double>(file.id, "u", H5T_NATIVE_DOUBLE, 60);
  std::size_t n = 0;
  for (Index k = 0; k < 3; ++k)
    for (Index j = 0; j < 4; ++j)
      for (Index i = 0; i < 5; ++i, ++n) {
        INFO("i j k = " << i << " " << j << " " << k);
        // A dataset that the owned boxes do not cover is zero-filled first.
        const double want = part.contains({i, j, k}) ? u_value(i, j, k, 0) : 0.0;
        CHECK(all[n] == want);
      }
}

TEST_CASE("OutputSeries accepts ranks that own nothing", "[output]") {
  TempDir tmp("empty_owned");
  FieldGeometry g = small_geometry();
  const int rank = world_rank(), ranks = world_size();
  // Rank 0 owns nothing; the others split the grid (with one rank nothing is written).
  g.owned =
      rank == 0 ? Box{{2, 2, 2}, {2, 2, 2}} : z_slab(Box{{0, 0, 0}, g.dims}, rank - 1, ranks - 1);
  const auto v =
      values_on<float>(g.owned, [](Index i, Index j, Index k) { return v_value(i, j, k, 1); });
  OutputSeries series(tmp.path(), "e", {}, MPI_COMM_WORLD);
  series.write_step(1, 2.0, {FieldData{"v", g, rank == 0 ? nullptr : v.data(), true}});
  H5File file(tmp.path() / "e_000001.h5");
  CHECK(dataset_info(file.id, "v").dims == std::vector<hsize_t>{3, 4, 5});
  const auto all = read_dataset<float>(file.id, "v", H5T_NATIVE_FLOAT, 60);
  const auto want =
      ranks == 1 ? std::vector<float>(60, 0.0f)
                 : values_on<float>(Box{{0, 0, 0}, g.dims},
                                    [](Index i, Index j, Index k) { return v_value(i, j, k, 1); });
  CHECK(all == want);
}

TEST_CASE("OutputSeries XDMF lists every step with z-y-x dims, origin, spacing and time",
          "[output]") {
  TempDir tmp("xdmf");
  const FieldGeometry g = small_geometry();
  const auto u =
      values_on<double>(g.owned, [](Index i, Index j, Index k) { return u_value(i, j, k, 0); });
  const auto v =
      values_on<float>(g.owned, [](Index i, Index j, Index k) { return v_value(i, j, k, 0); });
  OutputSeries series(tmp.path(), "run", {}, MPI_COMM_WORLD);
  const std::vector<FieldData> fields = {FieldData{"u", g, u.data(), false},
                                         FieldData{"lap_u", g, v.data(), true}};
  const std::vector<std::pair<std::string, int>> described = {{"u", 8}, {"lap_u", 4}};

  series.write_step(0, 0.0, fields);
  {
    const XmlNode root = read_xdmf(series.xdmf_path());
    const auto grids = temporal_collection(root).all("Grid");
    REQUIRE(grids.size() == 1);
    CHECK(grids[0]->attr("Name") == "step_000000");
    check_uniform_grid(*grids[0], 0.0, "run_000000.h5", g, described);
  }
  series.write_step(7, 0.1 + 0.2, fields);
  series.write_step(12, 1e-7 / 3, fields);
  const XmlNode root = read_xdmf(series.xdmf_path());
  const auto grids = temporal_collection(root).all("Grid");
  // Listed in time order (step 12 has an earlier time than step 7).
  REQUIRE(grids.size() == 3);
  check_uniform_grid(*grids[0], 0.0, "run_000000.h5", g, described);
  check_uniform_grid(*grids[1], 1e-7 / 3, "run_000012.h5", g, described);
  check_uniform_grid(*grids[2], 0.1 + 0.2, "run_000007.h5", g, described);
  // The text itself, in order: dims and geometry z y x, fields, times.
  const std::string text = read_text(series.xdmf_path());
  std::size_t at = 0;
  for (const std::string expected :
       {"<Xdmf Version=\"3.0\">", "CollectionType=\"Temporal\"", "<Time Value=\"0\"/>",
        "Dimensions=\"3 4 5\"", "GeometryType=\"ORIGIN_DXDYDZ\"", "Attribute Name=\"u\"",
        "run_000000.h5:/u", "run_000000.h5:/lap_u", "run_000012.h5:/lap_u",
        "<Time Value=\"0.30000000000000004\"/>", "run_000007.h5:/lap_u", "</Xdmf>"}) {
    INFO("expected " << expected);
    at = text.find(expected, at);
    REQUIRE(at != std::string::npos);
  }
  CHECK(folder_entries(tmp.path()) ==
        std::vector<std::string>{"run.xdmf", "run_000000.h5", "run_000007.h5", "run_000012.h5"});
}

TEST_CASE("OutputSeries XDMF puts staggered fields in a spatial collection per step", "[output]") {
  TempDir tmp("staggered");
  const FieldGeometry nodes = small_geometry();
  FieldGeometry ex = nodes;  // x-staggered: one value fewer along x, shifted by half a cell
  ex.dims = {4, 4, 3};
  ex.origin[0] += nodes.spacing[0] / 2;
  ex.owned = z_slab(Box{{0, 0, 0}, ex.dims}, world_rank(), world_size());
  const auto phi =
      values_on<double>(nodes.owned, [](Index i, Index j, Index k) { return u_value(i, j, k, 0); });
  const auto rho =
      values_on<double>(nodes.owned, [](Index i, Index j, Index k) { return u_value(i, j, k, 1); });
  const auto e =
      values_on<float>(ex.owned, [](Index i, Index j, Index k) { return v_value(i, j, k, 0); });
  OutputSeries series(tmp.path(), "fdtd", {}, MPI_COMM_WORLD);
  series.write_step(
      0, 0.25,
      {FieldData{"phi", nodes, phi.data(), false}, FieldData{"ex", ex, e.data(), true},
       FieldData{"rho", nodes, rho.data(), false}});
  const XmlNode root = read_xdmf(series.xdmf_path());
  const auto steps = temporal_collection(root).all("Grid");
  REQUIRE(steps.size() == 1);
  const XmlNode& step = *steps[0];
  CHECK(step.attr("GridType") == "Collection");
  CHECK(step.attr("CollectionType") == "Spatial");
  CHECK(std::stod(step.one("Time").attr("Value")) == 0.25);
  const auto grids = step.all("Grid");
  REQUIRE(grids.size() == 2);
  CHECK(grids[0]->attr("Name") == "phi_rho");
  check_uniform_grid(*grids[0], 0.25, "fdtd_000000.h5", nodes, {{"phi", 8}, {"rho", 8}});
  CHECK(grids[1]->attr("Name") == "ex");
  check_uniform_grid(*grids[1], 0.25, "fdtd_000000.h5", ex, {{"ex", 4}});

  H5File file(tmp.path() / "fdtd_000000.h5");
  CHECK(dataset_info(file.id, "ex").dims == std::vector<hsize_t>{3, 4, 4});
  const auto ex_read = read_dataset<float>(file.id, "ex", H5T_NATIVE_FLOAT, 48);
  CHECK(ex_read == values_on<float>(Box{{0, 0, 0}, ex.dims},
                                    [](Index i, Index j, Index k) { return v_value(i, j, k, 0); }));
}

TEST_CASE("OutputSeries refuses bad fields and reserved attributes on every rank", "[output]") {
  TempDir tmp("invalid");
  CHECK_THAT(error_of([&] {
               OutputSeries(tmp.path(), "bad", {{"time", 1.0}}, MPI_COMM_WORLD);
             }),
             ContainsSubstring("reserved"));
  OutputSeries series(tmp.path(), "bad", {}, MPI_COMM_WORLD);
  FieldGeometry g = small_geometry();
  const auto u = values_on<double>(g.owned, [](Index, Index, Index) { return 1.0; });
  // Only the last rank's box is wrong; every rank must throw the same error.
  if (world_rank() == world_size() - 1) g.owned.hi[0] = 6;
  const std::string message = error_of([&] {
    series.write_step(0, 0.0, {FieldData{"u", g, u.data(), false}});
  });
  CHECK_THAT(message, ContainsSubstring("lies outside the dims"));
  CHECK_THAT(error_of([&] {
               series.write_step(0, 0.0,
                                 {FieldData{"u", small_geometry(), u.data(), false},
                                  FieldData{"u", small_geometry(), u.data(), false}});
             }),
             ContainsSubstring("given twice"));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(folder_entries(tmp.path()).empty());
  CHECK(series.step_files().empty());
}

TEST_CASE("OutputSeries names the file and the HDF5 call when a step cannot be written",
          "[output]") {
  TempDir tmp("hdf5_error");
  const fs::path missing = tmp.path() / "missing";
  OutputSeries series(missing, "m", {}, MPI_COMM_WORLD);
  const FieldGeometry g = small_geometry();
  const auto u = values_on<double>(g.owned, [](Index, Index, Index) { return 1.0; });
  const std::string message = error_of([&] {
    series.write_step(0, 0.0, {FieldData{"u", g, u.data(), false}});
  });
  CHECK_THAT(message, ContainsSubstring((missing / "m_000000.h5.tmp").string()));
  CHECK_THAT(message, ContainsSubstring("H5Fcreate failed"));
  CHECK(series.step_files().empty());
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(folder_entries(tmp.path()).empty());
}

namespace {

// Every point of a sub-box, with extents that are not multiples of the copy's tiles, lands at
// its x-fastest position.
template <class KokkosLayout>
void check_x_fastest() {
  Grid g = Grid::whole({37, 5, 70}, {0, 0, 0}, {1, 1, 1});
  g.allocated = Box{{-1, 0, 0}, {37, 5, 71}};  // ghost layers below x and above z
  const Index3 n = g.local_extents();
  Kokkos::View<double***, KokkosLayout> field("field", n[0], n[1], n[2]);
  auto host = Kokkos::create_mirror_view(field);
  for (Index i = 0; i < n[0]; ++i)
    for (Index j = 0; j < n[1]; ++j)
      for (Index k = 0; k < n[2]; ++k) host(i, j, k) = double(i + 1000 * j + 100000 * k);
  Kokkos::deep_copy(field, host);
  const Box box{{3, 1, 2}, {37, 5, 69}};
  const std::vector<double> out = to_host_x_fastest(field, g, box);
  REQUIRE(out.size() == static_cast<std::size_t>(box.size()));
  std::size_t wrong = 0, q = 0;
  for (Index k = box.lo[2]; k < box.hi[2]; ++k)
    for (Index j = box.lo[1]; j < box.hi[1]; ++j)
      for (Index i = box.lo[0]; i < box.hi[0]; ++i, ++q)
        wrong += out[q] != double((i + 1) + 1000 * j + 100000 * k);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("fields copy to host x fastest from either layout and any sub-box", "[output]") {
  check_x_fastest<Kokkos::LayoutRight>();
  check_x_fastest<Kokkos::LayoutLeft>();
}
