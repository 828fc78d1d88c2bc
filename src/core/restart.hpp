#pragma once
// What every solver with checkpoints does around its run: open the checkpoint a restart names and
// check the deck against it, and report the run's checkpoints.
#include <optional>
#include <string>

#include "core/checkpoint.hpp"
#include "core/report.hpp"
#include "core/run_context.hpp"

namespace kstencil {

// The checkpoint of `kstencil run --restart FILE` (nullopt without it), read on every rank and
// checked against the deck (check_restart_deck); with `end_key` ([time] steps), an end before the
// checkpoint's step is refused too. DeckErrors are agreed over context.comm.
std::optional<Checkpoint> open_restart(const Deck& deck, const RunContext& context,
                                       const std::string& solver, const Schema& schema,
                                       const std::string& end_section = "",
                                       const std::string& end_key = "");

// Facts restarted_from (file and step, or null) and checkpoint (the last written, or null), and
// their console lines, which count in `unit` ("step", "iteration").
void report_checkpoints(RunReport& report, const Checkpoint* restart,
                        const CheckpointWriter& checkpoints, const std::string& unit);

}  // namespace kstencil
