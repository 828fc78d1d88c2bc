#pragma once
// The sweep folder's files: the JSON-lines cache (results.jsonl, one record per configuration as it
// finishes), and what is written from it: results.csv, report.md, best.toml and the PNG plots.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kstencil {

using SweepRecord = nlohmann::ordered_json;

// The records of a cache file's text; a last line cut short (a killed sweep) is left out.
std::vector<SweepRecord> parse_cache(const std::string& text);
// Appends one record as a line and flushes it to the disk before returning.
void append_record(const std::filesystem::path& path, const SweepRecord& record);

struct SweepResults {
  std::string name, solver, device, backend, kokkos_version, strategy;
  int ranks = 1;
  std::vector<std::string> param_keys;  // the varied deck keys, in the space's order
  std::vector<SweepRecord> records;     // phase "sweep": this space's configurations
  std::vector<SweepRecord> confirm;     // phase "confirm": the re-timed best and default
  std::string default_key;
  std::int64_t space_size = 0, pruned = 0, not_run = 0;
  std::vector<std::string> notes;     // budget spent, profiles, ...
  std::vector<std::string> profiles;  // files written by the profiler runs
};

// The confirmed best: the fastest in the confirmation rounds (or, without them, in the sweep).
const SweepRecord* best_record(const SweepResults& results);

// Writes results.csv, report.md, the plots and (when a configuration verified) best.toml, whose
// deck text `best_deck` makes from a record. Returns the console summary.
std::string write_sweep_files(const std::filesystem::path& dir, const SweepResults& results,
                              const std::function<std::string(const SweepRecord&)>& best_deck);

}  // namespace kstencil
