// libFuzzer target for the deck parser and the command-line override syntax (make fuzz).
//
// Input: deck text, optionally followed by a line "%%" and one override per line (at most 8).
// Every schema that links without Kokkos (Laplacian, FDTD; the Poisson schemas' source includes
// Kokkos) parses it. A DeckError is the expected answer to bad input; any other exception, a crash,
// a sanitizer report or a hang is a finding. A deck that parses must also survive its accessors and
// the resolved_toml() round trip: the resolved text parses again, to the same resolved text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/deck.hpp"
#include "fdtd/fdtd_deck.hpp"
#include "laplacian/laplacian_deck.hpp"

namespace {

using kstencil::Deck;
using kstencil::DeckError;
using kstencil::KeyType;
using kstencil::Schema;

[[noreturn]] void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_deck: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

// Every accessor of every key, as a solver would call them: none may throw on a parsed deck.
void read_every_key(const Deck& deck, const Schema& schema) {
  for (const auto& spec : schema) {
    if (!spec.retired.empty()) continue;
    const std::string& s = spec.section;
    const std::string& k = spec.key;
    switch (spec.type) {
      case KeyType::integer:
        deck.integer(s, k);
        break;
      case KeyType::integer_or_auto:
        if (!deck.is_auto(s, k)) deck.integer(s, k);
        break;
      case KeyType::real:
        deck.real(s, k);
        break;
      case KeyType::boolean:
        deck.boolean(s, k);
        break;
      case KeyType::boolean_or_auto:
        if (!deck.is_auto(s, k)) deck.boolean(s, k);
        break;
      case KeyType::string:
        deck.string(s, k);
        break;
      case KeyType::integer3:
        deck.integer3(s, k);
        break;
      case KeyType::real3:
        deck.real3(s, k);
        break;
      case KeyType::real3_list:
        deck.real3_list(s, k);
        break;
    }
    deck.value_literal(s, k);
    deck.is_default(s, k);
  }
}

void check(const std::string& text, const std::vector<std::string>& overrides,
           const Schema& schema) {
  std::string resolved;
  try {
    const Deck deck = Deck::parse(text, "fuzz.toml", overrides, schema);
    read_every_key(deck, schema);
    resolved = deck.resolved_toml();
  } catch (const DeckError& e) {
    // Bad input, said so: every message names the deck (or the override it comes from).
    const std::string message = e.what();
    if (message.rfind("fuzz.toml", 0) != 0 && message.rfind("command-line override", 0) != 0)
      finding("a DeckError that names neither the deck nor the override", message);
    return;
  }
  try {
    const Deck again = Deck::parse(resolved, "resolved.toml", {}, schema);
    if (again.resolved_toml() != resolved)
      finding("resolved_toml() does not round-trip",
              "first:\n" + resolved + "\nsecond:\n" + again.resolved_toml());
  } catch (const DeckError& e) {
    finding("resolved_toml() of a parsed deck does not parse again", e.what() + ("\n" + resolved));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string text = input;
  std::vector<std::string> overrides;
  const std::string separator = "\n%%\n";
  if (const auto at = input.find(separator); at != std::string::npos) {
    text = input.substr(0, at + 1);
    std::size_t begin = at + separator.size();
    while (begin <= input.size() && overrides.size() < 8) {
      const auto end = input.find('\n', begin);
      overrides.push_back(input.substr(begin, end == std::string::npos ? end : end - begin));
      if (end == std::string::npos) break;
      begin = end + 1;
    }
  }
  check(text, overrides, kstencil::laplacian_schema());
  check(text, overrides, kstencil::fdtd_schema());
  return 0;
}
