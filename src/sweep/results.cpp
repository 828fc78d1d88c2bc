#include "sweep/results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "core/output.hpp"
#include "core/plot.hpp"
#include "core/timing.hpp"

namespace kstencil {
namespace {

using Json = nlohmann::ordered_json;

std::string num(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string status_of(const Json& r) {
  return r.value("status", "");
}
double ratio_of(const Json& r) {
  return r.value("fom_ratio", 0.0);
}

// "512x512x512", "32 4 1": arrays in the CSV's cells.
std::string joined(const Json& value, const char* separator) {
  if (!value.is_array())
    return value.is_null() ? "" : value.is_string() ? value.get<std::string>() : value.dump();
  std::string out;
  for (const auto& v : value) out += (out.empty() ? "" : separator) + v.dump();
  return out;
}

std::string param_text(const Json& params) {
  std::string out;
  for (const auto& [key, value] : params.items())
    out += (out.empty() ? "" : " ") + key + "=" + value.dump();
  return out;
}

// "c0012", "c0000 (default)", "default".
std::string id_text(const Json& r) {
  const std::string id = r.value("id", std::string());
  return id + (r.value("default", false) && id != "default" ? " (default)" : "");
}

std::string csv_cell(std::string text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return out + "\"";
}

std::string md_cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::vector<const Json*> ranked(const std::vector<Json>& records) {
  std::vector<const Json*> ok;
  for (const Json& r : records)
    if (status_of(r) == "ok") ok.push_back(&r);
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Json* a, const Json* b) { return ratio_of(*a) > ratio_of(*b); });
  return ok;
}

// Ratios over the confirmation rounds, per configuration key.
struct Confirmed {
  std::vector<double> ratios;
  double median = 0, min = 0, max = 0;
};
std::map<std::string, Confirmed> confirmed(const SweepResults& results) {
  std::map<std::string, Confirmed> out;
  for (const Json& r : results.confirm)
    if (status_of(r) == "ok") out[r.value("key", "")].ratios.push_back(ratio_of(r));
  for (auto& [key, c] : out) {
    const TimingStats stats = summarize(c.ratios);  // median, min and max of any samples
    c.median = stats.median_s;
    c.min = stats.min_s;
    c.max = stats.max_s;
  }
  return out;
}

const Json* find_key(const SweepResults& results, const std::string& key) {
  for (const Json& r : results.records)
    if (r.value("key", "") == key) return &r;
  return nullptr;
}

std::string results_csv(const SweepResults& results) {
  std::vector<std::string> head = {"id", "phase", "round", "default", "status"};
  head.insert(head.end(), results.param_keys.begin(), results.param_keys.end());
  for (const char* c :
       {"solver",        "grid",         "precision",  "layout", "variant", "tile",
        "time_median_s", "time_min_s",   "time_max_s", "spread", "gbs",     "copy_gbs",
        "fom_ratio",     "mcells_per_s", "wall_s",     "device", "backend", "kokkos_version",
        "ranks",         "key",          "reason"})
    head.push_back(c);
  std::string out;
  for (std::size_t i = 0; i < head.size(); ++i) out += (i ? "," : "") + head[i];
  out += "\n";
  std::vector<const Json*> rows;
  for (const Json& r : results.records) rows.push_back(&r);
  for (const Json& r : results.confirm) rows.push_back(&r);
  for (const Json* r : rows) {
    std::vector<std::string> cells;
    for (const auto& column : head) {
      if (std::find(results.param_keys.begin(), results.param_keys.end(), column) !=
          results.param_keys.end()) {
        const Json& params = (*r)["params"];
        cells.push_back(params.contains(column) ? joined(params[column], " ") : "");
      } else if (column == "grid") {
        cells.push_back(joined(r->value("grid", Json()), "x"));
      } else if (column == "tile") {
        cells.push_back(joined(r->value("tile", Json()), " "));
      } else if (column == "round") {
        const int round = r->value("round", -1);
        cells.push_back(round < 0 ? "" : std::to_string(round));
      } else if (column == "default") {
        cells.push_back(r->value("default", false) ? "true" : "false");
      } else {
        const Json v = r->value(column, Json());
        cells.push_back(v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump());
      }
    }
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_cell(cells[i]);
    out += "\n";
  }
  return out;
}

std::string line_of(const Json& r) {
  return "**" + r.value("id", std::string()) + "** " + md_cell(param_text(r["params"])) + ": " +
         num("%.3f", ratio_of(r)) + " of copy, " + num("%.1f", r.value("gbs", 0.0)) +
         " GB/s, median " + num("%.4g", r.value("time_median_s", 0.0) * 1e3) + " ms (spread " +
         num("%.0f", 100 * r.value("spread", 0.0)) + "%)";
}

std::string report_md(const SweepResults& results, const Json* best,
                      const std::vector<std::string>& plots) {
  std::map<std::string, int> count;
  for (const Json& r : results.records) ++count[status_of(r)];
  const auto ok = ranked(results.records);
  const auto confirmations = confirmed(results);
  const Json* def = find_key(results, results.default_key);
  std::ostringstream md;
  md << "# Sweep " << results.name << ": " << results.solver << " on " << results.device << "\n\n"
     << results.backend << ", Kokkos " << results.kokkos_version << ", " << results.ranks
     << (results.ranks > 1 ? " ranks" : " rank") << "; strategy " << results.strategy << ". "
     << results.space_size << " configurations in the space (" << results.pruned
     << " more left out by sweep.restrict): " << count["ok"] << " verified and timed, "
     << count["WRONG"] << " WRONG, " << count["rejected"] << " rejected, " << count["error"]
     << " failed, " << results.not_run << " not run.\n\n"
     << "Each configuration is verified as `kstencil run` verifies before its time counts. The "
        "ratio is its figure of merit (GB/s) over the copy bandwidth measured in the same rounds "
        "of the same run; times are medians over the run's repeats, spread = (max - min) / "
        "median.\n\n";

  md << "## Best\n\n";
  if (!best) {
    md << "No configuration verified.\n\n";
  } else {
    md << line_of(*best) << ".\n\nIts deck: `best.toml` (`kstencil run best.toml`).\n\n";
    const auto b = confirmations.find(best->value("key", ""));
    const auto d = confirmations.find(results.default_key);
    if (b != confirmations.end() && d != confirmations.end() && best->value("default", false)) {
      md << "The default itself was fastest in the confirmation rounds.\n\n";
    } else if (b != confirmations.end() && d != confirmations.end()) {
      const bool overlap = b->second.min <= d->second.max && d->second.min <= b->second.max;
      md << "Confirmed over " << b->second.ratios.size()
         << " rounds in alternation with the default: median " << num("%.3f", b->second.median)
         << " (" << num("%.3f", b->second.min) << "-" << num("%.3f", b->second.max)
         << ") against the default's " << num("%.3f", d->second.median) << " ("
         << num("%.3f", d->second.min) << "-" << num("%.3f", d->second.max)
         << "): " << num("%.3f", b->second.median / d->second.median) << "x the default, "
         << (overlap ? "**within noise of the default** (the rounds' ranges overlap)"
                     : "outside the noise (the rounds' ranges do not overlap)")
         << ".\n\n";
    } else {
      md << "Not confirmed against the default (sweep.confirm = 0, the budget ran out, or the "
            "default did not verify).\n\n";
    }
  }

  if (!results.confirm.empty()) {
    md << "## Confirmation\n\nThe best configurations re-timed in rounds, each round the default "
          "first, then each candidate.\n\n| configuration | parameters | ratio per round | median "
          "| min-max | vs default |\n|---|---|---|---|---|---|\n";
    const auto d = confirmations.find(results.default_key);
    std::vector<std::pair<std::string, Confirmed>> order(confirmations.begin(),
                                                         confirmations.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.second.median > b.second.median;
    });
    for (const auto& [key, c] : order) {
      const Json* r = find_key(results, key);
      if (!r) continue;
      std::string rounds;
      for (const double x : c.ratios) rounds += (rounds.empty() ? "" : ", ") + num("%.3f", x);
      md << "| " << id_text(*r) << " | " << md_cell(param_text((*r)["params"])) << " | " << rounds
         << " | " << num("%.3f", c.median) << " | " << num("%.3f", c.min) << "-"
         << num("%.3f", c.max) << " | "
         << (d != confirmations.end() ? num("%.3f", c.median / d->second.median) + "x" : "-")
         << " |\n";
    }
    md << "\n";
  }

  md << "## The default\n\n";
  if (!def) {
    md << "Not run.\n\n";
  } else if (status_of(*def) != "ok") {
    md << "The deck as given: **" << status_of(*def)
       << "**: " << md_cell(def->value("reason", std::string())) << "\n\n";
  } else {
    const auto at = std::find(ok.begin(), ok.end(), def);
    md << "The deck as given (" << def->value("id", std::string()) << ") ranks "
       << (at - ok.begin()) + 1 << " of " << ok.size() << ": " << num("%.3f", ratio_of(*def))
       << " of copy, " << num("%.1f", def->value("gbs", 0.0)) << " GB/s.\n\n";
  }

  // Kokkos' own tile choice, per layout: what the sweep's best gains over it.
  std::map<std::string, std::pair<const Json*, const Json*>> by_layout;  // best, Kokkos default
  for (const Json* r : ok) {
    auto& entry = by_layout[r->value("layout", Json()).dump()];
    if (!entry.first) entry.first = r;
    if (!entry.second && r->value("kokkos_default_tile", false) &&
        r->value("variant", Json("mdrange")) != Json("line") &&
        r->value("variant", Json("mdrange")) != Json("blocked"))
      entry.second = r;
  }
  md << "## Against Kokkos' default tile\n\n";
  bool any = false;
  for (const auto& [layout, entry] : by_layout) {
    if (!entry.second) continue;
    any = true;
    md << "- layout " << layout << ": best " << entry.first->value("id", std::string()) << " "
       << num("%.3f", ratio_of(*entry.first)) << " against Kokkos' default tile ("
       << entry.second->value("id", std::string()) << ", kernel.tile = [0, 0, 0]) "
       << num("%.3f", ratio_of(*entry.second)) << ": "
       << num("%.2f", ratio_of(*entry.first) / ratio_of(*entry.second)) << "x\n";
  }
  if (!any)
    md << "No verified configuration with Kokkos' default tile in this sweep (kernel.tile = [0, 0, "
          "0] of a kernel that takes Kokkos' tile; line and blocked plan their own).";
  md << "\n\n";

  md << "## Best per layout and kernel\n\n| layout | kernel | precision | grid | best | ratio | "
        "GB/s | spread |\n|---|---|---|---|---|---|---|---|\n";
  std::set<std::string> seen;
  for (const Json* r : ok) {
    const std::string group =
        r->value("layout", Json()).dump() + r->value("variant", Json()).dump() +
        r->value("precision", Json()).dump() + r->value("grid", Json()).dump();
    if (!seen.insert(group).second) continue;
    md << "| " << joined(r->value("layout", Json()), "") << " | "
       << joined(r->value("variant", Json()), "") << " | "
       << joined(r->value("precision", Json()), "") << " | "
       << joined(r->value("grid", Json()), "x") << " | " << r->value("id", std::string()) << " "
       << md_cell(param_text((*r)["params"])) << " | " << num("%.3f", ratio_of(*r)) << " | "
       << num("%.1f", r->value("gbs", 0.0)) << " | " << num("%.0f", 100 * r->value("spread", 0.0))
       << "% |\n";
  }

  md << "\n## Verified configurations, fastest first\n\n| rank | id | parameters | kernel | tile | "
        "median ms | spread | GB/s | copy GB/s | ratio |\n|---|---|---|---|---|---|---|---|---|---|"
        "\n";
  const std::size_t shown = std::min<std::size_t>(ok.size(), 40);
  for (std::size_t i = 0; i < shown; ++i) {
    const Json& r = *ok[i];
    md << "| " << i + 1 << " | " << id_text(r) << " | " << md_cell(param_text(r["params"])) << " | "
       << joined(r.value("variant", Json()), "") << " | " << joined(r.value("tile", Json()), " ")
       << " | " << num("%.4g", r.value("time_median_s", 0.0) * 1e3) << " | "
       << num("%.0f", 100 * r.value("spread", 0.0)) << "% | " << num("%.1f", r.value("gbs", 0.0))
       << " | " << num("%.1f", r.value("copy_gbs", 0.0)) << " | " << num("%.3f", ratio_of(r))
       << " |\n";
  }
  if (ok.size() > shown) md << "\n" << ok.size() - shown << " more in results.csv.\n";

  for (const char* status : {"WRONG", "error", "rejected"}) {
    std::vector<const Json*> list;
    for (const Json& r : results.records)
      if (status_of(r) == status) list.push_back(&r);
    if (list.empty()) continue;
    md << "\n## " << status
       << (std::string(status) == "WRONG"      ? " (failed verification: never ranked)"
           : std::string(status) == "rejected" ? " (impossible on this device: never launched)"
                                               : " (failed to run)")
       << "\n\n| id | parameters | reason |\n|---|---|---|\n";
    const std::size_t listed = std::min<std::size_t>(list.size(), 50);
    for (std::size_t i = 0; i < listed; ++i)
      md << "| " << list[i]->value("id", std::string()) << " | "
         << md_cell(param_text((*list[i])["params"])) << " | "
         << md_cell(list[i]->value("reason", std::string())) << " |\n";
    if (list.size() > listed) md << "\n" << list.size() - listed << " more in results.csv.\n";
  }

  if (!results.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const auto& note : results.notes) md << "- " << note << "\n";
  }
  if (!plots.empty()) {
    md << "\n## Plots\n\n";
    for (const auto& p : plots) md << "![" << p << "](" << p << ")\n";
  }
  return md.str();
}

// argv: csv folder title. tiles.png: the best ratio per work-group tile (kernel.tile as asked for,
// 0 0 0 being Kokkos' default), one panel per layout (when the sweep varies kernel.tile);
// kernels.png: the best GB/s per kernel (and layout, precision, grid where they vary) as bars, with
// the same-run copy as each bar's ceiling line.
constexpr const char* plot_script = R"py(
import csv, math, os, sys
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib is not available")
path, out, title = sys.argv[1:4]
with open(path) as f:
    rows = [r for r in csv.DictReader(f) if r["status"] == "ok" and r["phase"] == "sweep"]
def save(fig, name):
    tmp = os.path.join(out, name + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, os.path.join(out, name))
    plt.close(fig)
# Where the sweep varies kernel.tile: the tile asked for (0 0 0: Kokkos' default).
tcol = "kernel.tile"
if rows and len({r.get(tcol) for r in rows if r.get(tcol)}) > 1:
    layouts = sorted({r["layout"] for r in rows})
    fig, axes = plt.subplots(1, len(layouts), figsize=(5.5 * len(layouts) + 1, 5), squeeze=False)
    top = max(float(r["fom_ratio"]) for r in rows)
    for ax, layout in zip(axes[0], layouts):
        best = {}
        for r in rows:
            if r["layout"] == layout and r[tcol]:
                t = tuple(int(v) for v in r[tcol].split())
                best[t] = max(best.get(t, 0.0), float(r["fom_ratio"]))
        xs = sorted({t[0] for t in best})
        yz = sorted({t[1:] for t in best})
        grid = [[best.get((x,) + p, math.nan) for x in xs] for p in yz]
        im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=0,
                       vmax=max(1.0, top))
        ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_yticks(range(len(yz)), [f"{a} x {b}" for a, b in yz])
        ax.set_xlabel("tile x (work items)")
        ax.set_ylabel("tile y x z")
        ax.set_title(f"layout {layout}")
        if len(xs) * len(yz) <= 120:
            for i, p in enumerate(yz):
                for j, x in enumerate(xs):
                    v = best.get((x,) + p)
                    if v is not None:
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                                color="white" if v < 0.6 * max(1.0, top) else "black")
        fig.colorbar(im, ax=ax, label="FOM / same-run copy")
    fig.suptitle(f"{title}: best ratio per work-group tile (x y z)")
    fig.tight_layout()
    save(fig, "tiles.png")
if rows:
    fields = [f for f in ("variant", "layout", "precision", "grid") if len({r[f] for r in rows}) > 1]
    groups = {}
    for r in rows:
        label = " ".join(r[f] for f in fields) or (r["variant"] or r["solver"])
        groups.setdefault(label, []).append(r)
    labels = list(groups)
    best = [max(float(r["gbs"]) for r in g) for g in groups.values()]
    copy = [sorted(float(r["copy_gbs"]) for r in g)[len(g) // 2] for g in groups.values()]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels) + 2), 4.5))
    ax.bar(range(len(labels)), best, color="tab:blue", label="best verified configuration")
    for i, c in enumerate(copy):
        ax.hlines(c, i - 0.45, i + 0.45, colors="tab:red", linewidth=2,
                  label="same-run copy" if i == 0 else None)
    ax.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 3 else 0, ha="right")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{title}: best per " + (" / ".join(fields) or "sweep"))
    ax.legend(loc="lower right")
    fig.tight_layout()
    save(fig, "kernels.png")
)py";

}  // namespace

std::vector<SweepRecord> parse_cache(const std::string& text) {
  std::vector<SweepRecord> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      out.push_back(SweepRecord::parse(line));
    } catch (const nlohmann::json::exception&) {
      // A line cut short by a kill: that configuration runs again.
    }
  }
  return out;
}

void append_record(const std::filesystem::path& path, const SweepRecord& record) {
  const std::string line = record.dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError("cannot append to " + path.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw OutputError("cannot append to " + path.string() + ": " + std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
}

const SweepRecord* best_record(const SweepResults& results) {
  const auto confirmations = confirmed(results);
  const SweepRecord* best = nullptr;
  double best_ratio = -1;
  for (const auto& [key, c] : confirmations) {
    const SweepRecord* r = find_key(results, key);
    if (r && status_of(*r) == "ok" && c.median > best_ratio) {
      best = r;
      best_ratio = c.median;
    }
  }
  if (best) return best;
  const auto ok = ranked(results.records);
  return ok.empty() ? nullptr : ok.front();
}

std::string write_sweep_files(const std::filesystem::path& dir, const SweepResults& results,
                              const std::function<std::string(const SweepRecord&)>& best_deck) {
  const SweepRecord* best = best_record(results);
  write_file_atomically(dir / "results.csv", results_csv(results));
  if (best) write_file_atomically(dir / "best.toml", best_deck(*best));
  std::string notes;
  if (const auto why = run_python(plot_script,
                                  {(dir / "results.csv").string(), dir.string(),
                                   results.name + " (" + results.device + ")"},
                                  "results.csv"))
    notes = "kstencil sweep: plots skipped: " + *why + "\n";
  std::vector<std::string> plots;
  for (const char* p : {"tiles.png", "kernels.png"})
    if (std::filesystem::exists(dir / p)) plots.push_back(p);
  write_file_atomically(dir / "report.md", report_md(results, best, plots));

  std::map<std::string, int> count;
  for (const SweepRecord& r : results.records) ++count[status_of(r)];
  std::string out = notes + "kstencil sweep " + results.name + ": " + std::to_string(count["ok"]) +
                    " verified, " + std::to_string(count["WRONG"]) + " WRONG, " +
                    std::to_string(count["rejected"]) + " rejected, " +
                    std::to_string(count["error"]) + " failed, " + std::to_string(results.not_run) +
                    " not run\n";
  if (best)
    out += "  best     " + best->value("id", std::string()) + " " + param_text((*best)["params"]) +
           ": " + num("%.3f", ratio_of(*best)) + " of copy, " +
           num("%.1f", best->value("gbs", 0.0)) + " GB/s -> best.toml\n";
  if (const SweepRecord* d = find_key(results, results.default_key))
    out += "  default  " + status_of(*d) +
           (status_of(*d) == "ok" ? ": " + num("%.3f", ratio_of(*d)) + " of copy, " +
                                        num("%.1f", d->value("gbs", 0.0)) + " GB/s"
                                  : std::string()) +
           "\n";
  out += "  files    " + dir.string() + "/{report.md, results.csv, results.jsonl";
  for (const auto& p : plots) out += ", " + p;
  out += best ? ", best.toml}\n" : "}\n";
  for (const auto& note : results.notes) out += "  note     " + note + "\n";
  return out;
}

}  // namespace kstencil
