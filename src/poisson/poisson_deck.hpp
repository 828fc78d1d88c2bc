#pragma once
// The Poisson solvers' decks. Jacobi and CG read one schema, so a deck switches solver with
// run.solver alone: [run], [grid], [kernel], [poisson] (the problem), [boundary], [jacobi] (read by
// the Jacobi solver), [cg] (read by the CG solver), [output].
#include "core/deck.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

// Every key a Jacobi or CG deck may hold; they differ only in run.solver's default.
const Schema& jacobi_schema();
const Schema& cg_schema();

// The problem the deck describes. Throws DeckError for what the schema alone cannot reject: an
// axis of 2 points (no interior), a z axis without a y axis, an axis longer than an int.
PoissonProblem poisson_problem_from_deck(const Deck& deck);

}  // namespace kstencil
