#include "laplacian/laplacian_deck.hpp"

#include "core/deck_keys.hpp"

namespace kstencil {

const Schema& laplacian_schema() {
  using T = KeyType;
  static const Schema schema = join_keys({
      run_keys("laplacian"),
      {Key("run", "warmup", T::integer, "2",
           "untimed rounds (kernel, copies) before the timed ones")
           .min(0),
       Key("run", "repeats", T::integer, "10", "timed rounds: the kernel, then the same-run copies")
           .min(1)
           .max(100000)},
      {Key("grid", "nx", T::integer, "128", "grid points along x, boundary included").min(3),
       Key("grid", "ny", T::integer, "128", "grid points along y, boundary included").min(3),
       Key("grid", "nz", T::integer, "128",
           "grid points along z, boundary included; nx * ny * nz at most 2^48")
           .min(3)
           .deck_check([](const Deck& deck) { check_grid_points(deck, 0); })},
      spacing_keys(),
      {Key("kernel", "variant", T::string, R"("auto")",
           "kernel: mdrange = one point per work item (plain Kokkos); blocked = m x m_slow "
           "points per work item from registers, blocks_per_item blocks along the slowest axis, "
           "y in parts (seed 000's kernels 5 and 7); line = m rows of m_slow planes per work "
           "item, each row a whole line of the contiguous axis (vectorised on hosts); auto = "
           "blocked on GPUs, line on hosts")
           .choices({"auto", "mdrange", "blocked", "line"})
           .retired_choice("register-blocked", "renamed: use \"blocked\" (with parts = 1)")
           .retired_choice("subdomain", "renamed: use \"blocked\" (parts > 1 or \"auto\")")
           .retired_choice("march",
                           "retired: use \"blocked\", the GPU default (march's "
                           "figures are in docs/PERFORMANCE.md)")
           .retired_choice("scratch",
                           "retired: use \"blocked\", the GPU default (scratch's "
                           "figures are in docs/PERFORMANCE.md)")},
      kernel_trait_keys(true),
      {Key("kernel", "m", T::integer_or_auto, R"("auto")",
           "points per work item along y (blocked: rows of its register block; line: rows; "
           "mdrange: 1); auto = the kernel's default")
           .int_choices({1, 2, 4, 8, 16}),
       Key("kernel", "m_slow", T::integer_or_auto, R"("auto")",
           "points per work item along the slowest axis (x in layout right, z in layout left; "
           "blocked: at most 16 / m; line: planes, which an AVX2 or AVX-512 host updates together; "
           "mdrange: 1); auto = the kernel's default")
           .int_choices({1, 2, 4}),
       Key("kernel", "m_contiguous", T::integer_or_auto, R"("auto")",
           "blocked: points per work item along the contiguous axis (z in layout right, x in "
           "layout left), each load and store one access of that many values; 2 (either "
           "precision, m x m_slow of 4 or 8) and 4 (float: 16 bytes; 4 x 2) need streaming "
           "stores and an extent along that axis that is a multiple of them; others: 1; auto = "
           "on GPUs 4 in float where the rows hold whole quads, else 2 where they hold whole "
           "pairs, else 1")
           .int_choices({1, 2, 4}),
       blocks_per_item_key("blocked (others: 1)"),
       Key("kernel", "parts", T::integer_or_auto, R"("auto")",
           "blocked: parts of the y range run one after another (in one launch); auto = sized so "
           "the m_slow + 2 planes a work item reads fit in a quarter of the last-level cache; "
           "others: 1")
           .min(1),
       Key("kernel", "parts_in_one_launch", T::boolean, "true", "removed")
           .retired("blocked always runs its parts in one launch"),
       Key("kernel", "streaming_stores", T::boolean, "true",
           "blocked, line: results stored without displacing the input from caches: evict-first "
           "on GPUs (CUDA st.global.cs, HIP non-temporal), whole cache lines through "
           "non-temporal stores from line on x86 hosts with AVX; plain stores otherwise"),
       Key("kernel", "zero_row_ends", T::boolean, "true",
           "blocked, line: also store 0 at the boundary or halo point before and after each "
           "updated row along the contiguous axis, so rows are written in whole sectors (GPU) or "
           "whole cache lines (host); false leaves every point outside the update box "
           "untouched"),
       prefetch_key(), prefetch_into_key()},
      {Key("laplacian", "field", T::string, R"("sine")",
           "input field u, written to the output; verification always also checks the quadratic "
           "field")
           .choices({"sine", "quadratic"})},
      mpi_keys(),
      output_keys(),
  });
  return schema;
}

}  // namespace kstencil
