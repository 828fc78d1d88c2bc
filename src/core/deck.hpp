#pragma once
// Input decks: TOML files checked against a schema, with command-line overrides.
//
// Every key a solver understands is declared once in a Schema (type, default, allowed values,
// help). Loading a deck rejects unknown sections and keys, wrong types and out-of-range values with
// a DeckError whose message names the file, the key (with its line where known) and what is
// allowed. A [sweep] table is passed over: `kstencil sweep` reads and checks it (sweep/spec.hpp).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kstencil {

struct DeckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Deck;

enum class KeyType {
  integer,  // 64-bit integer
  real,     // floating point (an integer literal is accepted)
  boolean,
  string,
  integer3,         // array of exactly 3 integers
  real3,            // array of exactly 3 reals
  integer_or_auto,  // a non-negative integer or the string "auto"; read with integer(): auto -> 0
  real3_list,       // array of arrays of 3 reals (may be empty), e.g. probe positions
  boolean_or_auto   // true, false or the string "auto"; read with boolean() after is_auto()
};

struct KeySpec {
  std::string section;
  std::string key;
  KeyType type;
  std::string default_toml;               // default as a TOML literal: 256, 1.0, "right", [0, 0, 0]
  std::vector<std::string> choices;       // allowed strings (string keys); empty = any
  std::vector<std::int64_t> int_choices;  // allowed integers (integer keys); empty = any in range
  std::optional<double> min;              // inclusive, numbers and each array element
  std::optional<double> max;              // inclusive
  bool min_exclusive = false;             // min itself not allowed (e.g. spacing > 0)
  bool max_exclusive = false;             // max itself not allowed (e.g. Courant number < 1)
  std::string range_reason;               // why the range is what it is, for out-of-range errors
  std::string help;
  // Words a string key no longer takes, each with what to use instead (a clear error, not a list).
  std::vector<std::pair<std::string, std::string>> retired_choices;
  // Non-empty: the key was removed, and a deck that sets it is refused with this text.
  std::string retired;
  // A string key's further check: what is wrong with a value ("" if nothing), with `allowed_text`
  // as what the key allows (e.g. [run] name, which becomes a folder name).
  std::string (*string_check)(const std::string& value) = nullptr;
  std::string allowed_text;
  // A check across keys, run once every value is resolved (e.g. nx * ny * nz must stay within
  // 64-bit sizes): throws the deck's error() to refuse it.
  void (*deck_check)(const Deck& deck) = nullptr;
};

using Schema = std::vector<KeySpec>;

struct ParsedToml;

class Deck {
 public:
  // Reads `path`, applies overrides of the form section.key=value (value parsed as a TOML value;
  // a bare word is taken as a string), checks everything against `schema` and fills defaults.
  static Deck load(const std::string& path, const std::vector<std::string>& overrides,
                   const Schema& schema);
  // The same from TOML text (`source_name` stands for the file in messages).
  static Deck parse(const std::string& toml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides, const Schema& schema);
  // The same from parsed TOML (core/parsed_toml.hpp): its nodes' lines are named in messages.
  static Deck parse(const ParsedToml& file, const std::string& source_name,
                    const std::vector<std::string>& overrides, const Schema& schema);

  std::int64_t integer(const std::string& section, const std::string& key) const;
  double real(const std::string& section, const std::string& key) const;
  bool boolean(const std::string& section, const std::string& key) const;
  std::string string(const std::string& section, const std::string& key) const;
  std::array<std::int64_t, 3> integer3(const std::string& section, const std::string& key) const;
  std::array<double, 3> real3(const std::string& section, const std::string& key) const;
  std::vector<std::array<double, 3>> real3_list(const std::string& section,
                                                const std::string& key) const;
  bool is_auto(const std::string& section, const std::string& key) const;
  // Whether a key's resolved value is its schema default (whether the deck gave it or not).
  bool is_default(const std::string& section, const std::string& key) const;

  // The fully resolved deck (every schema key, defaults filled), as TOML text in schema order.
  std::string resolved_toml() const;
  const std::string& source() const { return source_; }

  // A DeckError for a semantic check done by a solver after loading (e.g. tile too large):
  // "<file>: [section] key = value: <what is wrong>; allowed: <allowed>".
  DeckError error(const std::string& section, const std::string& key, const std::string& what,
                  const std::string& allowed) const;
  // A key's resolved value as a TOML literal (as in resolved_toml()): 128, 1.0, "right", [0, 0, 0].
  std::string value_literal(const std::string& section, const std::string& key) const;

 private:
  // The resolved values (a toml::table). toml++ stays out of this header: it does not compile as
  // CUDA, and every solver's kernel files include the deck.
  struct Values;
  std::string source_;
  std::shared_ptr<Values> values_;
  const Schema* schema_ = nullptr;  // the schema given to load/parse: it must outlive the Deck
  const KeySpec& spec(const std::string& section, const std::string& key) const;
  // The resolved value (a toml::node) of a key whose type is one of `types` (else logic_error).
  template <class Node>
  const Node& node(const std::string& section, const std::string& key,
                   std::initializer_list<KeyType> types, const char* accessor) const;
};

// Whether text given as a value (an override, a --vary value) that does not parse as TOML opens
// as a TOML array, table or string: a value gone wrong (a missing bracket), not a bare word.
bool opens_as_toml_value(const std::string& text);

// The string at [section] key of a deck file, with overrides applied, before any schema is known
// (e.g. [run] solver, which selects the schema); `fallback` if absent or unreadable.
std::string peek_deck_string(const std::string& path, const std::vector<std::string>& overrides,
                             const std::string& section, const std::string& key,
                             const std::string& fallback);

// What is wrong with `name` as a run folder's name ([run] name, or the deck file's stem): "" if
// nothing; else e.g. "contains '/'". run_name_allowed() says what is allowed.
std::string run_name_problem(const std::string& name);
std::string run_name_allowed();

// "integer", "real", "3 integers", "integer or \"auto\"", ...
std::string key_type_name(KeyType type);
// What a key accepts, as error messages and schema_markdown() say it: "\"left\", \"right\"",
// "integer >= 3", "0, 128, 256", "3 integers, each >= 0", "\"auto\" or integer >= 1", ...
std::string allowed_values(const KeySpec& spec);

// Schema rows as a Markdown table (section, key, type, default, allowed, meaning), for the README
// and `kstencil keys`.
std::string schema_markdown(const Schema& schema);

}  // namespace kstencil
