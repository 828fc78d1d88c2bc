#pragma once
// A toml++ value as a TOML literal, the way decks write values (host code only: toml++ does not
// compile as CUDA).
#include <toml++/toml.h>

#include <string>

namespace kstencil {

// 128, 1.0, "right", [32, 4, 1]; floats round-trip exactly.
std::string toml_literal(const toml::node& node);

}  // namespace kstencil
