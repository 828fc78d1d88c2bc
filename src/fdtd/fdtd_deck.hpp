#pragma once
// The FDTD solver's deck keys: [run], [grid], [time], [kernel], [media], [init], [source],
// [diagnostics], [output].
#include "core/deck.hpp"

namespace kstencil {

// Every key an FDTD deck may hold, with its type, default, allowed values and help.
const Schema& fdtd_schema();

}  // namespace kstencil
