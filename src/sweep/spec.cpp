#include "sweep/spec.hpp"

#include <muParser.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "core/deck_keys.hpp"
#include "core/parsed_toml.hpp"
#include "core/toml_literal.hpp"

namespace kstencil {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  const auto last = s.find_last_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// Splits at the commas outside brackets and quotes: "[1, 2],[3, 4]" -> "[1, 2]", "[3, 4]".
std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (const char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(trim(current));
  return parts;
}

nlohmann::ordered_json to_json(const toml::node& node) {
  if (auto v = node.as_string()) return v->get();
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_array()) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& element : *v) out.push_back(to_json(element));
    return out;
  }
  return toml_literal(node);
}

const KeySpec* find_key(const Schema& schema, const std::string& name) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return nullptr;
  for (const auto& spec : schema)
    if (spec.section == name.substr(0, dot) && spec.key == name.substr(dot + 1)) return &spec;
  return nullptr;
}

// A dimension from a TOML array of values (each one value, or for several keys one array of a
// value per key); `origin` names where it was written, for messages.
SweepDimension make_dimension(const std::string& name, const toml::node& node,
                              const std::string& origin, const Schema& schema) {
  SweepDimension dim;
  dim.origin = origin;
  for (const auto& key : split_top_level(name)) dim.keys.push_back(key);
  for (const auto& key : dim.keys) {
    if (key.rfind("sweep.", 0) == 0 || key.rfind("output.", 0) == 0 || key == "run.solver" ||
        key == "run.name")
      throw DeckError(origin + ": " + key +
                      " is not a sweep parameter (the sweep runs one solver, names its own "
                      "folder and writes no run folders); allowed: the solver's other deck keys");
    if (!find_key(schema, key))
      throw DeckError(origin + ": unknown deck key " + key +
                      " (section.key, as `kstencil keys` lists them)");
  }
  const auto* array = node.as_array();
  if (!array || array->empty())
    throw DeckError(origin + ": a non-empty list of values, e.g. " + name +
                    (dim.keys.size() > 1 ? " = [[a1, a2], [b1, b2]]" : " = [v1, v2]"));
  const KeyType type = find_key(schema, dim.keys[0])->type;
  const bool triple = type == KeyType::integer3 || type == KeyType::real3;
  std::vector<const toml::node*> values;
  if (dim.keys.size() == 1 && triple && !array->get(0)->is_array())
    values.push_back(&node);  // one tile, not three values
  else
    for (const auto& element : *array) values.push_back(&element);
  for (const toml::node* value : values) {
    std::vector<std::string> literals;
    std::vector<nlohmann::ordered_json> json;
    if (dim.keys.size() == 1) {
      literals.push_back(toml_literal(*value));
      json.push_back(to_json(*value));
    } else {
      const auto* group = value->as_array();
      if (!group || group->size() != dim.keys.size())
        throw DeckError(origin + ": " + toml_literal(*value) + ": each value of " + name +
                        " is a list of " + std::to_string(dim.keys.size()) +
                        " values, one per key");
      for (const auto& element : *group) {
        literals.push_back(toml_literal(element));
        json.push_back(to_json(element));
      }
    }
    if (std::find(dim.values.begin(), dim.values.end(), literals) != dim.values.end())
      throw DeckError(origin + ": " + toml_literal(*value) +
                      " is given twice (the sweep would run " +
                      "it twice); allowed: distinct values");
    dim.values.push_back(std::move(literals));
    dim.json.push_back(std::move(json));
  }
  return dim;
}

// A --vary text, "key=v1,v2": each value a TOML value or a bare word (a string).
SweepDimension vary_dimension(const std::string& text, const Schema& schema) {
  const std::string origin = "--vary '" + text + "'";
  const auto equals = text.find('=');
  if (equals == std::string::npos || trim(text.substr(0, equals)).empty())
    throw DeckError(origin + ": expected key=v1,v2,... (e.g. kernel.layout=left,right)");
  toml::array values;
  for (const auto& part : split_top_level(text.substr(equals + 1))) {
    try {
      const toml::table t = toml::parse("v = " + part);
      values.push_back(*t.get("v"));
    } catch (const toml::parse_error&) {
      if (opens_as_toml_value(part))
        throw DeckError(origin + ": " + trim(part) +
                        ": not a TOML value (unclosed bracket or quote?); e.g. "
                        "kernel.tile=[32,4,1],[64,2,1]");
      values.push_back(part);
    }
  }
  return make_dimension(trim(text.substr(0, equals)), values, origin, schema);
}

// kernel.tile's values: every power-of-two tile whose work items lie in [min, max], each axis at
// most axis_max, with Kokkos' default [0, 0, 0] first when asked.
SweepDimension tile_dimension(std::int64_t min, std::int64_t max,
                              const std::array<std::int64_t, 3>& axis_max, bool kokkos_default) {
  SweepDimension dim;
  dim.keys = {"kernel.tile"};
  dim.origin = "kernel.tile from --tiles or [sweep.tiles]";
  const auto add = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    dim.values.push_back(
        {"[" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "]"});
    dim.json.emplace_back(1, nlohmann::ordered_json::array({x, y, z}));
  };
  if (kokkos_default) add(0, 0, 0);
  for (std::int64_t x = 1; x <= axis_max[0]; x *= 2)
    for (std::int64_t y = 1; y <= axis_max[1]; y *= 2)
      for (std::int64_t z = 1; z <= axis_max[2]; z *= 2)
        if (x * y * z >= min && x * y * z <= max) add(x, y, z);
  return dim;
}

struct TileRequest {
  std::int64_t min = 1, max = 1024;
  std::array<std::int64_t, 3> axis_max{0, 0, 0};  // 0: max
  bool kokkos_default = true;
};

TileRequest tile_request_defaults(const ExecLimits& limits) {
  TileRequest r;
  if (limits.gpu) {
    r.min = 32;
    r.max = limits.max_threads_per_block;
  }
  return r;
}

// [sweep.tiles] of the deck file.
TileRequest tile_request_from(const toml::table& table, const std::string& origin,
                              const ExecLimits& limits) {
  TileRequest r = tile_request_defaults(limits);
  const std::string allowed =
      "min and max (work items per group, integers >= 1), axis_max (3 integers >= 1), "
      "kokkos_default (boolean)";
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const std::string where = origin + ": [sweep.tiles] " + name + " = " + toml_literal(node);
    if (name == "min" || name == "max") {
      const auto v = node.value<std::int64_t>();
      if (!node.is_integer() || !v || *v < 1 || *v > (1 << 20))
        throw DeckError(where + ": allowed: an integer from 1 to 1048576");
      (name == "min" ? r.min : r.max) = *v;
    } else if (name == "axis_max") {
      const auto* a = node.as_array();
      if (!a || a->size() != 3) throw DeckError(where + ": allowed: 3 integers >= 1 (x y z)");
      for (int i = 0; i < 3; ++i) {
        const auto v = a->get(i)->value<std::int64_t>();
        if (!a->get(i)->is_integer() || !v || *v < 1 || *v > (1 << 20))
          throw DeckError(where + ": allowed: 3 integers from 1 to 1048576 (x y z)");
        r.axis_max[i] = *v;
      }
    } else if (name == "kokkos_default") {
      if (!node.is_boolean()) throw DeckError(where + ": allowed: true or false");
      r.kokkos_default = *node.value<bool>();
    } else {
      throw DeckError(origin + ": [sweep.tiles] " + name + ": unknown key; allowed: " + allowed);
    }
  }
  if (r.min > r.max)
    throw DeckError(origin + ": [sweep.tiles] min = " + std::to_string(r.min) +
                    " > max = " + std::to_string(r.max) + "; allowed: min <= max");
  return r;
}

SweepDimension tiles_of(TileRequest r) {
  for (auto& a : r.axis_max)
    if (a == 0) a = r.max;
  return tile_dimension(r.min, r.max, r.axis_max, r.kokkos_default);
}

// Table entries, nested tables flattened to dotted names, in the order of the text.
void flatten(const toml::table& table, const std::string& prefix,
             std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [key, node] : table) {
    const std::string name =
        prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table())
      flatten(*sub, name, out);
    else
      out.emplace_back(name, &node);
  }
}

// The deck's [sweep] table without its tables ([sweep.vary], [sweep.tiles]), as a root table for
// Deck::parse: moved out of `file`, so that its values keep their lines for messages.
toml::table spec_scalars(toml::table file) {
  toml::table root;
  if (auto* sweep = file["sweep"].as_table()) {
    for (auto it = sweep->begin(); it != sweep->end();)
      it = it->second.is_table() ? sweep->erase(it) : std::next(it);
    root.insert("sweep", std::move(*sweep));
  }
  return root;
}

// The variables a restriction may use: name -> (dimension, key, element; -1 = the value itself).
struct Variable {
  std::size_t dim, key;
  int element;
};
std::map<std::string, Variable> restriction_variables(const SweepSpec& spec) {
  std::map<std::string, Variable> vars;
  std::set<std::string> ambiguous;
  const auto add = [&](const std::string& name, Variable v, bool is_short) {
    if (is_short && vars.count(name)) {
      ambiguous.insert(name);
      return;
    }
    vars[name] = v;
  };
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    const SweepDimension& dim = spec.dims[d];
    for (std::size_t k = 0; k < dim.keys.size(); ++k) {
      const std::string& key = dim.keys[k];
      const std::string long_name =
          key.substr(0, key.find('.')) + "_" + key.substr(key.find('.') + 1);
      const std::string short_name = key.substr(key.find('.') + 1);
      const auto& first = dim.json[0][k];
      if (first.is_number() || first.is_boolean()) {
        add(long_name, {d, k, -1}, false);
        add(short_name, {d, k, -1}, true);
      } else if (first.is_array() && first.size() == 3 && first[0].is_number()) {
        for (int e = 0; e < 3; ++e) {
          const std::string axis(1, "xyz"[e]);
          add(long_name + "_" + axis, {d, k, e}, false);
          add(short_name + "_" + axis, {d, k, e}, true);
          if (key == "kernel.tile") add(axis, {d, k, e}, true);
        }
      }
    }
  }
  for (const auto& name : ambiguous) vars.erase(name);
  return vars;
}

double number_of(const nlohmann::ordered_json& value) {
  return value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>();
}

bool is_tile_dimension(const SweepDimension& dim) {
  if (dim.keys.size() != 1) return false;
  for (const auto& v : dim.json)
    if (!v[0].is_array() || v[0].size() != 3 || !v[0][0].is_number_integer()) return false;
  return true;
}

// A tile's work items (0 where an entry is Kokkos' default 0).
std::int64_t work_items(const nlohmann::ordered_json& tile) {
  std::int64_t n = 1;
  for (int e = 0; e < 3; ++e) n *= tile[e].get<std::int64_t>();
  return n;
}

bool is_kokkos_default(const nlohmann::ordered_json& tile) {
  return tile[0] == 0 && tile[1] == 0 && tile[2] == 0;
}

// Tiles one axis apart: equal but for one axis, doubled or halved there.
bool tiles_adjacent(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  int differing = 0;
  for (int e = 0; e < 3; ++e) {
    const auto x = a[e].get<std::int64_t>(), y = b[e].get<std::int64_t>();
    if (x == y) continue;
    if (x <= 0 || y <= 0 || (x != 2 * y && y != 2 * x)) return false;
    ++differing;
  }
  return differing == 1;
}

}  // namespace

const Schema& sweep_schema() {
  using T = KeyType;
  static const Schema schema = {
      Key("sweep", "strategy", T::string, R"("product")",
          "the way through the space: every point, a random sample of sweep.samples, or a local "
          "search from the default")
          .choices({"product", "random", "local"}),
      Key("sweep", "samples", T::integer, "16", "random: points drawn").min(1),
      Key("sweep", "budget", T::integer, "0", "configurations launched at most (0: no limit)")
          .min(0),
      Key("sweep", "budget_seconds", T::real, "0.0",
          "no new launch after this many seconds (0: no limit)")
          .min(0),
      Key("sweep", "seed", T::integer, "1", "random: the generator's seed").wide(),
      Key("sweep", "restrict", T::string, R"("")",
          "muparser expression over the varied numbers (x, y, z: the tile's entries; other keys "
          "by name, e.g. m or kernel_m); points where it is 0 are left out"),
      Key("sweep", "confirm", T::integer, "3",
          "best configurations re-timed in alternation with the default at the end")
          .min(0)
          .max(10),
      Key("sweep", "confirm_rounds", T::integer, "3", "rounds of that alternation").min(1).max(50),
      Key("sweep", "profile", T::string, R"("")",
          "command run around the best and the default configuration; {command} is the kstencil "
          "run, {out} a path prefix in the sweep folder's profiles/ (e.g. \"ncu -o {out} "
          "{command}\")")};
  return schema;
}

std::string SweepDimension::name() const {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "" : ",") + key;
  return out;
}

std::vector<std::string> SweepDimension::overrides(std::size_t v) const {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < keys.size(); ++k) out.push_back(keys[k] + "=" + values[v][k]);
  return out;
}

std::vector<std::string> deck_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (const auto& o : overrides)
    if (trim(o).rfind("sweep.", 0) != 0) out.push_back(o);
  return out;
}

SweepSpec load_sweep_spec(const std::string& deck_path, const std::vector<std::string>& overrides,
                          const std::vector<std::string>& vary, const std::string& tiles,
                          const Schema& schema, const ExecLimits& limits) {
  toml::table file, scalars;
  try {
    file = toml::parse_file(deck_path);
    scalars = spec_scalars(toml::parse_file(deck_path));  // a copy would lose the lines
  } catch (const toml::parse_error&) {
    // Deck::load of the same file has said what is wrong with it before this is called.
  }
  const toml::table* sweep = file["sweep"].as_table();
  std::vector<std::string> sweep_overrides;
  for (const auto& o : overrides)
    if (trim(o).rfind("sweep.", 0) == 0) sweep_overrides.push_back(o);
  const Deck options = Deck::parse(ParsedToml{scalars}, deck_path, sweep_overrides, sweep_schema());
  SweepSpec spec;
  spec.strategy = options.string("sweep", "strategy");
  spec.samples = options.integer("sweep", "samples");
  spec.budget = options.integer("sweep", "budget");
  spec.budget_seconds = options.real("sweep", "budget_seconds");
  spec.seed = options.integer("sweep", "seed");
  spec.restrict_expression = options.string("sweep", "restrict");
  spec.confirm = static_cast<int>(options.integer("sweep", "confirm"));
  spec.confirm_rounds = static_cast<int>(options.integer("sweep", "confirm_rounds"));
  spec.profile = options.string("sweep", "profile");

  if (sweep) {
    for (const auto& [key, node] : *sweep)
      if (node.is_table() && key != "vary" && key != "tiles")
        throw DeckError(deck_path + ": [sweep." + std::string(key.str()) +
                        "]: unknown table; allowed: [sweep.vary] (deck keys and their values), "
                        "[sweep.tiles] (a kernel.tile generator)");
    if (const auto* table = (*sweep)["vary"].as_table()) {
      std::vector<std::pair<std::string, const toml::node*>> entries;
      flatten(*table, "", entries);
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const auto& sa = a.second->source().begin;
        const auto& sb = b.second->source().begin;
        return std::make_pair(sa.line, sa.column) < std::make_pair(sb.line, sb.column);
      });
      for (const auto& [name, node] : entries)
        spec.dims.push_back(
            make_dimension(name, *node, deck_path + ": [sweep.vary] " + name, schema));
    }
    if (const auto* table = (*sweep)["tiles"].as_table())
      spec.dims.push_back(tiles_of(tile_request_from(*table, deck_path, limits)));
  }
  for (const auto& text : vary) {
    SweepDimension dim = vary_dimension(text, schema);
    // A flag replaces the deck's list for the same keys.
    const auto same = std::find_if(spec.dims.begin(), spec.dims.end(),
                                   [&](const SweepDimension& d) { return d.name() == dim.name(); });
    if (same != spec.dims.end())
      *same = std::move(dim);
    else
      spec.dims.push_back(std::move(dim));
  }
  if (!tiles.empty()) {
    const auto colon = tiles.find(':');
    TileRequest r = tile_request_defaults(limits);
    try {
      if (colon == std::string::npos) throw std::invalid_argument(tiles);
      r.min = std::stoll(tiles.substr(0, colon));
      r.max = std::stoll(tiles.substr(colon + 1));
    } catch (const std::exception&) {
      throw DeckError("--tiles '" + tiles +
                      "': expected MIN:MAX, work items per group (e.g. 32:1024)");
    }
    if (r.min < 1 || r.max < r.min || r.max > (1 << 20))
      throw DeckError("--tiles '" + tiles + "': allowed: 1 <= MIN <= MAX <= 1048576");
    SweepDimension dim = tiles_of(r);
    const auto same = std::find_if(spec.dims.begin(), spec.dims.end(),
                                   [&](const SweepDimension& d) { return d.name() == dim.name(); });
    if (same != spec.dims.end())
      *same = std::move(dim);
    else
      spec.dims.push_back(std::move(dim));
  }

  // One dimension per key, and every value one the solver accepts.
  std::set<std::string> seen;
  const std::vector<std::string> base = deck_overrides(overrides);
  for (const SweepDimension& dim : spec.dims) {
    for (const auto& key : dim.keys)
      if (!seen.insert(key).second)
        throw DeckError(deck_path + ": " + key +
                        " is varied twice ([sweep.vary], [sweep.tiles] or --vary); allowed: each "
                        "key in one list");
    if (dim.values.empty())
      throw DeckError(deck_path + ": " + dim.name() +
                      ": no values (a tile range with no power-of-two tile in it?)");
    for (std::size_t v = 0; v < dim.values.size(); ++v) {
      std::vector<std::string> with = base;
      for (const auto& o : dim.overrides(v)) with.push_back(o);
      try {
        Deck::load(deck_path, with, schema);
      } catch (const DeckError& e) {
        std::string value;
        for (const auto& literal : dim.values[v]) value += (value.empty() ? "" : ", ") + literal;
        if (dim.keys.size() > 1) value = "[" + value + "]";
        // The value's own origin (the deck's [sweep.vary] or --vary), not that of the override
        // it was checked as.
        std::string why = e.what();
        for (const auto& o : dim.overrides(v))
          if (const std::string label = "command-line override '" + o + "': ";
              why.rfind(label, 0) == 0)
            why = why.substr(label.size());
        throw DeckError(dim.origin + ": value " + value + ": " + why);
      }
    }
  }
  return spec;
}

SweepSpace enumerate_space(const SweepSpec& spec, const std::string& deck_path) {
  SweepSpace space;
  double total = 1;
  for (const auto& dim : spec.dims) total *= static_cast<double>(dim.values.size());
  constexpr double limit = 2e6;
  if (total > limit)
    throw DeckError(deck_path + ": the sweep's space has " + std::to_string(total) +
                    " points; allowed: at most 2000000 (shorter lists, or sweep.restrict)");
  const auto vars = restriction_variables(spec);
  std::vector<double> storage(vars.size());
  mu::Parser parser;
  if (!spec.restrict_expression.empty()) {
    std::string names;
    std::size_t i = 0;
    for (const auto& [name, v] : vars) {
      parser.DefineVar(name, &storage[i++]);
      names += (names.empty() ? "" : ", ") + name;
    }
    const std::string& e = spec.restrict_expression;
    for (std::size_t at = e.find('='); at != std::string::npos; at = e.find('=', at + 1)) {
      const bool compares = (at > 0 && std::string("=<>!").find(e[at - 1]) != std::string::npos) ||
                            (at + 1 < e.size() && e[at + 1] == '=');
      // muparser's assignment: a typo for ==, which would keep every point.
      if (!compares)
        throw DeckError(deck_path + ": [sweep] restrict = \"" + e +
                        "\": '=' assigns; allowed: a muparser condition, comparing with ==, !=, "
                        "<, <=, >, >=");
    }
    try {
      parser.SetExpr(spec.restrict_expression);
      std::fill(storage.begin(), storage.end(), 1.0);
      parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
      throw DeckError(deck_path + ": [sweep] restrict = \"" + spec.restrict_expression +
                      "\": " + e.GetMsg() + "; allowed: a muparser expression over " +
                      (names.empty() ? "no variables (nothing numeric is varied)" : names));
    }
  }
  SweepPoint point(spec.dims.size(), 0);
  const auto count = static_cast<std::int64_t>(total);
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t rest = n;
    for (std::size_t d = spec.dims.size(); d-- > 0;) {
      const auto size = static_cast<std::int64_t>(spec.dims[d].values.size());
      point[d] = static_cast<std::size_t>(rest % size);
      rest /= size;
    }
    if (!spec.restrict_expression.empty()) {
      std::size_t i = 0;
      for (const auto& [name, v] : vars) {
        const auto& value = spec.dims[v.dim].json[point[v.dim]][v.key];
        storage[i++] = number_of(v.element < 0 ? value : value[v.element]);
      }
      const double kept = parser.Eval();
      if (!std::isfinite(kept))
        throw DeckError(deck_path + ": [sweep] restrict = \"" + spec.restrict_expression +
                        "\" is " + std::to_string(kept) + " at " +
                        point_params(spec, point).dump() +
                        "; allowed: a condition that is a number at every point (no division by "
                        "0, no square root of a negative)");
      if (kept == 0) {
        ++space.pruned;
        continue;
      }
    }
    space.points.push_back(point);
  }
  return space;
}

std::vector<std::string> point_overrides(const SweepSpec& spec, const SweepPoint& point) {
  std::vector<std::string> out;
  for (std::size_t d = 0; d < spec.dims.size(); ++d)
    for (const auto& o : spec.dims[d].overrides(point[d])) out.push_back(o);
  return out;
}

nlohmann::ordered_json point_params(const SweepSpec& spec, const SweepPoint& point) {
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (std::size_t d = 0; d < spec.dims.size(); ++d)
    for (std::size_t k = 0; k < spec.dims[d].keys.size(); ++k)
      params[spec.dims[d].keys[k]] = spec.dims[d].json[point[d]][k];
  return params;
}

nlohmann::ordered_json deck_params(const SweepSpec& spec, const Deck& deck) {
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& dim : spec.dims)
    for (const auto& key : dim.keys) {
      const auto dot = key.find('.');
      const toml::table t =
          toml::parse("v = " + deck.value_literal(key.substr(0, dot), key.substr(dot + 1)));
      params[key] = to_json(*t.get("v"));
    }
  return params;
}

std::vector<SweepPoint> neighbours(const SweepSpec& spec, const SweepPoint& point) {
  std::vector<SweepPoint> out;
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    const SweepDimension& dim = spec.dims[d];
    const bool tiles = is_tile_dimension(dim);
    // Kokkos' default tile [0, 0, 0] has no tile one step away: from it, those of the fewest work
    // items listed (the search then doubles them while one is faster).
    std::int64_t fewest = 0;
    if (tiles && dim.keys[0] == "kernel.tile" && is_kokkos_default(dim.json[point[d]][0]))
      for (const auto& value : dim.json) {
        const std::int64_t n = work_items(value[0]);
        if (n > 0 && (fewest == 0 || n < fewest)) fewest = n;
      }
    for (std::size_t v = 0; v < dim.values.size(); ++v) {
      const bool adjacent = !tiles       ? v + 1 == point[d] || v == point[d] + 1
                            : fewest > 0 ? work_items(dim.json[v][0]) == fewest
                                         : tiles_adjacent(dim.json[v][0], dim.json[point[d]][0]);
      if (!adjacent) continue;
      SweepPoint next = point;
      next[d] = v;
      out.push_back(next);
    }
  }
  return out;
}

std::vector<std::size_t> sample_indices(std::size_t size, std::size_t count, std::int64_t seed) {
  count = std::min(count, size);
  std::vector<std::size_t> all(size);
  for (std::size_t i = 0; i < size; ++i) all[i] = i;
  std::mt19937_64 generator(static_cast<std::uint64_t>(seed));
  for (std::size_t i = 0; i < count; ++i)
    std::swap(all[i], all[i + static_cast<std::size_t>(generator() % (size - i))]);
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace kstencil
