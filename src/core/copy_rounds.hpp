#pragma once
// When the copy ceiling's slower copy stops being timed (timing.cpp; its tests).
#include <vector>

namespace kstencil::detail {

// Whether a copy whose rounds took `a` seconds each is beyond doubt slower than one whose rounds
// took `b`: after 3 rounds of each at least, `a`'s fastest is over a quarter slower than `b`'s
// median. Both run in the same rounds, so a machine's drift moves them together; the two copies
// of one device are either within a few percent (GPUs) or about 2x apart (hosts' deep_copy).
bool beyond_doubt_slower(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kstencil::detail
