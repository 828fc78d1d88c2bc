#pragma once
// The Jacobi solver's deck keys: [run], [grid], [kernel], [jacobi], [boundary], [output].
#include "core/deck.hpp"

namespace kstencil {

// Every key a Jacobi deck may hold, with its type, default, allowed values and help.
const Schema& jacobi_schema();

}  // namespace kstencil
