#include "sweep/sweep.hpp"

#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/exec_space.hpp"
#include "core/interrupt.hpp"
#include "core/output.hpp"
#include "core/run_common.hpp"
#include "sweep/results.hpp"
#include "sweep/spec.hpp"

namespace kstencil {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rank 0's string on every rank.
void broadcast(std::string& text, MPI_Comm comm) {
  long long length = static_cast<long long>(text.size());
  MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
}

// FNV-1a: a stable 64-bit digest of the cache key's text (the same on every machine).
std::string digest(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buffer;
}

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%lds", s);
  return buffer;
}

// One configuration: its deck overrides, its parameters and its cache key.
struct Config {
  std::string id;  // "c0012" (the point's index in the space) or "default"
  std::vector<std::string> overrides;
  Json params = Json::object();
  std::string key;
  bool kokkos_default_tile = false;
};

// Whether an MPI launcher started this process: Open MPI hands its ranks a pseudo-terminal
// whatever mpiexec's own output is (a pipe, a file), so a terminal there says nothing. (Not
// PMIX_RANK: Open MPI's singleton start sets it too.)
bool launched_by_mpiexec() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_RANK");
}

// A progress bar on a terminal, plain lines otherwise (rank 0 only).
class Progress {
 public:
  explicit Progress(bool active)
      : active_(active), tty_(active && isatty(STDOUT_FILENO) && !launched_by_mpiexec()) {}
  // A new stretch of `total` launches (the ETA keeps the time per launch measured so far).
  void expect(std::size_t total) {
    total_ = total;
    done_ = 0;
  }
  void begin(const Config& c) {
    started_ = Clock::now();
    if (!tty_) return;
    winsize w{};
    const int width = ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20 ? w.ws_col : 100;
    std::string line = counter() + " " + bar() + " " + eta() + "  " + label(c);
    if (static_cast<int>(line.size()) > width - 1) line.resize(static_cast<std::size_t>(width - 1));
    std::printf("\r\033[K%s", line.c_str());
    std::fflush(stdout);
  }
  void end(const Config& c, const Json& r) {
    const double wall = std::chrono::duration<double>(Clock::now() - started_).count();
    if (r.value("status", "") != "rejected") {
      ++done_;
      ++runs_;
      spent_ += wall;
    }
    if (!active_) return;
    std::string outcome = r.value("status", "?");
    if (outcome == "ok" || outcome == "WRONG") {
      char buffer[128];
      std::snprintf(buffer, sizeof buffer, " %.3f of copy (%.1f GB/s, spread %.0f%%)",
                    r.value("fom_ratio", 0.0), r.value("gbs", 0.0), 100 * r.value("spread", 0.0));
      outcome += buffer;
    } else if (r.contains("reason")) {
      outcome += ": " + r["reason"].get<std::string>().substr(0, 160);
    }
    if (tty_) std::printf("\r\033[K");
    std::printf("%s %s  %s -> %s\n", counter().c_str(), r.value("phase", "").c_str(),
                label(c).c_str(), outcome.c_str());
    std::fflush(stdout);
  }

 private:
  bool active_, tty_;
  std::size_t total_ = 0, done_ = 0, runs_ = 0;
  double spent_ = 0;
  Clock::time_point started_;
  std::string counter() const {
    return "[" + std::to_string(done_) + (total_ ? "/" + std::to_string(total_) : "") + "]";
  }
  std::string bar() const {
    if (!total_) return "";
    const std::size_t filled = 24 * std::min(done_, total_) / total_;
    return "[" + std::string(filled, '#') + std::string(24 - filled, '-') + "]";
  }
  std::string eta() const {
    if (!total_ || !runs_) return "ETA ?";
    return "ETA " + duration_text(spent_ / static_cast<double>(runs_) *
                                  static_cast<double>(total_ > done_ ? total_ - done_ : 0));
  }
  static std::string label(const Config& c) {
    std::string out = c.id;
    for (const auto& [key, value] : c.params.items()) out += " " + key + "=" + value.dump();
    return out;
  }
};

class Sweep {
 public:
  Sweep(const SweepOptions& o, std::string solver_name, const SolverEntry& solver, MPI_Comm comm)
      : o_(o), solver_name_(std::move(solver_name)), solver_(solver), comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &ranks_);
    limits_ = default_exec_limits();
    base_overrides_ = deck_overrides(o.overrides);
    base_ = std::make_unique<Deck>(Deck::load(o.deck_path, base_overrides_, solver.schema()));
    deck_text_ = read_text(o.deck_path);
    spec_ = load_sweep_spec(o.deck_path, o.overrides, o.vary, o.tiles, solver.schema(), limits_);
    space_ = enumerate_space(spec_, o.deck_path);
    name_ = run_name_of(*base_, o.deck_path);
    env_ = {limits_.device_name, limits_.backend, kokkos_version_string(), ranks_};
    make_configs();
  }

  // The configurations the strategy would take, each checked; nothing written or launched.
  int dry_run() {
    const std::vector<const Config*> list = spec_.strategy == "random" ? selection() : [&] {
      std::vector<const Config*> all = {&default_};
      for (const Config& c : configs_) all.push_back(&c);
      return all;
    }();
    std::size_t launchable = 0, rejected = 0, same = 0;
    std::map<std::string, std::string> first_id;  // by key: the default may be a point too
    for (const Config* c : list) {
      std::string verdict = "launch";
      if (const auto [first, fresh] = first_id.emplace(c->key, c->id); !fresh) {
        verdict = "the same run as " + first->second + " (run once)";
        ++same;
      } else {
        try {
          solver_.check(deck_of(c->overrides), comm_);
          ++launchable;
        } catch (const DeckError& e) {
          verdict = std::string("rejected: ") + e.what();
          ++rejected;
        }
      }
      if (rank_ == 0)
        std::printf("%s %s -> %s\n", c->id.c_str(), c->params.dump().c_str(), verdict.c_str());
    }
    if (rank_ == 0)
      std::printf(
          "kstencil sweep %s: %zu configurations (%lld left out by sweep.restrict), strategy "
          "%s: %zu to launch, %zu rejected, %zu the same as another; folder %s\n",
          name_.c_str(), configs_.size(), static_cast<long long>(space_.pruned),
          spec_.strategy.c_str(), launchable, rejected, same,
          (std::filesystem::path(base_->string("output", "root")) / name_).string().c_str());
    return 0;
  }

  int run() {
    if (o_.dry_run) return dry_run();
    const bool overwrite = o_.overwrite || base_->boolean("output", "overwrite");
    const std::filesystem::path root = base_->string("output", "root");
    if (o_.replot) {
      dir_ = root / name_;
      if (!std::filesystem::is_regular_file(dir_ / "results.jsonl"))
        throw DeckError(o_.deck_path + ": --replot: no sweep cache " +
                        (dir_ / "results.jsonl").string() +
                        " (run the sweep first; the folder is [output] root / [run] name)");
      read_cache();
      // Replotted elsewhere (e.g. a GPU machine's folder on a laptop): the keys of the machine
      // that ran it.
      const auto ran_here = [&](const Json& r) {
        return r.value("device", "") == env_.device && r.value("backend", "") == env_.backend &&
               r.value("kokkos_version", "") == env_.kokkos_version &&
               r.value("ranks", 1) == env_.ranks;
      };
      if (!cache_.empty() && std::none_of(cache_.begin(), cache_.end(),
                                          [&](const auto& e) { return ran_here(e.second); })) {
        const Json& r = cache_.begin()->second;
        env_ = {r.value("device", ""), r.value("backend", ""), r.value("kokkos_version", ""),
                r.value("ranks", 1)};
        make_configs();
      }
      return finish();
    }
    bool resumed = false;
    dir_ = prepare_output_folder(root, name_, overwrite, "sweep.toml", &resumed, comm_);
    if (rank_ == 0) {
      write_file_atomically(dir_ / "sweep.toml", sweep_toml());
      if (resumed) std::printf("kstencil sweep: resuming %s\n", dir_.string().c_str());
    }
    read_cache();
    const std::size_t cached = cache_.size();
    start_ = Clock::now();
    progress_.emplace(rank_ == 0);

    // What a product's counts at the end add up to: the deck as given is one more run unless a
    // point of the space is the same configuration.
    std::set<std::string> keys = {default_.key};
    for (const Config& c : configs_) keys.insert(c.key);
    const std::string runs = spec_.strategy == "product" ? ", " + std::to_string(keys.size()) +
                                                               " runs with the deck as given"
                                                         : std::string();
    if (rank_ == 0)
      std::printf(
          "kstencil sweep: %s, %zu configurations (%lld left out by sweep.restrict)%s, strategy "
          "%s; folder %s\n",
          solver_name_.c_str(), configs_.size(), static_cast<long long>(space_.pruned),
          runs.c_str(), spec_.strategy.c_str(), dir_.string().c_str());
    if (progress_) progress_->expect(1);
    evaluate(default_, "sweep", -1);
    if (spec_.strategy == "local")
      local_search();
    else
      run_list(selection());
    confirm();
    if (rank_ == 0 && cached > 0)
      std::printf("kstencil sweep: %zu results were in the cache and not re-run\n", cached);
    return finish();
  }

 private:
  const SweepOptions& o_;
  std::string solver_name_;
  const SolverEntry& solver_;
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  ExecLimits limits_;
  std::vector<std::string> base_overrides_;
  std::unique_ptr<Deck> base_;
  std::string deck_text_, name_;
  struct Environment {
    std::string device, backend, kokkos_version;
    int ranks = 1;
  } env_;  // what the cache keys hold besides the deck
  SweepSpec spec_;
  SweepSpace space_;
  Config default_;
  std::vector<Config> configs_;
  std::map<SweepPoint, std::size_t> index_of_;
  std::filesystem::path dir_;
  std::map<std::string, Json> cache_;   // "key|phase|round" -> record
  std::map<std::string, int> started_;  // the same -> launches begun in earlier processes
  Clock::time_point start_;
  std::optional<Progress> progress_;
  std::int64_t launched_ = 0;
  std::vector<std::string> notes_;
  bool out_of_budget_ = false, interrupted_ = false;

  Deck deck_of(const std::vector<std::string>& overrides) const {
    std::vector<std::string> all = base_overrides_;
    all.insert(all.end(), overrides.begin(), overrides.end());
    all.push_back("output.enabled=false");  // a sweep writes no run folders
    return Deck::parse(deck_text_, o_.deck_path, all, solver_.schema());
  }

  void make_configs() {
    default_ = make_config("default", {});
    configs_.clear();
    for (std::size_t i = 0; i < space_.points.size(); ++i) {
      char id[32];
      std::snprintf(id, sizeof id, "c%04zu", i);
      configs_.push_back(make_config(id, space_.points[i]));
      index_of_[space_.points[i]] = i;
    }
  }

  Config make_config(const std::string& id, const SweepPoint& point) const {
    Config c;
    c.id = id;
    if (!point.empty()) {
      c.overrides = point_overrides(spec_, point);
      c.params = point_params(spec_, point);
    } else {  // the default: the deck as given
      c.params = deck_params(spec_, *base_);
    }
    const Deck deck = deck_of(c.overrides);
    c.key = digest(env_.device + "|" + env_.backend + "|" + env_.kokkos_version + "|" +
                   std::to_string(env_.ranks) + "|" + solver_name_ + "|" + deck.resolved_toml());
    try {
      c.kokkos_default_tile = deck.integer3("kernel", "tile") == std::array<std::int64_t, 3>{};
    } catch (const std::exception&) {
      // A solver without kernel.tile (CG).
    }
    return c;
  }

  static std::string cache_key(const std::string& key, const std::string& phase, int round) {
    return key + "|" + phase + "|" + std::to_string(round);
  }

  std::string sweep_toml() const {
    std::string out = "# kstencil sweep " + name_ +
                      ": the base deck (resolved) and how it was "
                      "varied\n# command: kstencil sweep " +
                      o_.deck_path;
    for (const auto& o : o_.overrides) out += " " + o;
    for (const auto& v : o_.vary) out += " --vary '" + v + "'";
    if (!o_.tiles.empty()) out += " --tiles " + o_.tiles;
    out += "\n# varied:";
    for (const auto& dim : spec_.dims) out += " " + dim.name();
    return out + "\n\n" + base_->resolved_toml();
  }

  void read_cache() {
    std::string text;
    if (rank_ == 0) text = read_text((dir_ / "results.jsonl").string());
    broadcast(text, comm_);
    for (const Json& r : parse_cache(text)) {
      const std::string k =
          cache_key(r.value("key", ""), r.value("phase", ""), r.value("round", -1));
      if (r.value("status", "") == "started")
        ++started_[k];
      else
        cache_[k] = r;
    }
  }

  void append(const Json& r) {
    if (rank_ == 0) append_record(dir_ / "results.jsonl", r);
  }

  bool budget_left() {
    int stop = 0;
    if (rank_ == 0) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
      stop = (spec_.budget > 0 && launched_ >= spec_.budget) ||
             (spec_.budget_seconds > 0 && elapsed >= spec_.budget_seconds);
    }
    MPI_Bcast(&stop, 1, MPI_INT, 0, comm_);
    if (interrupt_agreed(comm_)) {
      if (!interrupted_)
        notes_.push_back(
            "Stopped by a signal: run the sweep again to go on (finished "
            "configurations are not re-run).");
      interrupted_ = true;
      return false;
    }
    if (stop && !out_of_budget_) {
      out_of_budget_ = true;
      notes_.push_back(
          "The budget (sweep.budget = " + std::to_string(spec_.budget) +
          " configurations, sweep.budget_seconds = " + fmt("%g", spec_.budget_seconds) +
          ") ran out: configurations were left unrun; run the sweep again with a "
          "larger budget to go on (finished ones are not re-run).");
    }
    return !stop;
  }

  Json base_record(const Config& c, const std::string& phase, int round) const {
    Json r;
    r["key"] = c.key;
    r["id"] = c.id;
    r["phase"] = phase;
    r["round"] = round;
    r["default"] = c.key == default_.key;
    r["params"] = c.params;
    r["overrides"] = c.overrides;
    r["kokkos_default_tile"] = c.kokkos_default_tile;
    r["solver"] = solver_name_;
    r["device"] = env_.device;
    r["backend"] = env_.backend;
    r["kokkos_version"] = env_.kokkos_version;
    r["ranks"] = env_.ranks;
    return r;
  }

  // The record of one configuration: from the cache, or checked (rejected: never launched), then
  // run, verified and timed in this process.
  Json evaluate(const Config& c, const std::string& phase, int round) {
    const std::string k = cache_key(c.key, phase, round);
    if (const auto found = cache_.find(k); found != cache_.end()) return found->second;
    Json r = base_record(c, phase, round);
    const Deck deck = deck_of(c.overrides);
    try {
      solver_.check(deck, comm_);
    } catch (const DeckError& e) {
      r["status"] = "rejected";
      r["reason"] = e.what();
      r["finished"] = now_text();
      append(r);
      return cache_[k] = r;
    }
    if (started_[k] >= 2) {
      // Twice begun and never finished: it ends the process (or was killed twice); not again.
      r["status"] = "error";
      r["reason"] =
          "the process ended twice while this configuration ran (a crash, or killed); "
          "not launched again (sweep --overwrite starts afresh)";
      append(r);
      return cache_[k] = r;
    }
    Json started = base_record(c, phase, round);
    started["status"] = "started";
    append(started);
    if (progress_) progress_->begin(c);
    ++launched_;
    Json summary;
    std::string console, error;
    int status = 0;
    const auto t0 = Clock::now();
    try {
      status = solver_.run(deck, o_.deck_path, RunContext{comm_, true, &summary, &console, ""});
    } catch (const DeckError& e) {
      error = std::string("rejected: ") + e.what();
    } catch (const std::exception& e) {
      if (ranks_ > 1) throw;  // this rank alone, maybe: main ends every rank
      error = e.what();
    }
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    if (error.empty() && interrupt_agreed(comm_)) {
      // Cut short by a signal: no figures to keep; its "started" record has it run again when
      // the sweep resumes.
      r["status"] = "not run";
      if (progress_) progress_->end(c, r);
      return r;
    }
    if (rank_ == 0) {
      if (error.rfind("rejected: ", 0) == 0) {
        r["status"] = "rejected";
        r["reason"] = error.substr(10);
      } else if (!error.empty()) {
        r["status"] = "error";
        r["reason"] = error;
      } else {
        fill_from_summary(r, summary, status);
      }
      r["wall_s"] = wall;
      r["finished"] = now_text();
      std::ofstream(dir_ / "runs.log", std::ios::app)
          << "=== " << c.id << " " << phase << (round >= 0 ? " round " + std::to_string(round) : "")
          << " " << c.params.dump() << " -> " << r.value("status", "") << "\n"
          << console << (error.empty() ? "" : error + "\n");
    }
    std::string text = r.dump();
    broadcast(text, comm_);
    r = Json::parse(text);
    append(r);
    if (progress_) progress_->end(c, r);
    return cache_[k] = r;
  }

  static void fill_from_summary(Json& r, const Json& s, int status) {
    r["status"] = status == 0 ? "ok" : "WRONG";
    if (status != 0) {
      std::string details = s.contains("verification") ? s["verification"].dump() : "";
      if (details.size() > 400) details = details.substr(0, 397) + "...";
      r["reason"] = "verification failed: " + details;
    }
    r["grid"] = s.contains("grid") ? s["grid"] : s.value("cells", Json());
    r["precision"] = s.value("precision", Json());
    r["layout"] = s.value("layout", Json());
    r["variant"] = s.value("variant", s.value("norm", Json()));
    r["tile"] = s.value("tile", Json());
    const Json t = s.value("timing", Json::object());
    const double median = t.value("median_s", 0.0);
    r["time_median_s"] = median;
    r["time_min_s"] = t.value("min_s", 0.0);
    r["time_max_s"] = t.value("max_s", 0.0);
    r["samples"] = t.value("samples", 0);
    r["spread"] = median > 0 ? (t.value("max_s", 0.0) - t.value("min_s", 0.0)) / median : 0.0;
    r["gbs"] = t.value("gbs", 0.0);
    // Null where the run timed nothing (a solve that started converged).
    const auto number = [&](const char* key) {
      return s.contains(key) && s[key].is_number() ? s[key].get<double>() : 0.0;
    };
    r["copy_gbs"] = number("copy_gbs");
    r["fom_ratio"] = number("fom_ratio");
    if (s.contains("mcells_per_s")) r["mcells_per_s"] = s["mcells_per_s"];
    r["summary"] = s;
  }

  // The configurations the strategy takes, in order (product and random).
  std::vector<const Config*> selection() {
    std::vector<const Config*> out;
    if (spec_.strategy == "random") {
      for (const std::size_t i :
           sample_indices(configs_.size(), static_cast<std::size_t>(spec_.samples), spec_.seed))
        out.push_back(&configs_[i]);
    } else {
      for (const Config& c : configs_) out.push_back(&c);
    }
    return out;
  }

  void run_list(const std::vector<const Config*>& list) {
    // Checked first, so that the progress counts only what will be launched.
    std::vector<const Config*> to_run;
    for (const Config* c : list) {
      if (cache_.count(cache_key(c->key, "sweep", -1))) continue;
      const Json r = check_only(*c);
      if (r.is_null()) to_run.push_back(c);
    }
    if (progress_) progress_->expect(to_run.size());
    for (const Config* c : to_run) {
      if (!budget_left()) break;
      evaluate(*c, "sweep", -1);
    }
  }

  // Records a rejected configuration at once; null when it can be launched.
  Json check_only(const Config& c) {
    try {
      solver_.check(deck_of(c.overrides), comm_);
      return Json();
    } catch (const DeckError&) {
      return evaluate(c, "sweep", -1);  // records the rejection
    }
  }

  // From the default's point (or the first), to the best neighbour while one is faster.
  void local_search() {
    if (progress_) progress_->expect(0);  // how many moves it takes is not known beforehand
    SweepPoint at(spec_.dims.size(), 0);
    for (std::size_t d = 0; d < spec_.dims.size(); ++d) {
      const auto& dim = spec_.dims[d];
      for (std::size_t v = 0; v < dim.values.size(); ++v) {
        bool same = true;
        for (std::size_t k = 0; k < dim.keys.size(); ++k) {
          const auto dot = dim.keys[k].find('.');
          same = same && base_->value_literal(dim.keys[k].substr(0, dot),
                                              dim.keys[k].substr(dot + 1)) == dim.values[v][k];
        }
        if (same) at[d] = v;
      }
    }
    if (!index_of_.count(at)) {
      if (configs_.empty()) return;
      at = space_.points.front();
      notes_.push_back(
          "Local search: the default is not in the space (sweep.restrict), so it "
          "started from the space's first point.");
    }
    const auto ratio_of = [](const Json& r) {
      return r.value("status", "") == "ok" ? r.value("fom_ratio", 0.0) : -1.0;
    };
    double current = ratio_of(evaluate(configs_[index_of_[at]], "sweep", -1));
    std::int64_t steps = 0;
    while (budget_left()) {
      std::optional<SweepPoint> best;
      double best_ratio = current;
      for (const SweepPoint& next : neighbours(spec_, at)) {
        const auto found = index_of_.find(next);
        if (found == index_of_.end() || !budget_left()) continue;
        const double ratio = ratio_of(evaluate(configs_[found->second], "sweep", -1));
        if (ratio > best_ratio) {
          best_ratio = ratio;
          best = next;
        }
      }
      if (!best) break;
      at = *best;
      current = best_ratio;
      ++steps;
    }
    notes_.push_back("Local search: " + std::to_string(steps) +
                     " moves to a faster neighbour from the start point, then none was faster.");
  }

  std::vector<Json> sweep_records() const {
    std::vector<Json> out;
    std::set<std::string> seen;
    const auto add = [&](const Config& c) {
      const auto found = cache_.find(cache_key(c.key, "sweep", -1));
      if (found != cache_.end() && seen.insert(c.key).second) out.push_back(found->second);
    };
    add(default_);
    for (const Config& c : configs_) add(c);
    return out;
  }

  // The best few re-timed in rounds, each round the default first, then each candidate.
  void confirm() {
    if (spec_.confirm == 0) return;
    std::vector<Json> ok;
    for (const Json& r : sweep_records())
      if (r.value("status", "") == "ok" && !r.value("default", false)) ok.push_back(r);
    std::stable_sort(ok.begin(), ok.end(), [](const Json& a, const Json& b) {
      return a.value("fom_ratio", 0.0) > b.value("fom_ratio", 0.0);
    });
    if (ok.size() > static_cast<std::size_t>(spec_.confirm))
      ok.resize(static_cast<std::size_t>(spec_.confirm));
    if (ok.empty()) return;
    if (out_of_budget_ || interrupted_) {
      notes_.push_back("The confirmation rounds were not run: the budget ran out, or a signal.");
      return;
    }
    std::vector<Config> order = {default_};
    for (const Json& r : ok) {
      Config c;
      c.id = r["id"];
      c.key = r["key"];
      c.overrides = r["overrides"].get<std::vector<std::string>>();
      c.params = r["params"];
      c.kokkos_default_tile = r.value("kokkos_default_tile", false);
      order.push_back(c);
    }
    if (progress_) progress_->expect(order.size() * static_cast<std::size_t>(spec_.confirm_rounds));
    for (int round = 0; round < spec_.confirm_rounds; ++round)
      for (const Config& c : order) evaluate(c, "confirm", round);
  }

  SweepResults results() const {
    SweepResults out;
    out.name = name_;
    out.solver = solver_name_;
    out.device = env_.device;
    out.backend = env_.backend;
    out.kokkos_version = env_.kokkos_version;
    out.strategy = spec_.strategy;
    out.ranks = env_.ranks;
    for (const auto& dim : spec_.dims)
      for (const auto& key : dim.keys) out.param_keys.push_back(key);
    out.records = sweep_records();
    std::set<std::string> keys;
    for (const Json& r : out.records) keys.insert(r.value("key", ""));
    for (const auto& [k, r] : cache_)
      if (r.value("phase", "") == "confirm" && keys.count(r.value("key", "")))
        out.confirm.push_back(r);
    out.default_key = default_.key;
    out.space_size = static_cast<std::int64_t>(configs_.size());
    out.pruned = space_.pruned;
    std::int64_t have = 0;
    for (const Config& c : configs_) have += cache_.count(cache_key(c.key, "sweep", -1)) ? 1 : 0;
    out.not_run = out.space_size - have;
    out.notes = notes_;
    std::int64_t above = 0;
    for (const Json& r : out.records)
      above += r.value("status", "") == "ok" && r.value("fom_ratio", 0.0) > 1.05 ? 1 : 0;
    if (above > 0)
      out.notes.push_back(std::to_string(above) +
                          " configurations ran above the same-run copy (ratio over 1.05): part of "
                          "the bytes their figure of merit counts did not go through memory (the "
                          "data fit a cache, or the kernel reuses values), so compare their times "
                          "there.");
    return out;
  }

  std::string best_deck(const Json& r) const {
    std::vector<std::string> all = base_overrides_;
    for (const auto& o : r["overrides"]) all.push_back(o.get<std::string>());
    all.push_back("run.name=" + name_ + "-best");
    const Deck deck = Deck::parse(deck_text_, o_.deck_path, all, solver_.schema());
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.3f of the same-run copy (%.1f GB/s)",
                  r.value("fom_ratio", 0.0), r.value("gbs", 0.0));
    std::string head = "# The best verified configuration of sweep " + name_ + " (" +
                       r["id"].get<std::string>() + ": " + ratio + ") on " + env_.device + ", " +
                       env_.backend + ", Kokkos " + env_.kokkos_version +
                       ".\n# Run it: kstencil run best.toml\n";
    return head + deck.resolved_toml();
  }

  // The profiler's command around `kstencil run` of the best and the default (rank 0, one rank).
  std::vector<std::string> profile(const Json* best) {
    std::vector<std::string> files;
    if (spec_.profile.empty() || rank_ != 0 || !best) return files;
    if (ranks_ > 1) {
      notes_.push_back("sweep.profile: not run (profiling is done from a one-rank sweep).");
      return files;
    }
    const std::filesystem::path profiles = dir_ / "profiles";
    std::filesystem::create_directories(profiles);
    const auto quote = [](const std::string& s) {
      std::string out = "'";
      for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      return out + "'";
    };
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    for (const std::string which : {"best", "default"}) {
      std::vector<std::string> overrides = base_overrides_;
      if (which == "best")
        for (const auto& o : (*best)["overrides"]) overrides.push_back(o.get<std::string>());
      std::string command = quote(self) + " run " +
                            quote(std::filesystem::absolute(o_.deck_path).string()) +
                            " --overwrite";
      for (const auto& o : overrides) command += " " + quote(o);
      command += " " + quote("output.root=" + profiles.string()) + " " + quote("run.name=" + which);
      std::string line = spec_.profile;
      const auto replace = [&](const std::string& from, const std::string& to) {
        for (auto at = line.find(from); at != std::string::npos;
             at = line.find(from, at + to.size()))
          line.replace(at, from.size(), to);
      };
      replace("{out}", quote((profiles / which).string()));
      replace("{command}", command);
      const std::string log = (profiles / (which + ".log")).string();
      std::printf("kstencil sweep: profiling the %s configuration: %s\n", which.c_str(),
                  line.c_str());
      std::fflush(stdout);
      const int status = std::system(("( " + line + " ) > " + quote(log) + " 2>&1").c_str());
      notes_.push_back("Profile of the " + which + " configuration: `" + spec_.profile +
                       "`, exit status " + std::to_string(WEXITSTATUS(status)) +
                       ", its output in profiles/" + which + ".log.");
      files.push_back("profiles/" + which + ".log");
    }
    return files;
  }

  int finish() {
    SweepResults r = results();
    int status = 0;
    for (const Json& record : r.records)
      if (record.value("status", "") == "WRONG" || record.value("status", "") == "error")
        status = 1;
    if (rank_ == 0) {
      std::string summary = write_sweep_files(dir_, r, [&](const Json& b) { return best_deck(b); });
      if (!o_.replot && !spec_.profile.empty()) {
        r.profiles = profile(best_record(r));
        r.notes = notes_;
        summary = write_sweep_files(dir_, r, [&](const Json& b) { return best_deck(b); });
      }
      std::fputs(summary.c_str(), stdout);
      std::fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, comm_);
    return status;
  }
};

}  // namespace

int run_sweep(const SweepOptions& options, const std::string& solver_name,
              const SolverEntry& solver, MPI_Comm comm) {
  Sweep sweep(options, solver_name, solver, comm);
  return sweep.run();
}

}  // namespace kstencil
