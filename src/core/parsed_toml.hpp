#pragma once
// Parsed TOML for Deck::parse, kept out of core/deck.hpp (host code only: toml++ does not compile
// as CUDA).
#include <toml++/toml.h>

namespace kstencil {

struct ParsedToml {
  const toml::table& table;
};

}  // namespace kstencil
