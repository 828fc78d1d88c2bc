// Input decks: schema checks, overrides, defaults, the resolved deck and every error message.
#include <algorithm>
#include <array>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/deck.hpp"
#include "fdtd/fdtd_deck.hpp"
#include "laplacian/laplacian_deck.hpp"

using namespace kstencil;
using Catch::Matchers::ContainsSubstring;

namespace {

KeySpec row(std::string section, std::string key, KeyType type, std::string default_toml) {
  KeySpec spec;
  spec.section = std::move(section);
  spec.key = std::move(key);
  spec.type = type;
  spec.default_toml = std::move(default_toml);
  spec.help = "help for " + spec.key;
  return spec;
}

// One key of every type, with ranges and choices, in two sections.
const Schema& test_schema() {
  static const Schema schema = [] {
    Schema s;
    s.push_back(row("a", "count", KeyType::integer, "5"));
    s.back().min = 3;
    s.back().max = 10;
    s.push_back(row("a", "scale", KeyType::real, "1.0"));
    s.back().min = 0;
    s.back().min_exclusive = true;
    s.push_back(row("a", "flag", KeyType::boolean, "false"));
    s.push_back(row("a", "side", KeyType::string, R"("left")"));
    s.back().choices = {"left", "right"};
    s.push_back(row("a", "label", KeyType::string, R"("")"));
    s.push_back(row("b", "block", KeyType::integer, "128"));
    s.back().int_choices = {0, 128, 256};
    s.push_back(row("b", "tile", KeyType::integer3, "[0, 0, 0]"));
    s.back().min = 0;
    s.back().max = 64;
    s.push_back(row("b", "origin", KeyType::real3, "[0.0, 0.5, -1]"));
    s.push_back(row("b", "parts", KeyType::integer_or_auto, R"("auto")"));
    s.back().min = 1;
    return s;
  }();
  return schema;
}

Deck parse(const std::string& text, const std::vector<std::string>& overrides = {},
           const Schema& schema = test_schema()) {
  return Deck::parse(text, "deck.toml", overrides, schema);
}

// A deck file in the temporary directory, removed at the end of the test.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

bool same_real(double a, double b) {
  return a == b && std::signbit(a) == std::signbit(b);
}

// Every key of `schema` has the same value in both decks.
void check_same_values(const Deck& a, const Deck& b, const Schema& schema) {
  for (const auto& spec : schema) {
    if (!spec.retired.empty()) continue;  // a removed key: no value in either deck
    INFO("[" << spec.section << "] " << spec.key);
    const auto& s = spec.section;
    const auto& k = spec.key;
    switch (spec.type) {
      case KeyType::integer:
        CHECK(a.integer(s, k) == b.integer(s, k));
        break;
      case KeyType::real:
        CHECK(same_real(a.real(s, k), b.real(s, k)));
        break;
      case KeyType::boolean:
        CHECK(a.boolean(s, k) == b.boolean(s, k));
        break;
      case KeyType::string:
        CHECK(a.string(s, k) == b.string(s, k));
        break;
      case KeyType::integer3:
        CHECK(a.integer3(s, k) == b.integer3(s, k));
        break;
      case KeyType::real3:
        for (int d = 0; d < 3; ++d) CHECK(same_real(a.real3(s, k)[d], b.real3(s, k)[d]));
        break;
      case KeyType::integer_or_auto:
        CHECK(a.is_auto(s, k) == b.is_auto(s, k));
        CHECK(a.integer(s, k) == b.integer(s, k));
        break;
      case KeyType::boolean_or_auto:
        REQUIRE(a.is_auto(s, k) == b.is_auto(s, k));
        if (!a.is_auto(s, k)) CHECK(a.boolean(s, k) == b.boolean(s, k));
        break;
      case KeyType::real3_list: {
        const auto pa = a.real3_list(s, k), pb = b.real3_list(s, k);
        REQUIRE(pa.size() == pb.size());
        for (std::size_t p = 0; p < pa.size(); ++p)
          for (int d = 0; d < 3; ++d) CHECK(same_real(pa[p][d], pb[p][d]));
        break;
      }
    }
  }
}

}  // namespace

TEST_CASE("deck: an empty deck gets every default of the schema", "[deck]") {
  const Deck deck = parse("");
  CHECK(deck.source() == "deck.toml");
  CHECK(deck.integer("a", "count") == 5);
  CHECK(deck.real("a", "scale") == 1.0);
  CHECK_FALSE(deck.boolean("a", "flag"));
  CHECK(deck.string("a", "side") == "left");
  CHECK(deck.string("a", "label").empty());
  CHECK(deck.integer("b", "block") == 128);
  CHECK(deck.integer3("b", "tile") == std::array<std::int64_t, 3>{0, 0, 0});
  CHECK(deck.real3("b", "origin") == std::array<double, 3>{0.0, 0.5, -1.0});
  CHECK(deck.is_auto("b", "parts"));
  CHECK(deck.integer("b", "parts") == 0);
}

TEST_CASE("deck: keys given in the file replace the defaults, the others keep them", "[deck]") {
  const Deck deck = parse(R"(
[a]
count = 7
scale = 2        # an integer literal is a real
side = "right"
[b]
tile = [1, 2, 64]
origin = [1, -2.5, 3e2]
parts = 4
)");
  CHECK(deck.integer("a", "count") == 7);
  CHECK(deck.real("a", "scale") == 2.0);
  CHECK(deck.string("a", "side") == "right");
  CHECK(deck.integer3("b", "tile") == std::array<std::int64_t, 3>{1, 2, 64});
  CHECK(deck.real3("b", "origin") == std::array<double, 3>{1.0, -2.5, 300.0});
  CHECK_FALSE(deck.is_auto("b", "parts"));
  CHECK(deck.integer("b", "parts") == 4);
  CHECK_FALSE(deck.boolean("a", "flag"));
  CHECK(deck.integer("b", "block") == 128);
}

TEST_CASE("deck: is_default compares a key's resolved value with its schema default", "[deck]") {
  const Deck defaults = parse("");
  for (const KeySpec& spec : test_schema()) CHECK(defaults.is_default(spec.section, spec.key));
  // Given equal to the default, in another spelling where TOML has one: still the default.
  const Deck same = parse("[a]\ncount = 5\nscale = 1\n[b]\ntile = [0, 0, 0]\nparts = \"auto\"\n");
  for (const KeySpec& spec : test_schema()) CHECK(same.is_default(spec.section, spec.key));
  const Deck changed =
      parse("[a]\nscale = 2.0\n", {"b.tile=[0, 1, 0]", "b.parts=1", "a.flag=true"});
  CHECK_FALSE(changed.is_default("a", "scale"));
  CHECK_FALSE(changed.is_default("b", "tile"));
  CHECK_FALSE(changed.is_default("b", "parts"));
  CHECK_FALSE(changed.is_default("a", "flag"));
  CHECK(changed.is_default("a", "count"));
  CHECK(changed.is_default("b", "origin"));
}

TEST_CASE("deck: Laplacian schema defaults match the documented ones", "[deck]") {
  const Deck deck = Deck::parse("", "small.toml", {}, laplacian_schema());
  CHECK(deck.string("run", "name").empty());
  CHECK(deck.string("run", "solver") == "laplacian");
  CHECK(deck.string("run", "precision") == "double");
  CHECK(deck.integer("run", "warmup") == 2);
  CHECK(deck.integer("run", "repeats") == 10);
  for (const char* n : {"nx", "ny", "nz"}) CHECK(deck.integer("grid", n) == 128);
  for (const char* h : {"hx", "hy", "hz"}) CHECK(deck.real("grid", h) == 1.0);
  CHECK(deck.real3("grid", "origin") == std::array<double, 3>{0.0, 0.0, 0.0});
  CHECK(deck.string("kernel", "variant") == "auto");
  CHECK(deck.string("kernel", "layout") == "right");
  CHECK(deck.string("kernel", "iterate") == "auto");
  CHECK(deck.integer3("kernel", "tile") == std::array<std::int64_t, 3>{0, 0, 0});
  // The kernel's own parameters default to "auto": the chosen kernel's default.
  for (const char* key : {"launch_bounds", "m", "m_slow", "blocks_per_item", "parts"}) {
    INFO(key);
    CHECK(deck.is_auto("kernel", key));
    CHECK(deck.is_default("kernel", key));
  }
  CHECK(deck.boolean("kernel", "streaming_stores"));
  CHECK(deck.boolean("kernel", "zero_row_ends"));
  // A removed key has no value.
  CHECK_THROWS_AS(deck.boolean("kernel", "parts_in_one_launch"), std::logic_error);
  CHECK(deck.string("laplacian", "field") == "sine");
  CHECK(deck.string("output", "root") == "outputs");
  CHECK(deck.boolean("output", "enabled"));
  CHECK_FALSE(deck.boolean("output", "overwrite"));
}

TEST_CASE("deck: every key of every solver has a help line and a unique name", "[deck]") {
  const Schema& schema = GENERATE(std::cref(laplacian_schema()), std::cref(fdtd_schema()));
  CHECK(schema.size() == (&schema == &laplacian_schema() ? 35 : 51));
  // Every schema accepts its own defaults.
  CHECK_NOTHROW(Deck::parse("", "empty.toml", {}, schema));
  for (std::size_t i = 0; i < schema.size(); ++i) {
    INFO("[" << schema[i].section << "] " << schema[i].key);
    CHECK_FALSE(schema[i].help.empty());
    for (std::size_t j = 0; j < i; ++j)
      CHECK_FALSE((schema[j].section == schema[i].section && schema[j].key == schema[i].key));
  }
}

TEST_CASE("deck: overrides of every type replace file values", "[deck]") {
  const Deck deck =
      parse("[a]\ncount = 4\nside = \"right\"\n",
            {"a.count=9", "a.scale=0.25", "a.flag=true", "a.side=left", "a.label=\"two words\"",
             "b.block=256", "b.tile=[4, 8, 16]", "b.origin=[1, 2.5, -3]", "b.parts=12"});
  CHECK(deck.integer("a", "count") == 9);
  CHECK(deck.real("a", "scale") == 0.25);
  CHECK(deck.boolean("a", "flag"));
  CHECK(deck.string("a", "side") == "left");
  CHECK(deck.string("a", "label") == "two words");
  CHECK(deck.integer("b", "block") == 256);
  CHECK(deck.integer3("b", "tile") == std::array<std::int64_t, 3>{4, 8, 16});
  CHECK(deck.real3("b", "origin") == std::array<double, 3>{1.0, 2.5, -3.0});
  CHECK_FALSE(deck.is_auto("b", "parts"));
  CHECK(deck.integer("b", "parts") == 12);
}

TEST_CASE("deck: override details (auto, bare words, spaces, order, numeric strings)", "[deck]") {
  SECTION("integer_or_auto takes auto as a bare word or a TOML string") {
    CHECK(parse("[b]\nparts = 3\n", {"b.parts=auto"}).is_auto("b", "parts"));
    CHECK(parse("[b]\nparts = 3\n", {"b.parts=\"auto\""}).is_auto("b", "parts"));
  }
  SECTION("the last override of a key wins") {
    CHECK(parse("", {"a.count=4", "a.count=6"}).integer("a", "count") == 6);
  }
  SECTION("spaces around the name and the value are ignored") {
    CHECK(parse("", {" a.count = 8 "}).integer("a", "count") == 8);
  }
  SECTION("a string key takes digits, a bare word with '=' or nothing as text") {
    CHECK(parse("", {"a.label=2024"}).string("a", "label") == "2024");
    CHECK(parse("", {"a.label=x=y"}).string("a", "label") == "x=y");
    CHECK(parse("[a]\nlabel = \"x\"\n", {"a.label="}).string("a", "label").empty());
  }
  SECTION("an override replaces a file value, which is then not checked") {
    CHECK(parse("[a]\ncount = \"big\"\n", {"a.count=4"}).integer("a", "count") == 4);
    CHECK_THROWS_AS(parse("[a]\ncount = \"big\"\n", {"a.scale=4"}), DeckError);
  }
  SECTION("a real key takes an integer") {
    CHECK(parse("", {"a.scale=3"}).real("a", "scale") == 3.0);
  }
}

TEST_CASE("deck: resolved_toml lists every key in schema order and parses back the same",
          "[deck]") {
  const Deck deck =
      parse("[b]\norigin = [0.1, -1e-300, 123456789.123456789]\n",
            {"a.scale=0.3333333333333333", "a.label=\"quote \\\" backslash \\\\ tab \\t é\"",
             "b.parts=7", "a.flag=true"});
  const std::string text = deck.resolved_toml();
  INFO(text);
  CHECK_THAT(text, ContainsSubstring("[a]\ncount = 5\nscale = 0.3333333333333333\nflag = true\n"
                                     "side = \"left\"\n"));
  CHECK_THAT(text, ContainsSubstring("\n[b]\nblock = 128\ntile = [0, 0, 0]\n"));
  CHECK_THAT(text, ContainsSubstring("parts = 7\n"));
  CHECK(text.find("[a]") < text.find("[b]"));
  const Deck again = Deck::parse(text, "resolved.toml", {}, test_schema());
  check_same_values(deck, again, test_schema());
  CHECK(again.resolved_toml() == text);
}

TEST_CASE("deck: resolved_toml keeps reals as reals and round-trips them exactly", "[deck]") {
  const std::vector<double> values = {1.0,
                                      0.1,
                                      1.0 / 3.0,
                                      1e-300,
                                      1e22,
                                      -0.0,
                                      2.5e-7,
                                      1e100,
                                      123456789012345678.0,
                                      5e-324,
                                      1.7976931348623157e308};
  for (const double v : values) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    const Deck deck = parse("", {std::string("a.scale=") + (v > 0 ? text : "1.0"),
                                 std::string("b.origin=[") + text + ", 1, -2]"});
    INFO(deck.resolved_toml());
    const Deck again = Deck::parse(deck.resolved_toml(), "resolved.toml", {}, test_schema());
    check_same_values(deck, again, test_schema());
  }
  const std::string text = parse("").resolved_toml();
  CHECK_THAT(text, ContainsSubstring("scale = 1.0\n"));
  CHECK_THAT(text, ContainsSubstring("origin = [0.0, 0.5, -1.0]\n"));
}

TEST_CASE("deck: the Laplacian resolved deck round-trips", "[deck]") {
  const Deck deck = Deck::load(KSTENCIL_TEST_DECKS "/small.toml",
                               {"kernel.layout=left", "run.precision=float", "kernel.parts=3",
                                "kernel.tile=[2, 3, 4]", "output.overwrite=true"},
                               laplacian_schema());
  CHECK(deck.string("kernel", "layout") == "left");
  CHECK(deck.integer3("kernel", "tile") == std::array<std::int64_t, 3>{2, 3, 4});
  const std::string text = deck.resolved_toml();
  INFO(text);
  for (const char* section : {"[run]", "[grid]", "[kernel]", "[laplacian]", "[output]"})
    CHECK_THAT(text, ContainsSubstring(section));
  CHECK(text.find("[run]") < text.find("[grid]"));
  CHECK(text.find("[kernel]") < text.find("[laplacian]"));
  CHECK(text.find("[laplacian]") < text.find("[output]"));
  const Deck again = Deck::parse(text, "resolved.toml", {}, laplacian_schema());
  check_same_values(deck, again, laplacian_schema());
}

TEST_CASE("deck: Deck::load reads a file and names it in messages", "[deck]") {
  const TempFile file("kstencil_test_deck_load.toml", "[a]\ncount = 6\n\n[b]\nblock = 100\n");
  CHECK_THROWS_WITH(Deck::load(file.path.string(), {}, test_schema()),
                    ContainsSubstring(file.path.string() + ":5: [b] block = 100") &&
                        ContainsSubstring("allowed: 0, 128, 256"));
  const Deck deck = Deck::load(file.path.string(), {"b.block=0"}, test_schema());
  CHECK(deck.source() == file.path.string());
  CHECK(deck.integer("a", "count") == 6);
  CHECK(deck.integer("b", "block") == 0);
}

TEST_CASE("deck error: missing deck file", "[deck]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "kstencil_no_such_deck.toml").string();
  CHECK_THROWS_AS(Deck::load(path, {}, test_schema()), DeckError);
  CHECK_THROWS_WITH(
      Deck::load(path, {}, test_schema()),
      ContainsSubstring(path + ": cannot read deck: ") && ContainsSubstring("No such file"));
  CHECK_THROWS_WITH(Deck::load(std::filesystem::temp_directory_path().string(), {}, test_schema()),
                    ContainsSubstring("cannot read deck: Is a directory"));
}

TEST_CASE("deck error: TOML syntax error names file, line and column", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\ncount = 4\n[b\n"), DeckError);
  CHECK_THROWS_WITH(parse("[a]\ncount = 4\n[b\n"),
                    ContainsSubstring("deck.toml:3:") && ContainsSubstring("TOML syntax error"));
  CHECK_THROWS_WITH(parse("[a]\ncount = = 4\n"),
                    ContainsSubstring("deck.toml:2:") && ContainsSubstring("TOML syntax error"));
  const TempFile file("kstencil_test_deck_syntax.toml", "[a]\n\nflag = tru\n");
  CHECK_THROWS_WITH(
      Deck::load(file.path.string(), {}, test_schema()),
      ContainsSubstring(file.path.string() + ":3:") && ContainsSubstring("TOML syntax error"));
}

TEST_CASE("deck error: unknown section lists the allowed sections", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\ncount = 4\n[solver]\nx = 1\n"), DeckError);
  CHECK_THROWS_WITH(parse("[a]\ncount = 4\n[solver]\nx = 1\n"),
                    ContainsSubstring("deck.toml:3: unknown section [solver]") &&
                        ContainsSubstring("allowed sections: [a], [b]"));
  CHECK_THROWS_WITH(
      Deck::parse("[run]\n[solver]\n", "lap.toml", {}, laplacian_schema()),
      ContainsSubstring("lap.toml:2: unknown section [solver]") &&
          ContainsSubstring(
              "allowed sections: [run], [grid], [kernel], [laplacian], [mpi], [output]"));
}

TEST_CASE("deck error: top-level keys and arrays of tables are not sections", "[deck]") {
  CHECK_THROWS_WITH(parse("count = 4\n"), ContainsSubstring("deck.toml:1: count = 4") &&
                                              ContainsSubstring("allowed sections: [a], [b]"));
  CHECK_THROWS_WITH(parse("[[a]]\ncount = 4\n"),
                    ContainsSubstring("deck.toml:1: [[a]]: arrays of tables are not allowed") &&
                        ContainsSubstring("allowed sections: [a], [b]"));
}

TEST_CASE("deck error: unknown key lists the keys of its section", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\ncount = 4\npoints = 4\n"), DeckError);
  CHECK_THROWS_WITH(parse("[a]\ncount = 4\npoints = 4\n"),
                    ContainsSubstring("deck.toml:3: [a] points: unknown key") &&
                        ContainsSubstring("allowed keys of [a]: count, scale, flag, side, label"));
  CHECK_THROWS_WITH(
      Deck::parse("[kernel]\npoints = 4\n", "lap.toml", {}, laplacian_schema()),
      ContainsSubstring("lap.toml:2: [kernel] points") &&
          ContainsSubstring(
              "variant, layout, iterate, tile, launch_bounds, m, m_slow, m_contiguous, "
              "blocks_per_item, parts, streaming_stores, zero_row_ends"));
}

TEST_CASE("deck error: tables nested deeper than one level", "[deck]") {
  CHECK_THROWS_WITH(parse("[a.sub]\nx = 1\n"),
                    ContainsSubstring("deck.toml:1: [a.sub]: nested tables are not allowed") &&
                        ContainsSubstring("allowed keys of [a]: count"));
  CHECK_THROWS_WITH(parse("[b]\ntile.x = 1\n"),
                    ContainsSubstring("deck.toml:2: [b.tile]: nested tables are not allowed"));
}

TEST_CASE("deck error: wrong type names the expected type and what was given", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\ncount = \"big\"\n"), DeckError);
  CHECK_THROWS_WITH(
      parse("[a]\ncount = \"big\"\n"),
      ContainsSubstring("deck.toml:2: [a] count: expected an integer, got string \"big\""));
  CHECK_THROWS_WITH(parse("[a]\ncount = 4.0\n"),
                    ContainsSubstring("[a] count: expected an integer, got float 4.0"));
  CHECK_THROWS_WITH(parse("[a]\nscale = \"1\"\n"),
                    ContainsSubstring("[a] scale: expected a real number, got string \"1\""));
  CHECK_THROWS_WITH(
      parse("[a]\nflag = 1\n"),
      ContainsSubstring("[a] flag: expected a boolean (true or false), got integer 1"));
  CHECK_THROWS_WITH(parse("[a]\nside = 1\n"),
                    ContainsSubstring("[a] side: expected a string, got integer 1"));
  CHECK_THROWS_WITH(
      parse("[b]\nparts = \"many\"\n"),
      ContainsSubstring("[b] parts: expected a non-negative integer or \"auto\", got string"));
  CHECK_THROWS_WITH(parse("[b]\ntile = 4\n"),
                    ContainsSubstring("[b] tile: expected an array of 3 integers, got integer 4"));
  CHECK_THROWS_WITH(parse("[b]\ntile = [1, 2.5, 3]\n"),
                    ContainsSubstring("deck.toml:2: [b] tile: expected an array of 3 integers") &&
                        ContainsSubstring("element 1 is float 2.5"));
  CHECK_THROWS_WITH(parse("[b]\norigin = [1, \"2\", 3]\n"),
                    ContainsSubstring("[b] origin: expected an array of 3 reals") &&
                        ContainsSubstring("element 1 is string \"2\""));
  CHECK_THROWS_WITH(Deck::parse("[grid]\nnx = \"big\"\n", "lap.toml", {}, laplacian_schema()),
                    ContainsSubstring("lap.toml:2: [grid] nx: expected an integer"));
}

TEST_CASE("deck error: array of the wrong length", "[deck]") {
  CHECK_THROWS_AS(parse("[b]\ntile = [1, 2]\n"), DeckError);
  CHECK_THROWS_WITH(parse("[b]\ntile = [1, 2]\n"),
                    ContainsSubstring("deck.toml:2: [b] tile: expected an array of 3 integers, got "
                                      "array of 2 elements [1, 2]"));
  CHECK_THROWS_WITH(parse("[b]\norigin = [1.0, 2.0, 3.0, 4.0]\n"),
                    ContainsSubstring("[b] origin: expected an array of 3 reals, got array of 4"));
  CHECK_THROWS_WITH(
      Deck::parse("", "lap.toml", {"kernel.tile=[1, 2]"}, laplacian_schema()),
      ContainsSubstring("command-line override 'kernel.tile=[1, 2]': [kernel] tile: expected an "
                        "array of 3 integers"));
}

TEST_CASE("deck error: out of range names the value and the allowed range", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\ncount = 2\n"), DeckError);
  CHECK_THROWS_WITH(parse("[a]\ncount = 2\n"),
                    ContainsSubstring("deck.toml:2: [a] count = 2: out of range; allowed: "
                                      "integer >= 3 and <= 10"));
  CHECK_THROWS_WITH(parse("[a]\ncount = 11\n"),
                    ContainsSubstring("[a] count = 11: out of range; allowed: integer >= 3"));
  CHECK(parse("[a]\ncount = 3\n").integer("a", "count") == 3);
  CHECK(parse("[a]\ncount = 10\n").integer("a", "count") == 10);
  CHECK_THROWS_WITH(parse("[a]\nscale = 0\n"),
                    ContainsSubstring("[a] scale = 0: out of range; allowed: real > 0"));
  CHECK_THROWS_WITH(parse("[a]\nscale = -0.5\n"),
                    ContainsSubstring("[a] scale = -0.5: out of range; allowed: real > 0"));
  CHECK_THROWS_WITH(parse("[a]\nscale = nan\n"),
                    ContainsSubstring("[a] scale = nan: not finite; allowed: real > 0"));
  CHECK_THROWS_WITH(parse("[b]\ntile = [1, 65, 2]\n"),
                    ContainsSubstring("deck.toml:2: [b] tile = [1, 65, 2]: element 1 = 65 out of "
                                      "range; allowed: 3 integers, each >= 0 and <= 64"));
  CHECK_THROWS_WITH(parse("[b]\nparts = 0\n"),
                    ContainsSubstring("[b] parts = 0: out of range; allowed: \"auto\" or integer "
                                      ">= 1"));
  CHECK_THROWS_WITH(
      Deck::parse("[grid]\nnx = 2\n", "lap.toml", {}, laplacian_schema()),
      ContainsSubstring("lap.toml:2: [grid] nx = 2") && ContainsSubstring("allowed: integer >= 3"));
  CHECK_THROWS_WITH(Deck::parse("[grid]\nhx = -0.1\n", "lap.toml", {}, laplacian_schema()),
                    ContainsSubstring("lap.toml:2: [grid] hx = -0.1") &&
                        ContainsSubstring("allowed: real >= 1e-15 and <= 1000000000000000"));
  CHECK_THROWS_WITH(
      Deck::parse("[run]\nrepeats = 0\n", "lap.toml", {}, laplacian_schema()),
      ContainsSubstring("[run] repeats = 0: out of range; allowed: integer >= 1 and <= 100000"));
}

TEST_CASE("deck error: a value that is not one of the choices", "[deck]") {
  CHECK_THROWS_AS(parse("[a]\nside = \"diagonal\"\n"), DeckError);
  CHECK_THROWS_WITH(parse("[a]\nside = \"diagonal\"\n"),
                    ContainsSubstring("deck.toml:2: [a] side = \"diagonal\": not one of the "
                                      "allowed values; allowed: \"left\", \"right\""));
  CHECK_THROWS_WITH(parse("[b]\nblock = 100\n"),
                    ContainsSubstring("deck.toml:2: [b] block = 100: not one of the allowed "
                                      "values; allowed: 0, 128, 256"));
  CHECK_THROWS_WITH(
      Deck::parse("[kernel]\nlayout = \"diagonal\"\n", "lap.toml", {}, laplacian_schema()),
      ContainsSubstring("lap.toml:2: [kernel] layout = \"diagonal\"") &&
          ContainsSubstring("allowed: \"left\", \"right\""));
  CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {"kernel.launch_bounds=100"}, laplacian_schema()),
                    ContainsSubstring("command-line override 'kernel.launch_bounds=100': [kernel] "
                                      "launch_bounds = 100") &&
                        ContainsSubstring("allowed: \"auto\" or 0, 128, 256, 512, 1024"));
  CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {"kernel.m=3"}, laplacian_schema()),
                    ContainsSubstring("[kernel] m = 3") &&
                        ContainsSubstring("allowed: \"auto\" or 1, 2, 4, 8, 16"));
  CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {"kernel.m_slow=8"}, laplacian_schema()),
                    ContainsSubstring("[kernel] m_slow = 8") &&
                        ContainsSubstring("allowed: \"auto\" or 1, 2, 4"));
  CHECK_THROWS_WITH(
      Deck::parse("", "lap.toml", {"kernel.blocks_per_item=0"}, laplacian_schema()),
      ContainsSubstring("[kernel] blocks_per_item = 0") && ContainsSubstring("integer >= 1"));
}

TEST_CASE("deck error: retired variant words name their replacement", "[deck]") {
  struct Retired {
    const char* word;
    const char* instead;
  };
  const Retired words[] = {{"register-blocked", "renamed: use \"blocked\" (with parts = 1)"},
                           {"subdomain", "renamed: use \"blocked\" (parts > 1 or \"auto\")"},
                           {"march", "retired: use \"blocked\", the GPU default (march's"},
                           {"scratch", "retired: use \"blocked\", the GPU default (scratch's"}};
  for (const Retired& r : words) {
    const std::string word = r.word;
    INFO(word);
    // In the file and as an override, with the value and the key named; not a list of choices.
    const std::string file = "[kernel]\nvariant = \"" + word + "\"\n";
    CHECK_THROWS_AS(Deck::parse(file, "lap.toml", {}, laplacian_schema()), DeckError);
    CHECK_THROWS_WITH(
        Deck::parse(file, "lap.toml", {}, laplacian_schema()),
        ContainsSubstring("lap.toml:2: [kernel] variant = \"" + word + "\": " + r.instead));
    CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {"kernel.variant=" + word}, laplacian_schema()),
                      ContainsSubstring("command-line override 'kernel.variant=" + word +
                                        "': [kernel] variant = \"" + word + "\": " + r.instead));
  }
  // The kernels that replace them parse.
  for (const char* word : {"auto", "mdrange", "blocked", "line"})
    CHECK(Deck::parse("", "lap.toml", {std::string("kernel.variant=") + word}, laplacian_schema())
              .string("kernel", "variant") == word);
}

TEST_CASE("deck error: parts_in_one_launch was removed", "[deck]") {
  for (const char* value : {"true", "false"}) {
    INFO(value);
    const std::string file = std::string("[kernel]\nparts_in_one_launch = ") + value + "\n";
    CHECK_THROWS_AS(Deck::parse(file, "lap.toml", {}, laplacian_schema()), DeckError);
    CHECK_THROWS_WITH(Deck::parse(file, "lap.toml", {}, laplacian_schema()),
                      ContainsSubstring("lap.toml:2: [kernel] parts_in_one_launch: removed; "
                                        "blocked always runs its parts in one launch"));
    const std::string override = std::string("kernel.parts_in_one_launch=") + value;
    CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {override}, laplacian_schema()),
                      ContainsSubstring("command-line override '" + override +
                                        "': [kernel] parts_in_one_launch: removed; blocked "
                                        "always runs its parts in one launch"));
  }
  // Nor is it listed, written to the resolved deck or documented.
  const Deck deck = Deck::parse("", "lap.toml", {}, laplacian_schema());
  CHECK(deck.resolved_toml().find("parts_in_one_launch") == std::string::npos);
  CHECK(schema_markdown(laplacian_schema()).find("parts_in_one_launch") == std::string::npos);
}

TEST_CASE("deck error: malformed override", "[deck]") {
  for (const std::string bad : {"count=5", "a.count", "a.=5", ".count=5", "=5"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse("", {bad}), DeckError);
    CHECK_THROWS_WITH(parse("", {bad}), ContainsSubstring("command-line override '" + bad + "'") &&
                                            ContainsSubstring("expected section.key=value"));
  }
}

TEST_CASE("deck error: override of an unknown section or key", "[deck]") {
  CHECK_THROWS_AS(parse("", {"a.cnt=5"}), DeckError);
  CHECK_THROWS_WITH(parse("", {"a.cnt=5"}),
                    ContainsSubstring("command-line override 'a.cnt=5': unknown key [a] cnt") &&
                        ContainsSubstring("allowed keys of [a]: count, scale, flag, side, label"));
  CHECK_THROWS_WITH(parse("", {"c.count=5"}),
                    ContainsSubstring("command-line override 'c.count=5': unknown section [c]") &&
                        ContainsSubstring("allowed sections: [a], [b]"));
  CHECK_THROWS_WITH(Deck::parse("", "lap.toml", {"grid.nw=5"}, laplacian_schema()),
                    ContainsSubstring("command-line override 'grid.nw=5'") &&
                        ContainsSubstring("allowed keys of [grid]: nx, ny, nz"));
}

TEST_CASE("deck error: override values get the type and range checks", "[deck]") {
  CHECK_THROWS_WITH(parse("", {"a.count=12a"}),
                    ContainsSubstring("command-line override 'a.count=12a': [a] count: expected "
                                      "an integer, got string \"12a\""));
  CHECK_THROWS_WITH(parse("", {"a.count=1"}),
                    ContainsSubstring("command-line override 'a.count=1': [a] count = 1: out of "
                                      "range; allowed: integer >= 3 and <= 10"));
  CHECK_THROWS_WITH(parse("", {"a.side=up"}),
                    ContainsSubstring("command-line override 'a.side=up': [a] side = \"up\"") &&
                        ContainsSubstring("allowed: \"left\", \"right\""));
  CHECK_THROWS_WITH(parse("", {"a.flag=yes"}),
                    ContainsSubstring("command-line override 'a.flag=yes': [a] flag: expected a "
                                      "boolean (true or false), got string \"yes\""));
  CHECK_THROWS_WITH(parse("", {"b.tile=[1, -1, 2]"}),
                    ContainsSubstring("[b] tile = [1, -1, 2]: element 1 = -1 out of range") &&
                        ContainsSubstring("allowed: 3 integers, each >= 0 and <= 64"));
  CHECK_THROWS_WITH(parse("", {"b.parts=-2"}),
                    ContainsSubstring("[b] parts = -2: out of range; allowed: \"auto\" or "
                                      "integer >= 1"));
  // Text that opens as a TOML array or string but does not parse is a syntax error, not a string.
  CHECK_THROWS_WITH(parse("", {"b.tile=[1, 2"}),
                    ContainsSubstring("command-line override 'b.tile=[1, 2': not a TOML value"));
  CHECK_THROWS_WITH(parse("", {"a.label=\"abc"}),
                    ContainsSubstring("command-line override 'a.label=\"abc': not a TOML value"));
}

TEST_CASE("deck: error() reports a solver's semantic check with the resolved value", "[deck]") {
  const Deck deck = parse("[b]\ntile = [1, 2, 3]\n", {"a.side=right"});
  const DeckError e = deck.error("b", "tile", "too many threads", "at most 1024 threads");
  CHECK(std::string(e.what()) ==
        "deck.toml: [b] tile = [1, 2, 3]: too many threads; allowed: at most 1024 threads");
  CHECK(std::string(deck.error("a", "side", "x", "y").what()) ==
        "deck.toml: [a] side = \"right\": x; allowed: y");
  CHECK(deck.value_literal("a", "scale") == "1.0");
  CHECK(deck.value_literal("b", "parts") == "\"auto\"");
}

TEST_CASE("deck: accessors reject keys outside the schema and the wrong type", "[deck]") {
  const Deck deck = parse("");
  CHECK_THROWS_AS(deck.integer("a", "nope"), std::logic_error);
  CHECK_THROWS_AS(deck.integer("zz", "count"), std::logic_error);
  CHECK_THROWS_AS(deck.real("a", "count"), std::logic_error);
  CHECK_THROWS_AS(deck.integer("a", "scale"), std::logic_error);
  CHECK_THROWS_AS(deck.boolean("a", "side"), std::logic_error);
  CHECK_THROWS_AS(deck.string("a", "flag"), std::logic_error);
  CHECK_THROWS_AS(deck.integer3("b", "origin"), std::logic_error);
  CHECK_THROWS_AS(deck.real3("b", "tile"), std::logic_error);
  CHECK_THROWS_AS(deck.is_auto("a", "count"), std::logic_error);
  CHECK_THROWS_AS(deck.error("a", "nope", "x", "y"), std::logic_error);
  CHECK_NOTHROW(deck.integer("b", "parts"));
}

TEST_CASE("deck: a bad schema is a programming error", "[deck]") {
  Schema bad_default = {row("a", "n", KeyType::integer, "\"five\"")};
  CHECK_THROWS_AS(parse("", {}, bad_default), std::logic_error);
  Schema out_of_range_default = {row("a", "n", KeyType::integer, "0")};
  out_of_range_default[0].min = 1;
  CHECK_THROWS_AS(parse("", {}, out_of_range_default), std::logic_error);
  Schema twice = {row("a", "n", KeyType::integer, "1"), row("a", "n", KeyType::integer, "2")};
  CHECK_THROWS_AS(parse("", {}, twice), std::logic_error);
}

TEST_CASE("deck: schema_markdown is a table row per key", "[deck]") {
  const std::string md = schema_markdown(laplacian_schema());
  CHECK(md.rfind("| Section | Key | Type | Default | Allowed | Meaning |\n|---", 0) == 0);
  // Removed keys (parts_in_one_launch) stay in the schema for their error, out of the table.
  const auto documented = std::count_if(laplacian_schema().begin(), laplacian_schema().end(),
                                        [](const KeySpec& spec) { return spec.retired.empty(); });
  CHECK(documented == static_cast<std::ptrdiff_t>(laplacian_schema().size()) - 1);
  CHECK(std::count(md.begin(), md.end(), '\n') == documented + 2);
  CHECK_THAT(md, ContainsSubstring("| `[grid]` | `nx` | integer | `128` | integer >= 3 and <= "
                                   "2147483647 |"));
  CHECK_THAT(md, ContainsSubstring("| `[kernel]` | `layout` | string | `\"right\"` | \"left\", "
                                   "\"right\" |"));
  CHECK_THAT(md, ContainsSubstring("| `[kernel]` | `parts` | integer or \"auto\" | `\"auto\"` | "
                                   "\"auto\" or integer >= 1 and <= 2147483647 |"));
  CHECK_THAT(md, ContainsSubstring("| `[kernel]` | `launch_bounds` | integer or \"auto\" | "
                                   "`\"auto\"` | \"auto\" or 0, 128, 256, 512, 1024 |"));
  CHECK_THAT(md, ContainsSubstring("| `[kernel]` | `m` | integer or \"auto\" | `\"auto\"` | "
                                   "\"auto\" or 1, 2, 4, 8, 16 |"));
  CHECK_THAT(md, ContainsSubstring("| `[kernel]` | `tile` | 3 integers | `[0, 0, 0]` | 3 integers, "
                                   "each >= 0 and <= 2147483647 |"));
}

TEST_CASE("deck: lists of points and exclusive upper bounds", "[deck]") {
  Schema schema;
  schema.push_back(row("probe", "points", KeyType::real3_list, "[]"));
  schema.back().min = -1;
  schema.push_back(row("probe", "courant", KeyType::real, "0.5"));
  schema.back().min = 0;
  schema.back().min_exclusive = true;
  schema.back().max = 1;
  schema.back().max_exclusive = true;
  CHECK(parse("", {}, schema).real3_list("probe", "points").empty());
  const Deck deck = parse("[probe]\npoints = [[0, 0.5, 1], [2.0, 3, -1]]\n", {}, schema);
  const auto points = deck.real3_list("probe", "points");
  REQUIRE(points.size() == 2);
  CHECK(points[0] == std::array<double, 3>{0, 0.5, 1});
  CHECK(points[1] == std::array<double, 3>{2, 3, -1});
  // Resolved and parsed back: the same points.
  const Deck again = parse(deck.resolved_toml(), {}, schema);
  CHECK(again.real3_list("probe", "points") == points);
  CHECK(parse("", {"probe.points=[[1,2,3]]"}, schema).real3_list("probe", "points").size() == 1);
  CHECK_THROWS_WITH(parse("[probe]\npoints = [[0, 1]]\n", {}, schema),
                    ContainsSubstring("deck.toml:2") && ContainsSubstring("[probe] points") &&
                        ContainsSubstring("entry 0"));
  CHECK_THROWS_WITH(parse("[probe]\npoints = [[0, 1, \"a\"]]\n", {}, schema),
                    ContainsSubstring("entry 0 element 2"));
  CHECK_THROWS_WITH(parse("[probe]\npoints = [[0, 1, -2]]\n", {}, schema),
                    ContainsSubstring("out of range"));
  CHECK_THROWS_WITH(parse("[probe]\npoints = 3\n", {}, schema),
                    ContainsSubstring("expected an array of [x, y, z] arrays of reals"));
  CHECK_NOTHROW(parse("[probe]\ncourant = 0.999\n", {}, schema));
  CHECK_THROWS_WITH(
      parse("[probe]\ncourant = 1.0\n", {}, schema),
      ContainsSubstring("[probe] courant = 1.0") && ContainsSubstring("allowed: real > 0 and < 1"));
}
