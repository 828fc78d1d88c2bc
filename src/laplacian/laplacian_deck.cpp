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
       Key("grid", "nz", T::integer, "128", "grid points along z, boundary included").min(3)},
      spacing_keys(),
      {Key("kernel", "variant", T::string, R"("auto")",
           "kernel variant; auto = the backend's default configuration (ignores tile, "
           "launch_bounds, m, m_slow, blocks_per_item, parts, parts_in_one_launch, "
           "streaming_stores, zero_row_ends); "
           "line = one work item per m rows along y of m_slow planes, each row a whole line of "
           "the contiguous axis; tile = planes of the slowest axis by work items along y per "
           "tile, swept row block by row block through the planes (0 = Kokkos' default; ignores "
           "the contiguous axis' tile entry, iterate, launch_bounds, blocks_per_item, parts, "
           "parts_in_one_launch); march = one work "
           "item per block of m points along y, marching along the slowest axis through a slab "
           "(ignores iterate, m_slow, blocks_per_item, parts_in_one_launch, zero_row_ends and the "
           "slowest axis' tile "
           "entry); scratch = one thread team per tile of the contiguous axis x y, marching along "
           "the slowest axis through a slab and sharing each plane through team scratch memory; "
           "tile = the team's points along the contiguous axis and y and its slab's planes (0 = "
           "64 x 4 x 64), ignores iterate, launch_bounds, m, m_slow, blocks_per_item, "
           "parts_in_one_launch, zero_row_ends")
           .choices(
               {"auto", "mdrange", "register-blocked", "subdomain", "line", "march", "scratch"})},
      kernel_trait_keys(),
      {Key("kernel", "m", T::integer, "8",
           "points per work item along y (register-blocked, subdomain, march; rows for line)")
           .int_choices({1, 2, 4, 8, 16}),
       Key("kernel", "m_slow", T::integer, "1",
           "points per work item along the slowest axis (x in layout right, z in layout left) "
           "for register-blocked and subdomain: a work item updates an m x m_slow block (at most "
           "16 points) and shares the centre values between its points; line: planes per work "
           "item, whose rows an AVX-512 host updates together")
           .int_choices({1, 2, 4}),
       Key("kernel", "blocks_per_item", T::integer, "1",
           "register-blocked, subdomain: m x m_slow blocks a work item updates one after another "
           "along the slowest axis; the planes consecutive blocks share are read again from the "
           "L1 instead of the L2")
           .min(1),
       Key("kernel", "parts", T::integer_or_auto, R"("auto")",
           "subdomain, scratch: parts of the y range run one after another, auto = sized so "
           "the m_slow + 2 planes a subdomain work item reads fit in a quarter of the "
           "last-level cache, 1 for scratch (its teams march); march: slabs of the slowest "
           "axis, auto = enough work items to fill the device")
           .min(1),
       Key("kernel", "parts_in_one_launch", T::boolean, "true",
           "subdomain with m x m_slow > 1: all y parts in one launch, the part index folded "
           "into the slowest axis' policy dimension so that a GPU, which schedules that "
           "dimension last, still runs the parts one after another, without a launch's start "
           "and tail per part; false = one launch per part, as seed 000's kernel 7"),
       Key("kernel", "streaming_stores", T::boolean, "true",
           "register-blocked, subdomain, march, scratch, line: GPU stores of the result marked "
           "evict-first (CUDA st.global.cs, HIP non-temporal) so they leave the L2 to the "
           "input; line on x86 hosts with AVX: the whole cache lines of each row written with "
           "non-temporal stores (no read for ownership) and the input plane read first "
           "prefetched 4 KiB ahead; plain stores on other hosts"),
       Key("kernel", "zero_row_ends", T::boolean, "true",
           "register-blocked, subdomain, line: also store 0 at the boundary or halo point before "
           "and after each updated row along the contiguous axis, so that GPU stores write the "
           "row's first and last 32-byte sectors whole (a partly written sector costs a DRAM "
           "read) and, where the row with them fills whole cache lines, line on x86 hosts with "
           "AVX writes every line with non-temporal stores (a partial line's plain stores wait "
           "for the line to be read); false leaves every point outside the update range "
           "untouched")},
      {Key("laplacian", "field", T::string, R"("sine")",
           "input field u, written to the output; verification always also checks the quadratic "
           "field")
           .choices({"sine", "quadratic"})},
      output_keys(),
  });
  return schema;
}

}  // namespace kstencil
