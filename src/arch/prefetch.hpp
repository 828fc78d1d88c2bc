#pragma once
// What a host row's software prefetches of the streams it reads from memory do (kernel.prefetch,
// kernel.prefetch_into): how far ahead, and into which cache. Plain data, read by the plans,
// the reports and arch/'s kernels alike.
#include <optional>
#include <string>

namespace kstencil {

// l1: the line `bytes` ahead into the L1 (and the L2); l2: into the L2 only, so the L1 holds
// the lines the row reads now; both: into the L1 `bytes` ahead and into the L2 twice as far.
enum class PrefetchInto { l1, l2, both };

struct Prefetch {
  int bytes = 0;  // ahead of the point read; 0 = no software prefetch
  PrefetchInto into = PrefetchInto::l1;
};

inline const char* to_string(const PrefetchInto into) {
  switch (into) {
    case PrefetchInto::l2:
      return "l2";
    case PrefetchInto::both:
      return "both";
    case PrefetchInto::l1:
      break;
  }
  return "l1";
}

// "l1", "l2" or "both" (the deck key's checked values); nullopt for anything else.
inline std::optional<PrefetchInto> parse_prefetch_into(const std::string& word) {
  for (const PrefetchInto into : {PrefetchInto::l1, PrefetchInto::l2, PrefetchInto::both})
    if (word == to_string(into)) return into;
  return std::nullopt;
}

// The run report's words for a line kernel's prefetches.
inline std::string prefetch_words(const Prefetch& prefetch) {
  if (prefetch.bytes <= 0) return "no prefetch";
  const std::string ahead = std::to_string(prefetch.bytes) + " B ahead";
  switch (prefetch.into) {
    case PrefetchInto::l2:
      return "prefetch " + ahead + " into the L2";
    case PrefetchInto::both:
      return "prefetch " + ahead + " into the L1, " + std::to_string(2 * prefetch.bytes) +
             " B into the L2";
    case PrefetchInto::l1:
      break;
  }
  return "prefetch " + ahead;
}

}  // namespace kstencil
