#pragma once
// The Laplacian solver's deck keys: [run], [grid], [kernel], [laplacian], [output].
#include "core/deck.hpp"

namespace kstencil {

// Every key a Laplacian deck may hold, with its type, default, allowed values and help.
const Schema& laplacian_schema();

}  // namespace kstencil
