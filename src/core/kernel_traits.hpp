#pragma once
// The kernel traits every solver's deck has ([kernel] layout, iterate, tile, launch_bounds, the
// keys of kernel_trait_keys), read in one place.
#include <array>
#include <cstdint>
#include <optional>

#include "core/deck.hpp"
#include "core/mapping.hpp"

namespace kstencil {

struct KernelTraits {
  Layout layout = Layout::right;
  IterOrder iterate = IterOrder::automatic;
  std::array<std::int64_t, 3> tile{0, 0, 0};  // per axis x y z; 0 = the kernel's default
  std::optional<int> launch_bounds;           // nullopt: "auto"; 0: none
};

// auto_launch_bounds: as given to kernel_trait_keys for the deck's schema.
inline KernelTraits kernel_traits_from_deck(const Deck& deck, bool auto_launch_bounds = false) {
  KernelTraits traits;
  traits.layout = parse_layout(deck.string("kernel", "layout"));
  traits.iterate = parse_iter_order(deck.string("kernel", "iterate"));
  traits.tile = deck.integer3("kernel", "tile");
  if (!auto_launch_bounds || !deck.is_auto("kernel", "launch_bounds"))
    traits.launch_bounds = static_cast<int>(deck.integer("kernel", "launch_bounds"));
  return traits;
}

}  // namespace kstencil
