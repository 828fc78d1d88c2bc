#pragma once
// What `kstencil sweep` varies: the deck's [sweep] table, `sweep.*` overrides and --vary flags,
// turned into a parameter space (dimensions of deck values), pruned by a restriction, and the
// strategies' ways through it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/deck.hpp"
#include "core/exec_space.hpp"

namespace kstencil {

// The [sweep] table's own keys (strategy, budget, ...), as `kstencil keys sweep` lists them.
const Schema& sweep_schema();

// One axis of the space: deck keys set together ("kernel.tile", or "grid.nx,grid.ny,grid.nz"),
// and the values they take, each one TOML literal per key.
struct SweepDimension {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  std::vector<nlohmann::ordered_json> json;  // the same values as JSON (one per value)
  std::string origin;  // for messages: "deck.toml: [sweep.vary] kernel.tile" or "--vary '...'"
  std::string name() const;
  // "kernel.tile=[32, 4, 1]" (one per key) for value v.
  std::vector<std::string> overrides(std::size_t v) const;
};

struct SweepSpec {
  std::vector<SweepDimension> dims;
  std::string restrict_expression;   // muparser expression; empty = everything
  std::string strategy = "product";  // product | random | local
  std::int64_t samples = 16;         // random: configurations drawn
  std::int64_t budget = 0;           // configurations launched at most (0: no limit)
  double budget_seconds = 0;         // no new launch after this long (0: no limit)
  std::int64_t seed = 1;
  int confirm = 3;         // best configurations re-timed against the default at the end
  int confirm_rounds = 3;  // rounds of that alternation
  std::string profile;     // command template run around the best and the default
};

// One point of the space: a value index per dimension.
using SweepPoint = std::vector<std::size_t>;

// The spec from `deck_path`'s [sweep] table, then the `sweep.*` entries of `overrides`, then the
// --vary texts ("key=v1,v2" or "k1,k2=[a1,a2],[b1,b2]") and a --tiles generator ("MIN:MAX"). Each
// value is checked against the solver's schema (a DeckError naming the file or flag, the key and
// what is allowed).
SweepSpec load_sweep_spec(const std::string& deck_path, const std::vector<std::string>& overrides,
                          const std::vector<std::string>& vary, const std::string& tiles,
                          const Schema& schema, const ExecLimits& limits);

// The overrides that are not `sweep.*`: the base deck's.
std::vector<std::string> deck_overrides(const std::vector<std::string>& overrides);

// The space after the restriction, in product order (the last dimension fastest), and how many
// points the restriction removed. A DeckError when the product is too large to enumerate or the
// expression does not parse.
struct SweepSpace {
  std::vector<SweepPoint> points;
  std::int64_t pruned = 0;
};
SweepSpace enumerate_space(const SweepSpec& spec, const std::string& deck_path);

// The deck overrides of a point, and its parameters as JSON ({"kernel.tile": [32, 4, 1], ...}).
std::vector<std::string> point_overrides(const SweepSpec& spec, const SweepPoint& point);
nlohmann::ordered_json point_params(const SweepSpec& spec, const SweepPoint& point);
// The varied keys' values in `deck` (the default's parameters), as point_params gives them.
nlohmann::ordered_json deck_params(const SweepSpec& spec, const Deck& deck);

// The points one step away: one dimension's value changed to its neighbour (the next or previous
// in its list; for tiles, one axis doubled or halved among the listed tiles).
std::vector<SweepPoint> neighbours(const SweepSpec& spec, const SweepPoint& point);

// `count` distinct indices below `size`, drawn with a fixed-seed generator (the same on every
// machine and rank), in increasing order.
std::vector<std::size_t> sample_indices(std::size_t size, std::size_t count, std::int64_t seed);

}  // namespace kstencil
