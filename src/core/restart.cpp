#include "core/restart.hpp"

#include "core/decomposition.hpp"

namespace kstencil {

std::optional<Checkpoint> open_restart(const Deck& deck, const RunContext& context,
                                       const std::string& solver, const Schema& schema,
                                       const std::string& end_section, const std::string& end_key) {
  if (context.restart.empty()) return std::nullopt;
  Checkpoint checkpoint = Checkpoint::open(context.restart, solver, context.comm);
  std::string error;
  try {
    check_restart_deck(deck, checkpoint, schema);
    if (!end_key.empty() && deck.integer(end_section, end_key) < checkpoint.step())
      throw deck.error(end_section, end_key,
                       "ends before the checkpoint " + checkpoint.path() + " (step " +
                           std::to_string(checkpoint.step()) + ")",
                       "at least " + std::to_string(checkpoint.step()));
  } catch (const DeckError& e) {
    error = e.what();
  }
  const std::string agreed = agreed_error(error, context.comm);
  if (!agreed.empty()) throw DeckError(agreed);
  return checkpoint;
}

void report_checkpoints(RunReport& report, const Checkpoint* restart,
                        const CheckpointWriter& checkpoints, const std::string& unit) {
  nlohmann::ordered_json from;
  if (restart) from = {{"file", restart->path()}, {"step", restart->step()}};
  const std::string last = checkpoints.last().string();
  report.fact("restarted_from", from)
      .fact("checkpoint", last.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(last));
  if (restart)
    report.line("restart",
                "from " + restart->path() + " at " + unit + " " + std::to_string(restart->step()));
  if (!last.empty()) report.line("checkpoint", last);
}

}  // namespace kstencil
